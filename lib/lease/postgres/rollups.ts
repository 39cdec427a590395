import type pg from "pg";
import { LeaseError } from "../errors";
import { HOLD_HISTOGRAM_BOUNDS_MS, type CounterKind, type GroupTotals, type LifetimeTotals, type PrefixStats, type StatsBucket } from "../types";
import { emptyStatsBucket, isPrefixServedByGroups, PREFIX_GROUP_DEPTH } from "../prefix-groups";
import { groupDepthFor, newHoldTally, newSlackTally } from "../group-totals";
import { buildGroupStatements } from "./group-sql";
import { parseOrThrow, ZPrefixStatsQuery, ZStatsQuery } from "../validation";
import { prefixUpperBound } from "./rows";
import { buildGroupRollupStatements, buildLifetimeTotalsQuery, buildReleaseFailuresQuery, buildRollupStatements, buildStatsContentionByBucketQuery, buildStatsCountersQuery, COUNTER_COLUMNS, type RollupUnit } from "./sql";
import { inTransaction } from "./transaction";
import { internalLockKey } from "./lock-keys";

/**
 * Stats come from per-minute, per-hour and per-day rollup tables, rebuilt from lease_events
 * (never written by acquire, which would make every acquire update one hot row); the day
 * rows are summed from the hour rows, so a 30-day chart reads 30 rows, not 720.
 *
 * A refresh recomputes every minute bucket from (start of the minute of the last
 * refresh − ROLLUP_SAFETY_MARGIN_MS) onwards and upserts it, then rebuilds the hours
 * those minutes belong to, then the days those hours belong to. Recomputing rather than incrementing makes it idempotent
 * and safe to repeat. The margin covers events whose `at` was read shortly before
 * they committed: a minute bucket is treated as final once it ends before
 * (last refresh − margin); anything newer is read from raw events at query time,
 * so fresh data shows without waiting for the next refresh.
 */
export const ROLLUP_SAFETY_MARGIN_MS = 60_000;
/** The most buckets one stats() call may return (7 days of minutes is 10 080). */
export const MAX_STATS_BUCKETS = 20_000;
/**
 * contendedByPrefix keeps this many prefixes per bucket, most contended first (in
 * the rollups too). Past that it is a "top contended" list, not a full breakdown;
 * counts.contended stays exact.
 */
export const TOP_PREFIXES_PER_BUCKET = 100;
export const DEFAULT_PREFIX_DEPTH = 2;

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const floorTo = (ms: number, unit: number) => Math.floor(ms / unit) * unit;
const ceilTo = (ms: number, unit: number) => Math.ceil(ms / unit) * unit;
const clamp = (v: number, lo: number, hi: number) => Math.min(Math.max(v, lo), hi);

export interface RefreshRollupsResult {
  /** false when another refresh of the same schema was running (it covers the same ground). */
  refreshed: boolean;
  /** First minute recomputed. */
  from?: Date;
  /** Database time the refresh counts as its watermark. */
  until?: Date;
}

