import { cx } from "@/components/ui/cx";

/**
 * A titled chart panel. Sets the CSS variables the charts' chrome uses, so grid,
 * ticks and tooltips follow light/dark mode. `summary` is a one-line reading of
 * the chart for screen readers and for anyone who wants the number, not the shape.
 */
export function ChartFrame({
  title,
  subtitle,
  summary,
  isEmpty,
  emptyText,
  className,
  children,
}: {
  title: string;
  subtitle?: string;
  summary: string;
  isEmpty?: boolean;
  emptyText?: string;
  className?: string;
  children: React.ReactNode;
}) {
  return (
    <figure
      className={cx(
        "relative rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900/40",
        "[--chart-bg:#ffffff] [--chart-border:#d4d4d8] [--chart-fg:#18181b] [--chart-grid:#e4e4e7] [--chart-muted:#52525b]",
        "dark:[--chart-bg:#18181b] dark:[--chart-border:#3f3f46] dark:[--chart-fg:#f4f4f5] dark:[--chart-grid:#27272a] dark:[--chart-muted:#a1a1aa]",
        className,
      )}
    >
      <figcaption className="mb-2 flex flex-wrap items-baseline justify-between gap-x-3">
        <span className="text-sm font-semibold">{title}</span>
        {subtitle ? <span className="text-xs text-zinc-500 dark:text-zinc-400">{subtitle}</span> : null}
        <span className="sr-only">{summary}</span>
      </figcaption>
      <div className="relative h-52" data-chart={title}>
        {children}
        {isEmpty ? (
          <p className="pointer-events-none absolute inset-0 flex items-center justify-center text-sm text-zinc-500 dark:text-zinc-400">
            {emptyText ?? "Nothing recorded in this window"}
          </p>
        ) : null}
      </div>
    </figure>
  );
}
