import { Skeleton, SkeletonRows } from "@/components/ui/skeleton";

export default function LeasesLoading() {
  return (
    <div className="space-y-4">
      <Skeleton className="h-6 w-32" />
      <Skeleton className="h-16 w-full" />
      <SkeletonRows rows={12} columns={8} label="Loading leases" />
    </div>
  );
}