export async function refreshRollups(pool: pg.Pool, schema: string, since?: Date): Promise<RefreshRollupsResult> {
  const sql = buildRollupStatements(schema);
  return inTransaction(pool, async (client) => {
    const head = await client.query<{ locked: boolean; now: Date; refreshed_at: Date | null; first_at: Date | null; dropped_until: Date | null }>(sql.begin, [
      internalLockKey("rollup", schema),
    ]);
    const row = head.rows[0]!;
    // Another refresh holds the lock; it covers the same ground (nothing was written here).
    if (!row.locked) return { refreshed: false };
    let fromMs = row.refreshed_at
      ? floorTo(row.refreshed_at.getTime(), MINUTE_MS) - ROLLUP_SAFETY_MARGIN_MS
      : (row.first_at ?? row.now).getTime();
    if (since && since.getTime() < fromMs) fromMs = since.getTime();
    // Never recompute before the retained raw events: those buckets would be rebuilt from
    // nothing (contention is cleared and re-inserted), erasing what only the rollups still hold.
    if (row.dropped_until && fromMs < row.dropped_until.getTime()) fromMs = row.dropped_until.getTime();
    const from = new Date(floorTo(fromMs, MINUTE_MS));
    const hourFrom = new Date(floorTo(fromMs, HOUR_MS));
    const dayFrom = new Date(floorTo(fromMs, DAY_MS));
    await client.query(sql.refreshMinuteCounters, [from]);
    await client.query(sql.clearMinuteContention, [from]);
    await client.query(sql.refreshMinuteContention, [from, TOP_PREFIXES_PER_BUCKET]);
    await client.query(sql.refreshHourCounters, [hourFrom]);
    const groups = buildGroupRollupStatements(schema);
    await client.query(groups.clearGroupHours, [hourFrom]);
    await client.query(groups.refreshGroupHours, [hourFrom]);
    await client.query(sql.clearHourContention, [hourFrom]);
    await client.query(sql.refreshHourContention, [hourFrom, TOP_PREFIXES_PER_BUCKET]);
    await client.query(sql.refreshDayCounters, [dayFrom]);
    await client.query(sql.clearDayContention, [dayFrom]);
    await client.query(sql.refreshDayContention, [dayFrom, TOP_PREFIXES_PER_BUCKET]);
    // Same window and transaction as the rollups: heldAt() trusts the spans below the same cut (held-at.ts).
    await client.query(sql.refreshHoldSpans, [from]);
    await client.query(sql.markRefreshed, [row.now]);
    // Once partitions have been dropped, a refold from the first event would lose the dropped
    // days' holds: back-dated loads are then not refolded (the lifetime histograms keep them out).
    await foldGroupTotals(client, schema, row.now, row.dropped_until ? undefined : since);
    return { refreshed: true, from, until: row.now };
  });
}

/**
 * Folds the per-group lifetime histograms up to what this refresh treats as final: terminal
 * events before its final minute, slack rows before the hour that final minute is in. Runs in
 * the refresh's transaction, so the tables and their watermarks move together. Events loaded
 * with back-dated times (`since` before the holds watermark) cannot be added in place: the
 * folded holds are dropped and folded again from the first event.
 */
async function foldGroupTotals(client: pg.PoolClient, schema: string, now: Date, since: Date | undefined): Promise<void> {
  const sql = buildGroupStatements(schema);
  if (since) {
    const { rows } = await client.query<{ holds_folded_until: Date | null }>(sql.readHoldsWatermark);
    const folded = rows[0]?.holds_folded_until;
    if (folded && since.getTime() < folded.getTime()) await client.query(sql.resetHolds);
  }
  const finalMs = floorTo(now.getTime(), MINUTE_MS) - ROLLUP_SAFETY_MARGIN_MS;
  await client.query(sql.foldHolds, [new Date(finalMs)]);
  await client.query(sql.foldSlack, [new Date(floorTo(finalMs, HOUR_MS))]);
}

/** Lifetime hold and slack histograms per prefix group: folded totals plus the tail after each watermark. */
export async function readGroupTotals(client: pg.PoolClient, schema: string, q: { prefixDepth: number; maxGroups: number }): Promise<GroupTotals> {
  const sql = buildGroupStatements(schema);
  const depth = groupDepthFor(q.prefixDepth);
  // One after the other: statements on one connection run in turn anyway, and pg deprecates queueing them.
  const holds = await client.query<{ grp: string; b: number; n: string; ms: string }>(sql.readHolds, [depth]);
  const slack = await client.query<{ grp: string; b: number; n: string }>(sql.readSlack, [depth]);
  const holdTally = newHoldTally();
  for (const r of holds.rows) holdTally.add(r.grp, depth, r.b, Number(r.n), Number(r.ms));
  const slackTally = newSlackTally();
  for (const r of slack.rows) slackTally.add(r.grp, depth, r.b, Number(r.n));
  return { hold: holdTally.top(q.maxGroups, true), slack: slackTally.top(q.maxGroups, false) };
}

function emptyCounts(): Record<CounterKind, number> {
  const counts = {} as Record<CounterKind, number>;
  for (const kind of COUNTER_COLUMNS) counts[kind] = 0;
  return counts;
}

