"use client";
import { formatRelative, formatUtc } from "./format";
import { useNow } from "./use-now";

/**
 * "in 4 s" / "3 min ago", ticking each second; the exact UTC time on hover.
 * `clockOffsetMs` (store clock minus browser clock, measured when the data
 * arrived) keeps it on the store's clock.
 */
export function RelativeTime({
  value,
  clockOffsetMs = 0,
  className,
}: {
  value: Date | string | number;
  clockOffsetMs?: number;
  className?: string;
}) {
  const now = useNow();
  const iso = new Date(value).toISOString();
  return (
    <time dateTime={iso} title={formatUtc(value)} className={className} suppressHydrationWarning>
      {formatRelative(value, now + clockOffsetMs)}
    </time>
  );
}
