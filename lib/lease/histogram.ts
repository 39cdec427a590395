import { HOLD_HISTOGRAM_BOUNDS_MS } from "./types";

/** Index of the first bound >= holdMs; HOLD_HISTOGRAM_BOUNDS_MS.length for the +Inf bucket. */
export function holdBucketIndex(holdMs: number): number {
  for (let i = 0; i < HOLD_HISTOGRAM_BOUNDS_MS.length; i++) {
    if (holdMs <= HOLD_HISTOGRAM_BOUNDS_MS[i]!) return i;
  }
  return HOLD_HISTOGRAM_BOUNDS_MS.length;
}

/**
 * Estimate a quantile (0..1) from bucket counts by linear interpolation inside
 * the bucket that contains it. Returns null when there are no samples.
 */
export function histogramQuantile(counts: readonly number[], q: number): number | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    const c = counts[i] ?? 0;
    if (c > 0 && seen + c >= rank) {
      const lo = i === 0 ? 0 : HOLD_HISTOGRAM_BOUNDS_MS[i - 1]!;
      const hi = HOLD_HISTOGRAM_BOUNDS_MS[i] ?? lo * 2;
      return lo + ((hi - lo) * (rank - seen)) / c;
    }
    seen += c;
  }
  return HOLD_HISTOGRAM_BOUNDS_MS[HOLD_HISTOGRAM_BOUNDS_MS.length - 1]!;
}
