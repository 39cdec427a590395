import { cx } from "@/components/ui/cx";
import { formatNumber } from "@/lib/console/shared/format";
import { CLOSE_CALL_FRACTION, SLACK_BUCKET_COUNT } from "@leasewatch/lease/model";

const CLOSE_BUCKETS = Math.round(CLOSE_CALL_FRACTION * SLACK_BUCKET_COUNT);
const pct = (i: number) => Math.round((i * 100) / SLACK_BUCKET_COUNT);

/**
 * A small histogram of renewal slack (share of the TTL left when the renewal
 * arrived), 0 % on the left. Close calls are amber *and* hatched and named in the
 * legend, so they read without colour; every bar says its range and count on hover,
 * and the figure's label sums it up for screen readers.
 */
export function SlackHistogram({
  histogram,
  closeCalls,
  renewals,
  isCompact = false,
  className,
}: {
  histogram: number[];
  closeCalls: number;
  renewals: number;
  /** A table cell's sparkline: shorter, without axis and legend. */
  isCompact?: boolean;
  className?: string;
}) {
  const max = Math.max(1, ...histogram);
  const label = `Renewal slack: ${formatNumber(renewals)} renewals, ${formatNumber(closeCalls)} close calls with under ${pct(CLOSE_BUCKETS)} % of the TTL left`;
  return (
    <figure className={cx("min-w-0", className)}>
      <div role="img" aria-label={label} className={cx("flex items-end gap-px border-b border-zinc-300 dark:border-zinc-700", isCompact ? "h-8" : "h-20")}>
        {histogram.map((n, i) => {
          const isClose = i < CLOSE_BUCKETS;
          return (
            <div
              key={i}
              title={isCompact ? undefined : `${pct(i)}–${pct(i + 1)} % left: ${formatNumber(n)} renewals`}
              className={cx(
                "flex-1 rounded-t-sm",
                isClose
                  ? "bg-amber-500 bg-[repeating-linear-gradient(45deg,transparent_0_3px,rgba(0,0,0,0.25)_3px_5px)] dark:bg-amber-400"
                  : "bg-sky-600 dark:bg-sky-400",
              )}
              style={{ height: n > 0 ? `${Math.max(4, (n / max) * 100)}%` : 0 }}
            />
          );
        })}
      </div>
      {isCompact ? null : (
        <>
      <div aria-hidden="true" className="mt-1 flex justify-between text-[11px] text-zinc-500 dark:text-zinc-400">
        <span>0 % left</span>
        <span>ttl/3 due ≈ 67 %</span>
        <span>100 %</span>
      </div>
      <figcaption className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
        <span className="mr-1 inline-block size-2 rounded-sm bg-amber-500" aria-hidden="true" />
        close call (under {pct(CLOSE_BUCKETS)} % left)
        <span className="ml-3 mr-1 inline-block size-2 rounded-sm bg-sky-600 dark:bg-sky-400" aria-hidden="true" />
        in time
      </figcaption>
        </>
      )}
    </figure>
  );
}
