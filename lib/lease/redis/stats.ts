import { LeaseError } from "../errors";
import { HOLD_HISTOGRAM_BOUNDS_MS, LEASE_EVENT_KINDS, type CounterKind, type StatsBucket, type StatsQuery } from "../types";
import { isGroupUnder } from "../prefix-groups";
import { resourcePrefix } from "../validation";
import { execPipeline, type RedisContext } from "./connection";
import { buildStatsKey, type BucketKeys } from "./keys";
import { DAY_TTL_S, HOUR_TTL_S } from "./scripts";

/** 7 days of minutes, 420 days of hours or 10 080 days: beyond that a chart needs a coarser bucketMs. */
export const MAX_STATS_INTERVALS = 10_080;
export const DEFAULT_PREFIX_DEPTH = 2;
const CONTENDED_FIELD = "cp:";
/** A terminal event's counter: its kind and hold-histogram bucket in one field. */
const TERMINAL_FIELD = /^(released|expired|force_released):h(\d{1,2})$/;

const COUNTER_KINDS: readonly CounterKind[] = [...LEASE_EVENT_KINDS, "renewed"];

function emptyCounts(): Record<CounterKind, number> {
  return Object.fromEntries(COUNTER_KINDS.map((k) => [k, 0])) as Record<CounterKind, number>;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const HOURS_PER_DAY = 24;
/**
 * A day is compacted only once it ended this long ago on the store's clock, with every bucket's
 * projection caught up: no event of that day can still reach its hour hashes.
 */
export const DAY_CLOSE_MARGIN_MS = 5 * MINUTE_MS;
/**
 * Hour hashes one compaction call reads at most (24 per bucket and day; at least one whole day),
 * so no call does unbounded work whatever the bucket count: 10 days at the default 16 buckets.
 */
export const MAX_HOURS_READ_PER_COMPACTION = 4_096;
/** Marks a day hash as compacted (it exists even for a day without events); its value is how many hour hashes it sums. */
const COMPACTED_FIELD = "compactedHours";

/**
 * HGETALL under its upper-case name: ioredis turns a reply of `hgetall` into an object field by
 * field (a dictionary-mode object per hash), which was the largest cost of a 7-day hour read
 * (16 buckets × 168 hashes); the flat [field, value, …] reply is read in pairs instead.
 */
const HGETALL_FLAT = "HGETALL";

/**
 * Reads the counter hashes the projector maintains (one per bucket and minute or hour,
 * projector.ts) and sums them per interval. Intervals are those whose start lies in
 * [floor(from), to); empty ones are returned with zeros so a chart's time axis
 * has no holes. Each projected batch writes its minutes and hours in one atomic step.
 *
 * Day intervals read each bucket's day hash (compactClosedDays below); a day without one
 * (today, or a closed day not compacted yet) is summed from its hour hashes instead, in a
 * second round trip, for the days whose hours may still exist.
 */
export async function readStats(
  ctx: RedisContext,
  bucketKeys: readonly BucketKeys[],
  query: StatsQuery,
  nowMs = Date.now(),
  prefix?: string,
): Promise<StatsBucket[]> {
  const unit = query.bucketMs === DAY_MS ? "d" : query.bucketMs === HOUR_MS ? "h" : "m";
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

  const prefixes = new Map<string, string>();
  // Under a prefix: only the per-group fields of the groups under it (and its contention names).
  const addFlatHash = prefix === undefined ? addStoreHash : (bucket: StatsBucket, reply: unknown) => addPrefixHash(bucket, reply, prefix);
  const replies = await execPipeline(ctx, "stats", (p) => {
    for (let index = first; index <= last; index++) {
      for (const keys of bucketKeys) p.call(HGETALL_FLAT, buildStatsKey(keys, unit, index));
    }
  });
  const missingDays: Array<{ interval: number; keys: BucketKeys }> = [];
  replies.forEach((hash, i) => {
    const interval = Math.floor(i / bucketKeys.length);
    if (unit === "d" && isEmptyFlat(hash)) {
      const day = first + interval;
      // Hours older than their lifetime are gone: reading them would only cost round-trip time.
      if ((day + 1) * DAY_MS + HOUR_TTL_S * 1_000 > nowMs) missingDays.push({ interval, keys: bucketKeys[i % bucketKeys.length]! });
      return;
    }
    addFlatHash(result[interval]!, hash, depth, prefixes);
  });
  if (missingDays.length === 0) return result;
  const hours = await execPipeline(ctx, "stats", (p) => {
    for (const { interval, keys } of missingDays) {
      const firstHour = (first + interval) * HOURS_PER_DAY;
      for (let h = 0; h < HOURS_PER_DAY; h++) p.call(HGETALL_FLAT, buildStatsKey(keys, "h", firstHour + h));
    }
  });
  hours.forEach((hash, i) => addFlatHash(result[missingDays[Math.floor(i / HOURS_PER_DAY)]!.interval]!, hash, depth, prefixes));
  return result;
}

export interface CompactResult {
  /** Day hashes written by this call. */
  compacted: number;
  /** Closed days (within the hours' lifetime) still without a day hash in some bucket after this call. */
  pending: number;
}

/**
 * Sums each closed day's 24 hour hashes, field by field, into one day hash per bucket
 * (`stats:d:<day>`, DAY_TTL_S after the day ends), so a 30-day chart reads 31 hashes per
 * bucket instead of 720. A read model of a read model: only for days that ended
 * DAY_CLOSE_MARGIN_MS before `nowMs` (the store's clock) with the projection caught up
 * (`isCaughtUp`, the caller's), so their hours no longer change, and only while the first
 * hour of the day still exists. Writing the same sums twice (two processes at once) is
 * harmless. `done` remembers the days found compacted in every bucket, so the steady state
 * costs nothing until the next day closes.
 */
export async function compactClosedDays(
  ctx: RedisContext,
  bucketKeys: readonly BucketKeys[],
  nowMs: number,
  done: Set<number>,
): Promise<CompactResult> {
  const candidates = daysToCompact(nowMs, done);
  if (candidates.length === 0) return { compacted: 0, pending: 0 };
  const exists = await execPipeline(ctx, "compactStats", (p) => {
    for (const day of candidates) for (const keys of bucketKeys) p.exists(buildStatsKey(keys, "d", day));
  });
  const missing: Array<{ day: number; keys: BucketKeys }> = [];
  candidates.forEach((day, d) => {
    const absent = bucketKeys.filter((_, b) => Number(exists[d * bucketKeys.length + b]) !== 1);
    if (absent.length === 0) done.add(day);
    for (const keys of absent) missing.push({ day, keys });
  });
  // Newest days first: those are the ones a chart shows.
  // Whole days only (a day is done once every bucket has its hash), at least one per call.
  const daysPerCall = Math.max(1, Math.floor(MAX_HOURS_READ_PER_COMPACTION / (HOURS_PER_DAY * bucketKeys.length)));
  const daysNow = [...new Set(missing.map((m) => m.day))].slice(0, daysPerCall);
  const batch = missing.filter((m) => daysNow.includes(m.day));
  if (batch.length === 0) return { compacted: 0, pending: 0 };
  const hours = await execPipeline(ctx, "compactStats", (p) => {
    for (const { day, keys } of batch) for (let h = 0; h < HOURS_PER_DAY; h++) p.call(HGETALL_FLAT, buildStatsKey(keys, "h", day * HOURS_PER_DAY + h));
  });
  await execPipeline(ctx, "compactStats", (p) => {
    batch.forEach(({ day, keys }, i) => {
      const sums = new Map<string, number>();
      let found = 0;
      for (let h = 0; h < HOURS_PER_DAY; h++) {
        const flat = hours[i * HOURS_PER_DAY + h];
        if (isEmptyFlat(flat)) continue;
        found++;
        const pairs = flat as string[];
        for (let j = 0; j + 1 < pairs.length; j += 2) {
          const n = Number(pairs[j + 1]);
          if (Number.isFinite(n)) sums.set(pairs[j]!, (sums.get(pairs[j]!) ?? 0) + n);
        }
      }
      const key = buildStatsKey(keys, "d", day);
      p.hset(key, COMPACTED_FIELD, found, ...[...sums].flat());
      p.expireat(key, (day + 1) * (DAY_MS / 1_000) + DAY_TTL_S);
    });
  });
  for (const day of daysNow) done.add(day);
  const pendingDays = new Set(missing.map((m) => m.day));
  return { compacted: batch.length, pending: pendingDays.size - daysNow.length };
}

/** Closed days whose first hour hash still exists and that `done` does not hold, newest first. */
function daysToCompact(nowMs: number, done: ReadonlySet<number>): number[] {
  const lastClosed = Math.floor((nowMs - DAY_CLOSE_MARGIN_MS) / DAY_MS) - 1;
  const oldest = Math.ceil((nowMs - HOUR_TTL_S * 1_000) / DAY_MS) + 1;
  const days: number[] = [];
  for (let day = lastClosed; day >= oldest; day--) if (!done.has(day)) days.push(day);
  return days;
}

/** Whether compactClosedDays would look at any day: a check in memory, before any round trip. */
export function hasDaysToCompact(nowMs: number, done: ReadonlySet<number>): boolean {
  return daysToCompact(nowMs, done).length > 0;
}

function isEmptyFlat(reply: unknown): boolean {
  return !Array.isArray(reply) || reply.length === 0;
}

/** `prefixes` remembers each contention field's prefix at `depth` for the read: the same few recur in every hash. */
function addStoreHash(bucket: StatsBucket, reply: unknown, depth: number, prefixes: Map<string, string>): void {
  if (!Array.isArray(reply)) return;
  for (let i = 0; i + 1 < reply.length; i += 2) addField(bucket, String(reply[i]), Number(reply[i + 1]), depth, prefixes);
}

function addField(bucket: StatsBucket, field: string, value: number, depth: number, prefixes: Map<string, string>): void {
  if (!Number.isFinite(value)) return;
  if (Object.hasOwn(bucket.counts, field)) {
    bucket.counts[field as CounterKind] += value;
  } else if (field === "holdSum") {
    bucket.holdMsSum += value;
  } else if (field.startsWith(CONTENDED_FIELD)) {
    // Counted per 3-segment prefix; a shallower depth is the sum over its longer prefixes.
    let prefix = prefixes.get(field);
    if (prefix === undefined) {
      prefix = resourcePrefix(field.slice(CONTENDED_FIELD.length), depth);
      prefixes.set(field, prefix);
    }
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

/**
 * The fields of one hash that count resources under `prefix`: `g|<kind>|<group>` and
 * `gh|<hold bucket>|<group>` of the groups under it (projector.ts, prefix-groups.ts), and
 * contention per 3-segment name (`cp:<name>`) for the names under it.
 */
function addPrefixHash(bucket: StatsBucket, reply: unknown, prefix: string): void {
  if (!Array.isArray(reply)) return;
  for (let i = 0; i + 1 < reply.length; i += 2) {
    const field = String(reply[i]);
    const value = Number(reply[i + 1]);
    if (!Number.isFinite(value)) continue;
    if (field.startsWith("g|")) {
      const bar = field.indexOf("|", 2);
      if (bar === -1 || !isGroupUnder(field.slice(bar + 1), prefix)) continue;
      const kind = field.slice(2, bar);
      if (Object.hasOwn(bucket.counts, kind)) bucket.counts[kind as CounterKind] += value;
    } else if (field.startsWith("gh|")) {
      const bar = field.indexOf("|", 3);
      if (bar === -1 || !isGroupUnder(field.slice(bar + 1), prefix)) continue;
      addToHistogram(bucket, Number(field.slice(3, bar)), value);
    } else if (field.startsWith(CONTENDED_FIELD)) {
      const name = field.slice(CONTENDED_FIELD.length);
      if (name.startsWith(prefix)) bucket.contendedByPrefix[name] = (bucket.contendedByPrefix[name] ?? 0) + value;
    }
  }
}

function addToHistogram(bucket: StatsBucket, index: number, value: number): void {
  if (index >= 0 && index < bucket.holdHistogram.length) bucket.holdHistogram[index]! += value;
}
