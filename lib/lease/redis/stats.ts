import { LeaseError } from "../errors";
import { HOLD_HISTOGRAM_BOUNDS_MS, LEASE_EVENT_KINDS, type CounterKind, type StatsBucket, type StatsQuery } from "../types";
import { isGroupUnder } from "../prefix-groups";
import { resourcePrefix } from "../validation";
import { execPipeline, type RedisContext } from "./connection";
import { buildDayHoursKey, buildStatsKey, type BucketKeys } from "./keys";
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
/** Marks a day hours hash as complete (it exists even for a day without events); its value is how many buckets it sums. */
const MERGED_BUCKETS_FIELD = "mergedBuckets";

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
 * second round trip, for the days whose hours may still exist. Hour intervals of a closed day
 * read that day's namespace-wide hours hash (one hash for 24 hours × every bucket), falling back
 * the same way to the hour hashes when it is not written yet.
 */
export async function readStats(
  ctx: RedisContext,
  namespace: string,
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
  const addField: FieldAdder = prefix === undefined ? (bucket, field, value) => addStoreField(bucket, field, value, depth, prefixes) : (bucket, field, value) => addPrefixField(bucket, field, value, prefix);
  if (unit === "h") {
    await readHours(ctx, namespace, bucketKeys, first, last, nowMs, result, addField);
    return result;
  }
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
    addFlatHash(result[interval]!, hash, addField);
  });
  if (missingDays.length === 0) return result;
  const hours = await execPipeline(ctx, "stats", (p) => {
    for (const { interval, keys } of missingDays) {
      const firstHour = (first + interval) * HOURS_PER_DAY;
      for (let h = 0; h < HOURS_PER_DAY; h++) p.call(HGETALL_FLAT, buildStatsKey(keys, "h", firstHour + h));
    }
  });
  hours.forEach((hash, i) => addFlatHash(result[missingDays[Math.floor(i / HOURS_PER_DAY)]!.interval]!, hash, addField));
  return result;
}

type FieldAdder = (bucket: StatsBucket, field: string, value: number) => void;

/**
 * Hours `first`..`last` into `result` (one entry per hour from `first`): each closed day's
 * namespace-wide hours hash in one round trip with the open days' hour hashes; a closed day
 * whose hours hash is not written yet reads its hour hashes in a second.
 */
async function readHours(
  ctx: RedisContext,
  namespace: string,
  bucketKeys: readonly BucketKeys[],
  first: number,
  last: number,
  nowMs: number,
  result: StatsBucket[],
  addField: FieldAdder,
): Promise<void> {
  const firstDay = Math.floor(first / HOURS_PER_DAY);
  const lastDay = Math.floor(last / HOURS_PER_DAY);
  // A day hours hash exists only for a day compacted on the store's clock; this clock only picks which to look for.
  const closedDays: number[] = [];
  for (let day = firstDay; day <= lastDay && isClosedDay(day, nowMs); day++) closedDays.push(day);
  const firstOpenHour = Math.max(first, (firstDay + closedDays.length) * HOURS_PER_DAY);
  const replies = await execPipeline(ctx, "stats", (p) => {
    for (const day of closedDays) p.call(HGETALL_FLAT, buildDayHoursKey(namespace, day));
    for (let hour = firstOpenHour; hour <= last; hour++) for (const keys of bucketKeys) p.call(HGETALL_FLAT, buildStatsKey(keys, "h", hour));
  });
  const unmerged: number[] = [];
  closedDays.forEach((day, d) => {
    const pairs = replies[d];
    if (!isDayHoursHash(pairs, bucketKeys.length)) {
      for (let h = 0; h < HOURS_PER_DAY; h++) if (day * HOURS_PER_DAY + h >= first && day * HOURS_PER_DAY + h <= last) unmerged.push(day * HOURS_PER_DAY + h);
      return;
    }
    for (let j = 0; j + 1 < pairs.length; j += 2) {
      const field = String(pairs[j]);
      const bar = field.indexOf("|");
      if (bar === -1) continue;
      const hour = day * HOURS_PER_DAY + Number(field.slice(0, bar));
      if (hour >= first && hour <= last) addField(result[hour - first]!, field.slice(bar + 1), Number(pairs[j + 1]));
    }
  });
  const open = replies.slice(closedDays.length);
  open.forEach((hash, i) => addFlatHash(result[firstOpenHour + Math.floor(i / bucketKeys.length) - first]!, hash, addField));
  if (unmerged.length === 0) return;
  const hours = await execPipeline(ctx, "stats", (p) => {
    for (const hour of unmerged) for (const keys of bucketKeys) p.call(HGETALL_FLAT, buildStatsKey(keys, "h", hour));
  });
  hours.forEach((hash, i) => addFlatHash(result[unmerged[Math.floor(i / bucketKeys.length)]! - first]!, hash, addField));
}

