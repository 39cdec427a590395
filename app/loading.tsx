import { Skeleton } from "@/components/ui/skeleton";

/** Overview-shaped placeholder: tiles, the per-store table, then chart panels. */
export default function OverviewLoading() {
  return (
    <div role="status" aria-label="Loading the overview" className="space-y-5">
      <Skeleton className="h-8 w-72" />
      <div className="grid grid-cols-2 gap-3 sm:grid-cols-4 2xl:grid-cols-8">
        {Array.from({ length: 8 }, (_, i) => (
          <Skeleton key={i} className="h-20" />
        ))}
      </div>
      <Skeleton className="h-28" />
      <div className="grid grid-cols-1 gap-4 lg:grid-cols-2">
        {Array.from({ length: 5 }, (_, i) => (
          <Skeleton key={i} className={i === 4 ? "h-64 lg:col-span-2" : "h-64"} />
        ))}
      </div>
      <span className="sr-only">Loading…</span>
    </div>
  );
}
