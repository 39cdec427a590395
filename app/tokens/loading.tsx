import { Skeleton, SkeletonRows } from "@/components/ui/skeleton";

export default function TokensLoading() {
  return (
    <div className="space-y-4">
      <Skeleton className="h-10 w-96" />
      <SkeletonRows rows={6} columns={8} label="Loading the API tokens" />
    </div>
  );
}