/** Whether `day` ended long enough before `nowMs` for its hours to have been compacted. */
function isClosedDay(day: number, nowMs: number): boolean {
  return (day + 1) * DAY_MS + DAY_CLOSE_MARGIN_MS <= nowMs;
}

/** A day hours hash summed over as many buckets as the store has (its marker says how many). */
function isDayHoursHash(reply: unknown, buckets: number): reply is unknown[] {
  if (isEmptyFlat(reply)) return false;
  const pairs = reply as unknown[];
  for (let j = 0; j + 1 < pairs.length; j += 2) if (pairs[j] === MERGED_BUCKETS_FIELD) return Number(pairs[j + 1]) === buckets;
  return false;
}

export interface CompactResult {
  /** Day hashes and day hours hashes written by this call. */
  compacted: number;
  /** Closed days (within the hours' lifetime) still without a day hash in some bucket, or without their hours hash, after this call. */
  pending: number;
}

/**
 * Sums each closed day's 24 hour hashes, field by field, into one day hash per bucket
 * (`stats:d:<day>`, DAY_TTL_S after the day ends), so a 30-day chart reads 31 hashes per
 * bucket instead of 720; and the same hours, summed over the buckets but kept apart by hour,
 * into one hours hash for the namespace (`stats:hd:<day>`, as long as the hours live), so a
 * 7-day chart in hours reads one hash per closed day instead of 24 per bucket. A read model of a
 * read model: only for days that ended DAY_CLOSE_MARGIN_MS before `nowMs` (the store's clock)
 * with the projection caught up (`isCaughtUp`, the caller's), so their hours no longer change,
 * and only while the first hour of the day still exists. Writing the same sums twice (two
 * processes at once) is harmless. `done` remembers the days found compacted, so the steady
 * state costs nothing until the next day closes.
 */
