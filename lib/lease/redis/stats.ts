import { LeaseError } from "../errors";
import { HOLD_HISTOGRAM_BOUNDS_MS, LEASE_EVENT_KINDS, type CounterKind, type StatsBucket, type StatsQuery } from "../types";
import { resourcePrefix } from "../validation";
import { execPipeline, type RedisContext } from "./connection";
import { buildStatsKey, type BucketKeys } from "./keys";

/** 7 days of minutes, or 420 days of hours: beyond that a chart needs a coarser bucketMs. */
export const MAX_STATS_INTERVALS = 10_080;
export const DEFAULT_PREFIX_DEPTH = 2;
const CONTENDED_FIELD = "cp:";

const COUNTER_KINDS: readonly CounterKind[] = [...LEASE_EVENT_KINDS, "renewed"];

function emptyCounts(): Record<CounterKind, number> {
  return Object.fromEntries(COUNTER_KINDS.map((k) => [k, 0])) as Record<CounterKind, number>;
}

/**
 * Reads the per-minute or per-hour counter hashes the scripts maintain (one per
 * bucket and interval) in one pipeline, and sums them per interval. Intervals
 * are those whose start lies in [floor(from), to); empty ones are returned with
 * zeros so a chart's time axis has no holes.
 */
export async function readStats(ctx: RedisContext, bucketKeys: readonly BucketKeys[], query: StatsQuery): Promise<StatsBucket[]> {
  const unit = query.bucketMs === 60_000 ? "m" : "h";
  const depth = query.prefixDepth ?? DEFAULT_PREFIX_DEPTH;
  const first = Math.floor(query.from.getTime() / query.bucketMs);
  const last = Math.ceil(query.to.getTime() / query.bucketMs) - 1;
  if (last < first) return [];
  if (last - first + 1 > MAX_STATS_INTERVALS) {
    throw new LeaseError(`stats: ${last - first + 1} intervals requested; at most ${MAX_STATS_INTERVALS} per query (use a larger bucketMs)`);
  }

  const replies = await execPipeline(ctx, "stats", (p) => {
    for (let index = first; index <= last; index++) {
      for (const keys of bucketKeys) p.hgetall(buildStatsKey(keys, unit, index));
    }
  });

  const result: StatsBucket[] = [];
  let reply = 0;
  for (let index = first; index <= last; index++) {
    const bucket: StatsBucket = {
      start: new Date(index * query.bucketMs),
      counts: emptyCounts(),
      holdHistogram: new Array<number>(HOLD_HISTOGRAM_BOUNDS_MS.length + 1).fill(0),
      holdMsSum: 0,
      contendedByPrefix: {},
    };
    for (let b = 0; b < bucketKeys.length; b++) {
      const hash = (replies[reply++] ?? {}) as Record<string, string>;
      for (const [field, raw] of Object.entries(hash)) addField(bucket, field, Number(raw), depth);
    }
    result.push(bucket);
  }
  return result;
}

function addField(bucket: StatsBucket, field: string, value: number, depth: number): void {
  if (!Number.isFinite(value)) return;
  if (Object.hasOwn(bucket.counts, field)) {
    bucket.counts[field as CounterKind] += value;
  } else if (field === "holdSum") {
    bucket.holdMsSum += value;
  } else if (field.startsWith("hist:")) {
    const i = Number(field.slice(5));
    if (i >= 0 && i < bucket.holdHistogram.length) bucket.holdHistogram[i]! += value;
  } else if (field.startsWith(CONTENDED_FIELD)) {
    // Counted per 3-segment prefix; a shallower depth is the sum over its longer prefixes.
    const prefix = resourcePrefix(field.slice(CONTENDED_FIELD.length), depth);
    bucket.contendedByPrefix[prefix] = (bucket.contendedByPrefix[prefix] ?? 0) + value;
  }
}