export async function readStats(pool: pg.PoolClient, schema: string, query: unknown): Promise<StatsBucket[]> {
  const q = parseOrThrow(ZStatsQuery, query, "stats");
  const unitMs = q.bucketMs;
  const unit: RollupUnit = unitMs === DAY_MS ? "day" : unitMs === HOUR_MS ? "hour" : "minute";
  if (Number.isNaN(q.from.getTime()) || Number.isNaN(q.to.getTime())) throw new LeaseError("stats: from and to must be valid dates");
  if (q.to.getTime() <= q.from.getTime()) throw new LeaseError("stats: to must be after from");
  // Whole buckets: every bucket whose start lies in [from, to).
  const fromMs = floorTo(q.from.getTime(), unitMs);
  const toMs = ceilTo(q.to.getTime(), unitMs);
  const count = (toMs - fromMs) / unitMs;
  if (count > MAX_STATS_BUCKETS) {
    throw new LeaseError(`stats: ${count} buckets requested; at most ${MAX_STATS_BUCKETS} (use hour buckets for long windows)`);
  }
  const depth = q.prefixDepth ?? DEFAULT_PREFIX_DEPTH;

  const sql = buildRollupStatements(schema);
  const state = await pool.query<{ refreshed_at: Date }>(sql.readRefreshedAt);
  const refreshedAt = state.rows[0]?.refreshed_at;
  const finalUntil = refreshedAt ? floorTo(refreshedAt.getTime(), MINUTE_MS) - ROLLUP_SAFETY_MARGIN_MS : fromMs;
  const minuteCut = clamp(finalUntil, fromMs, toMs);
  const hourCut = unit === "minute" ? fromMs : clamp(floorTo(minuteCut, HOUR_MS), fromMs, toMs);
  // A day row is final once every hour in it is.
  const dayCut = clamp(floorTo(hourCut, DAY_MS), fromMs, toMs);
  const cuts = unit === "day" ? [dayCut, hourCut, minuteCut] : [hourCut, minuteCut];
  const bounds = [fromMs, ...cuts, toMs].map((ms) => new Date(ms));

  const counters = await pool.query<Record<string, unknown>>(buildStatsCountersQuery(schema, unit), bounds);
  const contention = await pool.query<{ bucket_start: Date; prefixes: Record<string, number> }>(buildStatsContentionByBucketQuery(schema, unit), [
    ...bounds,
    depth,
    TOP_PREFIXES_PER_BUCKET,
  ]);

  const buckets = new Map<number, StatsBucket>();
  for (let t = fromMs; t < toMs; t += unitMs) {
    buckets.set(t, {
      start: new Date(t),
      counts: emptyCounts(),
      holdHistogram: new Array<number>(HOLD_HISTOGRAM_BOUNDS_MS.length + 1).fill(0),
      holdMsSum: 0,
      contendedByPrefix: {},
    });
  }
  for (const row of counters.rows) {
    const bucket = buckets.get((row.bucket_start as Date).getTime());
    if (!bucket) continue;
    for (const kind of COUNTER_COLUMNS) bucket.counts[kind] += Number(row[kind] ?? 0);
    const histogram = (row.hold_histogram as Array<string | number> | null) ?? [];
    histogram.forEach((n, i) => {
      if (i < bucket.holdHistogram.length) bucket.holdHistogram[i] = (bucket.holdHistogram[i] ?? 0) + Number(n);
    });
    bucket.holdMsSum += Number(row.hold_ms_sum ?? 0);
  }
  for (const row of contention.rows) {
    const bucket = buckets.get(row.bucket_start.getTime());
    if (bucket) bucket.contendedByPrefix = row.prefixes;
  }
  return [...buckets.values()];
}

/**
 * Hour or day buckets of the events under a prefix the prefix groups answer exactly: the group
 * hour rows up to the last refresh's final hour, raw events under the prefix after it (an index
 * range on resource, at most an hour or so of them).
 */
