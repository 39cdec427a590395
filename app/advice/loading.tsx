import { Skeleton, SkeletonRows } from "@/components/ui/skeleton";

export default function AdviceLoading() {
  return (
    <div className="space-y-4">
      <Skeleton className="h-6 w-32" />
      <Skeleton className="h-16 w-full" />
      <SkeletonRows rows={8} columns={9} label="Loading TTL advice" />
    </div>
  );
}