export async function compactClosedDays(
  ctx: RedisContext,
  namespace: string,
  bucketKeys: readonly BucketKeys[],
  nowMs: number,
  done: Set<number>,
): Promise<CompactResult> {
  const candidates = daysToCompact(nowMs, done);
  if (candidates.length === 0) return { compacted: 0, pending: 0 };
  const exists = await execPipeline(ctx, "compactStats", (p) => {
    for (const day of candidates) {
      p.hget(buildDayHoursKey(namespace, day), MERGED_BUCKETS_FIELD);
      for (const keys of bucketKeys) p.exists(buildStatsKey(keys, "d", day));
    }
  });
  const stride = bucketKeys.length + 1;
  const missing: Array<{ day: number; absent: BucketKeys[]; isMerged: boolean }> = [];
  candidates.forEach((day, d) => {
    const isMerged = Number(exists[d * stride]) === bucketKeys.length;
    const absent = bucketKeys.filter((_, b) => Number(exists[d * stride + 1 + b]) !== 1);
    if (absent.length === 0 && isMerged) done.add(day);
    else missing.push({ day, absent, isMerged });
  });
  // Newest days first: those are the ones a chart shows.
  // Whole days only (every bucket's hours are read for the hours hash), at least one per call.
  const daysPerCall = Math.max(1, Math.floor(MAX_HOURS_READ_PER_COMPACTION / (HOURS_PER_DAY * bucketKeys.length)));
  const batch = missing.slice(0, daysPerCall);
  if (batch.length === 0) return { compacted: 0, pending: 0 };
  const hours = await execPipeline(ctx, "compactStats", (p) => {
    for (const { day } of batch) for (const keys of bucketKeys) for (let h = 0; h < HOURS_PER_DAY; h++) p.call(HGETALL_FLAT, buildStatsKey(keys, "h", day * HOURS_PER_DAY + h));
  });
  let compacted = 0;
  await execPipeline(ctx, "compactStats", (p) => {
    batch.forEach(({ day, absent, isMerged }, d) => {
      const byHour = new Map<string, number>();
      bucketKeys.forEach((keys, b) => {
        const sums = new Map<string, number>();
        let found = 0;
        for (let h = 0; h < HOURS_PER_DAY; h++) {
          const flat = hours[(d * bucketKeys.length + b) * HOURS_PER_DAY + h];
          if (isEmptyFlat(flat)) continue;
          found++;
          const pairs = flat as string[];
          for (let j = 0; j + 1 < pairs.length; j += 2) {
            const n = Number(pairs[j + 1]);
            if (!Number.isFinite(n)) continue;
            const field = pairs[j]!;
            sums.set(field, (sums.get(field) ?? 0) + n);
            const hourField = `${h}|${field}`;
            byHour.set(hourField, (byHour.get(hourField) ?? 0) + n);
          }
        }
        if (!absent.includes(keys)) return;
        const key = buildStatsKey(keys, "d", day);
        p.hset(key, COMPACTED_FIELD, found, ...[...sums].flat());
        p.expireat(key, (day + 1) * (DAY_MS / 1_000) + DAY_TTL_S);
        compacted++;
      });
      if (isMerged) return;
      const key = buildDayHoursKey(namespace, day);
      // One HSET: a reader sees every hour with the marker, or nothing.
      p.hset(key, ...[...byHour].flat(), MERGED_BUCKETS_FIELD, bucketKeys.length);
      p.expireat(key, (day + 1) * (DAY_MS / 1_000) + HOUR_TTL_S);
      compacted++;
    });
  });
  for (const { day } of batch) done.add(day);
  return { compacted, pending: missing.length - batch.length };
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

function addFlatHash(bucket: StatsBucket, reply: unknown, addField: FieldAdder): void {
  if (!Array.isArray(reply)) return;
  for (let i = 0; i + 1 < reply.length; i += 2) addField(bucket, String(reply[i]), Number(reply[i + 1]));
}

/** `prefixes` remembers each contention field's prefix at `depth` for the read: the same few recur in every hash. */
function addStoreField(bucket: StatsBucket, field: string, value: number, depth: number, prefixes: Map<string, string>): void {
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
 * A field that counts resources under `prefix`: `g|<kind>|<group>` and `gh|<hold bucket>|<group>`
 * of the groups under it (projector.ts, prefix-groups.ts), and contention per 3-segment name
 * (`cp:<name>`) for the names under it.
 */
function addPrefixField(bucket: StatsBucket, field: string, value: number, prefix: string): void {
  if (!Number.isFinite(value)) return;
  if (field.startsWith("g|")) {
    const bar = field.indexOf("|", 2);
    if (bar === -1 || !isGroupUnder(field.slice(bar + 1), prefix)) return;
    const kind = field.slice(2, bar);
    if (Object.hasOwn(bucket.counts, kind)) bucket.counts[kind as CounterKind] += value;
  } else if (field.startsWith("gh|")) {
    const bar = field.indexOf("|", 3);
    if (bar === -1 || !isGroupUnder(field.slice(bar + 1), prefix)) return;
    addToHistogram(bucket, Number(field.slice(3, bar)), value);
  } else if (field.startsWith(CONTENDED_FIELD)) {
    const name = field.slice(CONTENDED_FIELD.length);
    if (name.startsWith(prefix)) bucket.contendedByPrefix[name] = (bucket.contendedByPrefix[name] ?? 0) + value;
  }
}

function addToHistogram(bucket: StatsBucket, index: number, value: number): void {
  if (index >= 0 && index < bucket.holdHistogram.length) bucket.holdHistogram[index]! += value;
}
