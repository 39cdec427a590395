"use client";
import { cx } from "./cx";
import { formatDuration, formatUtc } from "./format";
import { useNow } from "./use-now";

/**
 * Time left until `to` ("12 s", "1 min 20 s"), ticking each second; past zero it
 * says `expiredLabel` instead of counting negative. Urgent (amber) below
 * `warnBelowMs`. Exact UTC on hover.
 */
export function Countdown({
  to,
  clockOffsetMs = 0,
  warnBelowMs,
  expiredLabel = "expired",
  className,
}: {
  to: Date | string | number;
  clockOffsetMs?: number;
  warnBelowMs?: number;
  expiredLabel?: string;
  className?: string;
}) {
  const now = useNow();
  const target = new Date(to);
  const left = target.getTime() - (now + clockOffsetMs);
  const isExpired = left <= 0;
  const isUrgent = !isExpired && warnBelowMs !== undefined && left < warnBelowMs;
  return (
    <time
      dateTime={target.toISOString()}
      title={formatUtc(target)}
      suppressHydrationWarning
      className={cx(
        "tabular-nums",
        isExpired && "text-red-700 dark:text-red-300",
        isUrgent && "text-amber-700 dark:text-amber-300",
        className,
      )}
    >
      {isExpired ? expiredLabel : `in ${formatDuration(left)}`}
    </time>
  );
}
