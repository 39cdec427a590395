import { LeaseError } from "../errors";
import { HOLD_HISTOGRAM_BOUNDS_MS, LEASE_EVENT_KINDS, type CounterKind, type StatsBucket, type StatsQuery } from "../types";
import { resourcePrefix } from "../validation";
import { execPipeline, type RedisContext } from "./connection";
import { buildStatsKey, type BucketKeys } from "./keys";

/** 7 days of minutes, or 420 days of hours: beyond that a chart needs a coarser bucketMs. */
export const MAX_STATS_INTERVALS = 10_080;
export const DEFAULT_PREFIX_DEPTH = 2;
const CONTENDED_FIELD = "cp:";
/** A terminal event's counter: its kind and hold-histogram bucket in one field. */
const TERMINAL_FIELD = /^(released|expired|force_released):h(\d{1,2})$/;

const COUNTER_KINDS: readonly CounterKind[] = [...LEASE_EVENT_KINDS, "renewed"];

function emptyCounts(): Record<CounterKind, number> {
  return Object.fromEntries(COUNTER_KINDS.map((k) => [k, 0])) as Record<CounterKind, number>;
}

/**
 * Reads the counter hashes the projector maintains (one per bucket and minute or hour,
 * projector.ts) and sums them per interval. Intervals are those whose start lies in
 * [floor(from), to); empty ones are returned with zeros so a chart's time axis
 * has no holes. Each projected batch writes its minutes and hours in one atomic step.
 */
export async function readStats(ctx: RedisContext, bucketKeys: readonly BucketKeys[], query: StatsQuery): Promise<StatsBucket[]> {
  const isHours = query.bucketMs !== 60_000;
  const depth = query.prefixDepth ?? DEFAULT_PREFIX_DEPTH;
  const first = Math.floor(query.from.getTime() / query.bucketMs);
  const last = Math.ceil(query.to.getTime() / query.bucketMs) - 1;
  if (last < first) return [];
  if (last - first + 1 > MAX_STATS_INTERVALS) {
    throw new LeaseError(`stats: ${last - first + 1} intervals requested; at most ${MAX_STATS_INTERVALS} per query (use a larger bucketMs)`);
  }
  const result: StatsBucket[] = [];
  for (let index = first; index <= last; index++) {
    result.push({
      start: new Date(index * query.bucketMs),
      counts: emptyCounts(),
      holdHistogram: new Array<number>(HOLD_HISTOGRAM_BOUNDS_MS.length + 1).fill(0),
      holdMsSum: 0,
      contendedByPrefix: {},
    });
  }

  const unit = isHours ? "h" : "m";
  const replies = await execPipeline(ctx, "stats", (p) => {
    for (let index = first; index <= last; index++) {
      for (const keys of bucketKeys) p.hgetall(buildStatsKey(keys, unit, index));
    }
  });
  replies.forEach((hash, i) => addHash(result[Math.floor(i / bucketKeys.length)]!, hash, depth));
  return result;
}

function addHash(bucket: StatsBucket, hash: unknown, depth: number): void {
  for (const [field, raw] of Object.entries((hash ?? {}) as Record<string, string>)) addField(bucket, field, Number(raw), depth);
}

function addField(bucket: StatsBucket, field: string, value: number, depth: number): void {
  if (!Number.isFinite(value)) return;
  if (Object.hasOwn(bucket.counts, field)) {
    bucket.counts[field as CounterKind] += value;
  } else if (field === "holdSum") {
    bucket.holdMsSum += value;
  } else if (field.startsWith(CONTENDED_FIELD)) {
    // Counted per 3-segment prefix; a shallower depth is the sum over its longer prefixes.
    const prefix = resourcePrefix(field.slice(CONTENDED_FIELD.length), depth);
    bucket.contendedByPrefix[prefix] = (bucket.contendedByPrefix[prefix] ?? 0) + value;
  } else if (field.startsWith("hist:")) {
    // Older layout (and the demo seeder): kind counts and the histogram in separate fields.
    addToHistogram(bucket, Number(field.slice(5)), value);
  } else {
    const terminal = TERMINAL_FIELD.exec(field);
    if (terminal) {
      bucket.counts[terminal[1] as CounterKind] += value;
      addToHistogram(bucket, Number(terminal[2]), value);
    }
  }
}

function addToHistogram(bucket: StatsBucket, index: number, value: number): void {
  if (index >= 0 && index < bucket.holdHistogram.length) bucket.holdHistogram[index]! += value;
}
