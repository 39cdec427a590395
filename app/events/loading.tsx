import { Skeleton, SkeletonRows } from "@/components/ui/skeleton";

export default function EventsLoading() {
  return (
    <div className="space-y-4">
      <Skeleton className="h-6 w-32" />
      <Skeleton className="h-28 w-full" />
      <SkeletonRows rows={14} columns={8} label="Loading events" />
    </div>
  );
}