export async function readPrefixStats(client: pg.PoolClient, schema: string, query: unknown): Promise<PrefixStats> {
  const q = parseOrThrow(ZPrefixStatsQuery, query, "prefixStats");
  if (!isPrefixServedByGroups(q.prefix)) throw new LeaseError(`prefixStats: "${q.prefix}" is deeper than the prefix groups (${PREFIX_GROUP_DEPTH} segments)`);
  if (Number.isNaN(q.from.getTime()) || Number.isNaN(q.to.getTime())) throw new LeaseError("prefixStats: from and to must be valid dates");
  if (q.to.getTime() <= q.from.getTime()) throw new LeaseError("prefixStats: to must be after from");
  const unit = q.bucketMs === DAY_MS ? "day" : "hour";
  const fromMs = floorTo(q.from.getTime(), q.bucketMs);
  const toMs = ceilTo(q.to.getTime(), q.bucketMs);
  if ((toMs - fromMs) / q.bucketMs > MAX_STATS_BUCKETS) throw new LeaseError(`prefixStats: at most ${MAX_STATS_BUCKETS} buckets`);
  const sql = buildRollupStatements(schema);
  const groups = buildGroupRollupStatements(schema);
  const state = await client.query<{ refreshed_at: Date }>(sql.readRefreshedAt);
  const covered = await client.query<{ covered_from: Date | null }>(groups.readCoveredFrom);
  const refreshedAt = state.rows[0]?.refreshed_at;
  const finalUntil = refreshedAt ? floorTo(refreshedAt.getTime(), MINUTE_MS) - ROLLUP_SAFETY_MARGIN_MS : fromMs;
  const hourCut = clamp(floorTo(finalUntil, HOUR_MS), fromMs, toMs);
  const params = [new Date(fromMs), new Date(hourCut), new Date(toMs), q.prefix, prefixUpperBound(q.prefix)];
  const counters = await client.query<Record<string, unknown>>(groups.readPrefixCounters(unit), params);
  const contention = await client.query<{ bucket_start: Date; name: string; n: string }>(groups.readPrefixContention(unit), params);
  const buckets = new Map<number, StatsBucket>();
  for (let t = fromMs; t < toMs; t += q.bucketMs) buckets.set(t, emptyStatsBucket(t));
  for (const row of counters.rows) {
    const bucket = buckets.get((row.bucket_start as Date).getTime());
    if (!bucket) continue;
    for (const kind of COUNTER_COLUMNS) bucket.counts[kind] += Number(row[kind] ?? 0);
    // Renewals are counted per store, not per group: unknown here, as the view says.
    bucket.counts.renewed = 0;
    const histogram = (row.hold_histogram as Array<string | number> | null) ?? [];
    histogram.forEach((n, i) => {
      if (i < bucket.holdHistogram.length) bucket.holdHistogram[i] = (bucket.holdHistogram[i] ?? 0) + Number(n);
    });
    bucket.holdMsSum += Number(row.hold_ms_sum ?? 0);
  }
  for (const row of contention.rows) {
    const bucket = buckets.get(row.bucket_start.getTime());
    if (bucket) bucket.contendedByPrefix[row.name] = (bucket.contendedByPrefix[row.name] ?? 0) + Number(row.n);
  }
  return { buckets: [...buckets.values()], coveredFrom: covered.rows[0]?.covered_from ?? null };
}

/**
 * Everything counted since the schema began: hour rollups up to the last refresh's final hour,
 * minute rollups up to its final minute, raw events after that (the same cuts as readStats, so
 * nothing is counted twice or missed). Retention drops raw events only once the rollups hold
 * them (./partitions.ts), so this never goes down. The
 * cuts are read first: a refresh in between only rewrites rollups to the same final values.
 */
export async function readLifetimeTotals(pool: pg.PoolClient, schema: string): Promise<LifetimeTotals> {
  const sql = buildRollupStatements(schema);
  const state = await pool.query<{ refreshed_at: Date }>(sql.readRefreshedAt);
  const refreshedAt = state.rows[0]?.refreshed_at;
  const minuteCut = refreshedAt ? new Date(floorTo(refreshedAt.getTime(), MINUTE_MS) - ROLLUP_SAFETY_MARGIN_MS) : "-infinity";
  const hourCut = typeof minuteCut === "string" ? minuteCut : new Date(floorTo(minuteCut.getTime(), HOUR_MS));
  const { rows } = await pool.query<Record<string, unknown>>(buildLifetimeTotalsQuery(schema), ["-infinity", hourCut, minuteCut, "infinity"]);
  const failures = await pool.query<{ reason: string; n: string }>(buildReleaseFailuresQuery(schema));
  const refused = new Map(failures.rows.map((r) => [r.reason, Number(r.n)]));
  const row = rows[0] ?? {};
  const histogram = (row.hold_histogram as Array<string | number> | null) ?? [];
  return {
    counts: Object.fromEntries(COUNTER_COLUMNS.map((k) => [k, Number(row[k] ?? 0)])) as Record<CounterKind, number>,
    holdHistogram: Array.from({ length: HOLD_HISTOGRAM_BOUNDS_MS.length + 1 }, (_, i) => Number(histogram[i] ?? 0)),
    holdMsSum: Number(row.hold_ms_sum ?? 0),
    releaseFailures: { not_owner: refused.get("not_owner") ?? 0, expired: refused.get("expired") ?? 0 },
  };
}
