import { LeaseError } from "../errors";
import { HOLD_HISTOGRAM_BOUNDS_MS, LEASE_EVENT_KINDS, type CounterKind, type StatsBucket, type StatsQuery } from "../types";
import { isGroupUnder } from "../prefix-groups";
import { resourcePrefix } from "../validation";
import { execPipeline, type RedisContext } from "./connection";
import { buildHourContentionKey, buildStatsKey, buildStoreWideStatsHashKey, buildStoreWideStatsKey, type BucketKeys } from "./keys";
import { DAY_TTL_S, HOUR_TTL_S } from "./scripts";

/** 7 days of minutes, 420 days of hours or 10 080 days: beyond that a chart needs a coarser bucketMs. */
export const MAX_STATS_INTERVALS = 10_080;
export const DEFAULT_PREFIX_DEPTH = 2;
const CONTENDED_FIELD = "cp:";
const TERMINAL_KINDS = ["released", "expired", "force_released"] as const;
/** A terminal event's counter: its kind and hold-histogram bucket in one field. */
const TERMINAL_FIELD = new RegExp(`^(${TERMINAL_KINDS.join("|")}):h(\\d{1,2})$`);

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
/** Marks a store-wide sum as complete (it exists even for an interval without events); its value is how many buckets it sums. */
const STORE_WIDE_BUCKETS_FIELD = "buckets";

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
 * later round trip, for the days whose hours may still exist. Not under a prefix, a closed hour
 * or day reads its one store-wide sum instead (compactStoreWide below), and its buckets' hashes
 * only while that is not written yet.
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
  // Closed hours and days not under a prefix: one store-wide sum each (compactStoreWide), read
  // with the open intervals' bucket hashes; those not summed yet read their buckets' hashes next.
  const storeWideUnit = prefix === undefined && unit !== "m" ? unit : null;
  const storeWideUntil = storeWideUnit ? Math.min(last + 1, firstUnclosed(storeWideUnit, nowMs)) : first;
  const closed = Math.max(0, storeWideUntil - first);
  // An open day (today) has no day hashes yet: its hours are read, most of them store-wide.
  const openDaysByHour = storeWideUnit === "d" ? last - (first + closed) + 1 : 0;
  const isStoreWide = prefix === undefined;
  /** Each bucket's hash of each interval, bucket by bucket within an interval. */
  const bucketHashes = (intervals: readonly number[]) =>
    readBucketHashes(ctx, intervals.flatMap((index) => bucketKeys.map((keys) => ({ keys, index }))), unit, isStoreWide);
  const openIntervals: number[] = [];
  if (openDaysByHour === 0) for (let index = first + closed; index <= last; index++) openIntervals.push(index);
  const [replies, openReplies, openDays] = await Promise.all([
    closed > 0
      ? execPipeline(ctx, "stats", (p) => {
          for (let index = first; index < storeWideUntil; index++) p.get(buildStoreWideStatsKey(namespace, storeWideUnit!, index));
        })
      : [],
    bucketHashes(openIntervals),
    openDaysByHour > 0
      ? readStats(ctx, namespace, bucketKeys, { from: new Date((first + closed) * DAY_MS), to: new Date((last + 1) * DAY_MS), bucketMs: HOUR_MS, prefixDepth: depth }, nowMs)
      : [],
  ]);
  for (const hour of openDays) addBucket(result[closed + Math.floor((hour.start.getTime() - (first + closed) * DAY_MS) / DAY_MS)]!, hour);
  // Intervals without the string: the hash an earlier version wrote, else (below) their buckets' hashes.
  const withoutString: number[] = [];
  for (let i = 0; i < closed; i++) {
    const sums = parseStoreWideSums(replies[i]);
    if (storeWideBuckets(sums) === bucketKeys.length) addFlatHash(result[i]!, sums, addField);
    else withoutString.push(i);
  }
  const perBucket: number[] = [];
  if (withoutString.length > 0) {
    const hashes = await execPipeline(ctx, "stats", (p) => {
      for (const i of withoutString) p.call(HGETALL_FLAT, buildStoreWideStatsHashKey(namespace, storeWideUnit!, first + i));
    });
    withoutString.forEach((i, k) => {
      if (storeWideBuckets(hashes[k]) === bucketKeys.length) addFlatHash(result[i]!, hashes[k], addField);
      else perBucket.push(i);
    });
  }
  const missingDays: Array<{ interval: number; keys: BucketKeys }> = [];
  const addBucketReplies = (intervals: (j: number) => number, bucketReplies: unknown[]) =>
    bucketReplies.forEach((hash, j) => {
      const interval = intervals(Math.floor(j / bucketKeys.length));
      if (unit === "d" && isEmptyFlat(hash)) {
        const day = first + interval;
        // Hours older than their lifetime are gone: reading them would only cost round-trip time.
        if ((day + 1) * DAY_MS + HOUR_TTL_S * 1_000 > nowMs) missingDays.push({ interval, keys: bucketKeys[j % bucketKeys.length]! });
        return;
      }
      addFlatHash(result[interval]!, hash, addField);
    });
  addBucketReplies((k) => closed + k, openReplies);
  if (perBucket.length > 0) addBucketReplies((k) => perBucket[k]!, await bucketHashes(perBucket.map((interval) => first + interval)));
  if (missingDays.length === 0) return result;
  const hours = await readBucketHashes(
    ctx,
    missingDays.flatMap(({ interval, keys }) => Array.from({ length: HOURS_PER_DAY }, (_, h) => ({ keys, index: (first + interval) * HOURS_PER_DAY + h }))),
    "h",
    isStoreWide,
  );
  hours.forEach((hash, i) => addFlatHash(result[missingDays[Math.floor(i / HOURS_PER_DAY)]!.interval]!, hash, addField));
  return result;
}

