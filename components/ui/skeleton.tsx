import { cx } from "./cx";

/** A placeholder block the size of the content to come, so nothing jumps when it arrives. */
export function Skeleton({ className }: { className?: string }) {
  return <div aria-hidden="true" className={cx("animate-pulse rounded bg-zinc-200 dark:bg-zinc-800", className ?? "h-4 w-full")} />;
}

/** Table-shaped skeleton: `rows` lines of `columns` cells. */
export function SkeletonRows({ rows = 8, columns = 6, label = "Loading" }: { rows?: number; columns?: number; label?: string }) {
  return (
    <div role="status" aria-label={label} className="space-y-2 py-2">
      {Array.from({ length: rows }, (_, r) => (
        <div key={r} className="flex gap-3">
          {Array.from({ length: columns }, (_, c) => (
            <Skeleton key={c} className="h-4 flex-1" />
          ))}
        </div>
      ))}
      <span className="sr-only">{label}…</span>
    </div>
  );
}

/** A list page's placeholder: its heading, its filter bar (if it has one), then the table. */
export function ListPageSkeleton({ heading, filters, rows, columns, label }: { heading: string; filters?: string; rows: number; columns: number; label: string }) {
  return (
    <div className="space-y-4">
      <Skeleton className={heading} />
      {filters ? <Skeleton className={filters} /> : null}
      <SkeletonRows rows={rows} columns={columns} label={label} />
    </div>
  );
}
