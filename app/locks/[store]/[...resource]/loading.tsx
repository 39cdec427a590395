import { Skeleton, SkeletonRows } from "@/components/ui/skeleton";

export default function LeaseLoading() {
  return (
    <div className="space-y-4">
      <Skeleton className="h-4 w-48" />
      <Skeleton className="h-7 w-96" />
      <Skeleton className="h-24 w-full" />
      <Skeleton className="h-40 w-full" />
      <SkeletonRows rows={8} columns={7} label="Loading the lease" />
    </div>
  );
}