type FieldAdder = (bucket: StatsBucket, field: string, value: number) => void;

const HOLD_BUCKETS = Array.from({ length: HOLD_HISTOGRAM_BOUNDS_MS.length + 1 }, (_, i) => i);
/**
 * Every field of an hour's bucket hash that a read not under a prefix adds up (addStoreField),
 * but contention per name: the counters, holds per bucket and their sum, and the older layout's
 * histogram.
 */
const HOUR_COUNTER_FIELDS: readonly string[] = [
  ...COUNTER_KINDS,
  ...TERMINAL_KINDS.flatMap((kind) => HOLD_BUCKETS.map((i) => `${kind}:h${i}`)),
  "holdSum",
  ...HOLD_BUCKETS.map((i) => `hist:${i}`),
];
const CONTENDED_AT = HOUR_COUNTER_FIELDS.indexOf("contended");

/**
 * Bucket hashes (`unit`) as flat [field, value, …] lists, in the order of `targets`. Not under a
 * prefix, an hour's hash is read without its per-group fields, most of a busy hour's (one
 * tenant's group after another): its counters by HMGET (HOUR_COUNTER_FIELDS) and its contention
 * per name from the hour's contention hash, which the projector writes in the same step. That
 * hash is whole when its counts add up to the hour's `contended` counter; an hour counted
 * without it (by an earlier version, or a seed) is read whole instead, in a second round trip.
 */
async function readBucketHashes(
  ctx: RedisContext,
  targets: ReadonlyArray<{ keys: BucketKeys; index: number }>,
  unit: "m" | "h" | "d",
  isStoreWide: boolean,
  operation = "stats",
): Promise<unknown[]> {
  if (targets.length === 0) return [];
  if (unit !== "h" || !isStoreWide) {
    return execPipeline(ctx, operation, (p) => {
      for (const { keys, index } of targets) p.call(HGETALL_FLAT, buildStatsKey(keys, unit, index));
    });
  }
  const replies = await execPipeline(ctx, operation, (p) => {
    for (const { keys, index } of targets) {
      p.hmget(buildStatsKey(keys, "h", index), ...HOUR_COUNTER_FIELDS);
      p.call(HGETALL_FLAT, buildHourContentionKey(keys, index));
    }
  });
  const flats: unknown[] = [];
  const whole: number[] = [];
  targets.forEach((_, i) => {
    const counters = replies[2 * i] as (string | null)[];
    const contention = (replies[2 * i + 1] as string[] | null) ?? [];
    let named = 0;
    for (let j = 1; j < contention.length; j += 2) named += Number(contention[j]);
    if (named !== Number(counters[CONTENDED_AT] ?? 0)) {
      whole.push(i);
      flats.push(null);
      return;
    }
    const flat: string[] = [...contention];
    counters.forEach((value, j) => {
      if (value !== null) flat.push(HOUR_COUNTER_FIELDS[j]!, value);
    });
    flats.push(flat);
  });
  if (whole.length > 0) {
    const hashes = await execPipeline(ctx, operation, (p) => {
      for (const i of whole) p.call(HGETALL_FLAT, buildStatsKey(targets[i]!.keys, "h", targets[i]!.index));
    });
    whole.forEach((i, k) => (flats[i] = hashes[k]));
  }
  return flats;
}

const UNIT_MS = { h: HOUR_MS, d: DAY_MS } as const;
/** How long each unit's bucket hashes live after their interval, and so the store-wide sums of them. */
const UNIT_TTL_S = { h: HOUR_TTL_S, d: DAY_TTL_S } as const;

