/**
 * Number formatting for the console's tiles and charts, shared by read models
 * and client components (pure, no server imports). Times and durations use
 * components/ui/format.
 */

const HOUR = 3_600_000;

/** 0.1234 → "12.3 %"; null (no denominator) → "—". */
export function formatPercent(value: number | null): string {
  if (value === null || !Number.isFinite(value)) return "—";
  const pct = value * 100;
  return `${pct < 10 ? pct.toFixed(1) : Math.round(pct)} %`;
}

/** A ratio such as expired/released: "0.25", or "—" when undefined. */
export function formatRatio(value: number | null): string {
  if (value === null || !Number.isFinite(value)) return "—";
  return value < 10 ? value.toFixed(2) : String(Math.round(value));
}

const NUMBER = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 });

export function formatNumber(value: number): string {
  return NUMBER.format(value);
}

const SMALL_RATE = new Intl.NumberFormat("en-US", { maximumSignificantDigits: 2 });

/** A rate such as acquisitions per minute: one decimal, but a slow rate is never shown as a bare "0". */
export function formatRate(value: number): string {
  return value > 0 && value < 0.1 ? SMALL_RATE.format(value) : NUMBER.format(value);
}

/** Axis label for a bucket start: "14:05" for minute buckets, "Apr 3 14:00" for hours (UTC). */
export function formatBucketTime(t: number, bucketMs: number): string {
  const d = new Date(t);
  const hhmm = d.toISOString().slice(11, 16);
  if (bucketMs < HOUR) return hhmm;
  const month = d.toLocaleString("en-US", { month: "short", timeZone: "UTC" });
  return `${month} ${d.getUTCDate()} ${hhmm}`;
}

/** A histogram bound: 10 → "10 ms", 2500 → "2.5 s", 60000 → "1 min", 3600000 → "1 h". */
export function formatBound(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 60_000) return `${ms / 1_000} s`;
  if (ms < HOUR) return `${ms / 60_000} min`;
  return `${ms / HOUR} h`;
}

/** Compact duration for chart axes: "250ms", "2.5s", "30s", "5m", "1h". */
export function formatAxisDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${Number((ms / 1_000).toPrecision(2))}s`;
  if (ms < HOUR) return `${Number((ms / 60_000).toPrecision(2))}m`;
  return `${Number((ms / HOUR).toPrecision(2))}h`;
}

const COMPACT = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

/** Axis ticks: 950 → "950", 4500 → "4.5K", 1200000 → "1.2M". */
export function formatCompact(value: number): string {
  return COMPACT.format(value);
}