/** The first hour (day) that has not ended DAY_CLOSE_MARGIN_MS before `nowMs`. */
function firstUnclosed(unit: "h" | "d", nowMs: number): number {
  return Math.floor((nowMs - DAY_CLOSE_MARGIN_MS) / UNIT_MS[unit]);
}

/**
 * A store-wide string's flat [field, value, …] list, or null when there is none. A hash of
 * ~150 fields read with HGETALL is 300 strings for the client to decode, about 1 µs each; the
 * same sums as one JSON string are one string and one JSON.parse.
 */
function parseStoreWideSums(reply: unknown): unknown[] | null {
  if (typeof reply !== "string") return null;
  try {
    const parsed: unknown = JSON.parse(reply);
    return Array.isArray(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** The bucket count in the first bytes of a store-wide sum (its marker leads it), or 0. */
function storeWideBucketsOfHead(head: unknown): number {
  const marker = typeof head === "string" ? STORE_WIDE_HEAD.exec(head) : null;
  return marker ? Number(marker[1]) : 0;
}
const STORE_WIDE_HEAD = new RegExp(`^\\["${STORE_WIDE_BUCKETS_FIELD}",(\\d+)[,\\]]`);

/** How many buckets a store-wide sum holds (its marker), or 0 when it is not one. */
function storeWideBuckets(reply: unknown): number {
  if (isEmptyFlat(reply)) return 0;
  const pairs = reply as unknown[];
  for (let j = 0; j + 1 < pairs.length; j += 2) if (pairs[j] === STORE_WIDE_BUCKETS_FIELD) return Number(pairs[j + 1]) || 0;
  return 0;
}

export interface CompactResult {
  /** Day hashes and store-wide sums written by this call. */
  compacted: number;
  /** Closed days (hours) within the hours' lifetime still without their day hash in some bucket (store-wide sum) after this call. */
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
        addFlatSums(sums, flat);
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

/**
 * Sums each closed hour's (day's) bucket hashes into one store-wide sum, a JSON string
 * (`stats:hj:<hour>`, `stats:dj:<day>`, living as long as the bucket hashes), with only the fields a read that is
 * not under a prefix uses: the per-group fields (`g|`, `gh|`), nine in ten of a busy hour's,
 * stay in the buckets' hashes. So a 7-day chart reads 168 hashes of the store's own counters
 * instead of 16 × 168 with every group in them, and a 30-day one 31 instead of 16 × 31. An
 * hour is summed once it ended DAY_CLOSE_MARGIN_MS before `nowMs` (the store's clock) with the
 * projection caught up (the caller's), a day once every bucket has its day hash
 * (compactClosedDays, run first); a bounded number per call, newest first. Each sum is one SET,
 * so a reader finds the whole sum or none of it.
 */
export async function compactStoreWide(
  ctx: RedisContext,
  namespace: string,
  bucketKeys: readonly BucketKeys[],
  unit: "h" | "d",
  nowMs: number,
  done: Set<number>,
): Promise<CompactResult> {
  const candidates = toSumStoreWide(unit, nowMs, done);
  if (candidates.length === 0) return { compacted: 0, pending: 0 };
  // The marker leads each sum, so its first bytes say how many buckets it sums: one written by a
  // store with another bucket count is summed again.
  const heads = await execPipeline(ctx, "compactStats", (p) => {
    for (const index of candidates) p.getrange(buildStoreWideStatsKey(namespace, unit, index), 0, 40);
  });
  const missing = candidates.filter((index, i) => {
    if (storeWideBucketsOfHead(heads[i]) !== bucketKeys.length) return true;
    done.add(index);
    return false;
  });
  const batch = missing.slice(0, Math.max(1, Math.floor(MAX_HOURS_READ_PER_COMPACTION / bucketKeys.length)));
  if (batch.length === 0) return { compacted: 0, pending: 0 };
  // Without the per-group fields, which a store-wide sum leaves out.
  const hashes = await readBucketHashes(ctx, batch.flatMap((index) => bucketKeys.map((keys) => ({ keys, index }))), unit, true, "compactStats");
  let compacted = 0;
  let waiting = 0;
  await execPipeline(ctx, "compactStats", (p) => {
    batch.forEach((index, i) => {
      const own = hashes.slice(i * bucketKeys.length, (i + 1) * bucketKeys.length);
      // A day whose day hash some bucket still lacks waits for compactClosedDays; with its hours
      // gone it never gets one, and is read per bucket.
      if (unit === "d" && own.some(isEmptyFlat)) {
        if (index >= oldestDayToCompact(nowMs)) waiting++;
        else done.add(index);
        return;
      }
      const sums = new Map<string, number>();
      for (const flat of own) addFlatSums(sums, flat, (field) => !field.startsWith("g|") && !field.startsWith("gh|") && field !== COMPACTED_FIELD && field !== STORE_WIDE_BUCKETS_FIELD);
      // One SET: a reader finds the whole sum or none of it. The marker, first, says how many buckets it sums.
      const flat = [[STORE_WIDE_BUCKETS_FIELD, bucketKeys.length], ...sums].flat();
      p.set(buildStoreWideStatsKey(namespace, unit, index), JSON.stringify(flat), "EXAT", ((index + 1) * UNIT_MS[unit]) / 1_000 + UNIT_TTL_S[unit]);
      done.add(index);
      compacted++;
    });
  });
  return { compacted, pending: missing.length - batch.length + waiting };
}

/** Closed hours (days) whose bucket hashes still exist and that `done` does not hold, newest first. */
function toSumStoreWide(unit: "h" | "d", nowMs: number, done: ReadonlySet<number>, firstOnly = false): number[] {
  return closedNotDone(unit, Math.ceil((nowMs - UNIT_TTL_S[unit] * 1_000) / UNIT_MS[unit]) + 1, nowMs, done, firstOnly);
}

/** Closed hours (days) from the newest down to `oldest` that `done` does not hold; only the newest with `firstOnly`. */
function closedNotDone(unit: "h" | "d", oldest: number, nowMs: number, done: ReadonlySet<number>, firstOnly = false): number[] {
  const indexes: number[] = [];
  for (let index = firstUnclosed(unit, nowMs) - 1; index >= oldest; index--) {
    if (done.has(index)) continue;
    indexes.push(index);
    if (firstOnly) break;
  }
  return indexes;
}

/** Whether compactStoreWide would look at anything: a check in memory, before any round trip. */
export function hasStoreWideToSum(unit: "h" | "d", nowMs: number, done: ReadonlySet<number>): boolean {
  return toSumStoreWide(unit, nowMs, done, true).length > 0;
}

/** Closed days whose first hour hash still exists and that `done` does not hold, newest first. */
function daysToCompact(nowMs: number, done: ReadonlySet<number>): number[] {
  return closedNotDone("d", oldestDayToCompact(nowMs), nowMs, done);
}

/** The oldest day whose first hour hash still exists: older days are never compacted. */
function oldestDayToCompact(nowMs: number): number {
  return Math.ceil((nowMs - HOUR_TTL_S * 1_000) / DAY_MS) + 1;
}

/** Whether compactClosedDays would look at any day: a check in memory, before any round trip. */
export function hasDaysToCompact(nowMs: number, done: ReadonlySet<number>): boolean {
  return daysToCompact(nowMs, done).length > 0;
}

function isEmptyFlat(reply: unknown): boolean {
  return !Array.isArray(reply) || reply.length === 0;
}

/** Adds a flat HGETALL reply's numeric fields (those `isKept` keeps, all by default) into `sums`. */
function addFlatSums(sums: Map<string, number>, reply: unknown, isKept: (field: string) => boolean = () => true): void {
  if (isEmptyFlat(reply)) return;
  const pairs = reply as string[];
  for (let j = 0; j + 1 < pairs.length; j += 2) {
    const field = pairs[j]!;
    if (!isKept(field)) continue;
    const n = Number(pairs[j + 1]);
    if (Number.isFinite(n)) sums.set(field, (sums.get(field) ?? 0) + n);
  }
}

function addFlatHash(bucket: StatsBucket, reply: unknown, addField: FieldAdder): void {
  if (!Array.isArray(reply)) return;
  for (let i = 0; i + 1 < reply.length; i += 2) addField(bucket, String(reply[i]), Number(reply[i + 1]));
}

/** `prefixes` remembers each contention field's prefix at `depth` for the read: the same few recur in every hash. */
function addStoreField(bucket: StatsBucket, field: string, value: number, depth: number, prefixes: Map<string, string>): void {
  // Per-group fields ('g|…', 'gh|…', counted under a prefix: addPrefixField) are most of an open
  // hour's hash on a store with many tenants; they are passed over first, before any other test.
  if (field.startsWith("g") && (field.startsWith("g|") || field.startsWith("gh|"))) return;
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

function addBucket(into: StatsBucket, from: StatsBucket): void {
  for (const kind of COUNTER_KINDS) into.counts[kind] += from.counts[kind];
  from.holdHistogram.forEach((n, i) => (into.holdHistogram[i]! += n));
  into.holdMsSum += from.holdMsSum;
  for (const [prefix, n] of Object.entries(from.contendedByPrefix)) into.contendedByPrefix[prefix] = (into.contendedByPrefix[prefix] ?? 0) + n;
}

function addToHistogram(bucket: StatsBucket, index: number, value: number): void {
  if (index >= 0 && index < bucket.holdHistogram.length) bucket.holdHistogram[index]! += value;
}
