/**
 * Server-only read model of the overview `/`: tiles per store and in total, the
 * chart series and the "most contended" tables over the selected window — all
 * from the stores' rollups (`stats()`), never from scans of raw events, so a
 * 7-day overview stays cheap. With `prefix=`, windows of hour or day buckets
 * read the stores' hourly rollups per prefix group (`prefixStats()`), and shorter
 * windows (or prefixes deeper than the groups, up to 24 h) the stores' events
 * under the prefix. A viewer whose access is limited to prefixes
 * (LEASEWATCH_ROLE_MAP scopes) always gets the prefix view, summed over their
 * prefixes: the store-wide rollups would count other tenants too. A store that
 * cannot count a view within its bounds is "not counted", with the reason.
 */
import { describeScope, readPrefixes, type ViewerScope } from "@/lib/auth/scope";
import {
  type CounterKind,
  histogramQuantile,
  HOLD_HISTOGRAM_BOUNDS_MS,
  isPrefixServedByGroups,
  type LeaseStore,
  PREFIX_GROUP_DEPTH,
  resourcePrefix,
  type StatsBucket,
  type StatsQuery,
} from "@leasewatch/lease";
import { createClosedBucketCache, type StatsReadQuery } from "./closed-buckets";
import { getObservedOverview, type ObservedOverview } from "@/lib/console/shared/observed-history";
import { fanOutStores, resolveEntries, selectEntries, type ReadOptions } from "@/lib/console/shared/fan-out";
import { formatBound, formatNumber } from "@/lib/console/shared/format";
import { DAY_MS, HOUR_MS, MINUTE_MS, parseOverviewParams, PREFIX_MAX_RANGE_MS, type OverviewParams, type SearchParamsInput } from "@/lib/console/shared/params";
import { countActiveUnder, readPrefixBuckets, type PrefixRead } from "@/lib/console/shared/prefix-overview";
import { createSharedReads } from "@/lib/console/shared/shared-read";
import type {
  ContentionTrend,
  HistogramBar,
  OverviewPoint,
  OverviewTiles,
  OverviewView,
  PrefixCount,
  ReadResult,
  ResourceCount,
  StoreOutcome,
  StoreOverview,
} from "@/lib/console/shared/views";

/** Prefixes stacked by name in the contention chart; the rest are summed as "other". */
export const TOP_STACK_PREFIXES = 5;
export const TOP_TABLE_ROWS = 10;
export const OTHER_KEY = "other";
/**
 * The "most contended resources" table reads contention per prefix of this many
 * segments (the deepest the rollups keep). Resource names here rarely have more,
 * so a row is usually one resource; a row whose name has exactly this many
 * segments is checked against the resource's own history before it links there.
 */
export const RESOURCE_DEPTH = 3;
/**
 * Identical overview reads within this long share one answer: every open tab
 * polls every few seconds, and the page render and its `/api/overview` twin ask
 * the same thing. Well under the poll interval, so no tab sees a stale repeat.
 */
export const OVERVIEW_SHARE_MS = 1_500;

/** Sparklines in the "most contended" tables have at most this many points (a 7-day window has 169 buckets). */
export const SPARK_POINTS = 24;

interface StoreRead {
  /** Counters, and contention at the requested depth or (complete, to be cut while merging) at depth 3. */
  buckets: StatsBucket[];
  /** Contention at depth 3 (the resources table's names). */
  deep: StatsBucket[];
  /** The window just before, as long in buckets: `buckets` and `deep` again, for the tables' change column. */
  previous: StatsBucket[];
  previousDeep: StatsBucket[];
  /** This store's most contended depth-3 names over the window, already told apart (resource or prefix). */
  resources: Omit<ResourceCount, "trend">[];
  active: number;
  /** Prefix rollups: complete from this instant (null: for all the store's history). */
  coveredFrom?: Date | null;
}

/** A bucket summed over stores; `counts` only has the kinds that occurred. */
export interface MergedBucket {
  counts: Partial<Record<CounterKind, number>>;
  holdHistogram: number[];
  contendedByPrefix: Map<string, number>;
}

const sharedReads = createSharedReads({ ttlMs: OVERVIEW_SHARE_MS });
const closedBuckets = createClosedBucketCache();

export async function getOverview(params: OverviewParams, options: ReadOptions): Promise<ReadResult<OverviewView>> {
  const all = await resolveEntries(options);
  const selected = selectEntries(all, params.store);
  if (!selected.ok) return selected;
  const { from, to, bucketMs, window } = params.range;

  const nowMs = options.nowMs ?? Date.now();
  const isReusing = options.reuseClosedBuckets ?? options.entries === undefined;
  const axis = bucketAxis(from.getTime(), to.getTime(), bucketMs);
  // The same number of buckets right before this window's first: a fair "previous window".
  const previousAxis = axis.map((t) => t - axis.length * bucketMs);
  const previousRange = { from: new Date(previousAxis[0]!), to: new Date(axis[0]!), bucketMs };
  // A window ending in the past (`at=`): what changed after its last bucket, to walk the live count back to its end.
  const tailFromMs = axis[axis.length - 1]! + bucketMs;
  const tail = tailFromMs <= nowMs ? { from: new Date(tailFromMs), to: new Date(nowMs + 1) } : null;
  const { prefix } = params;
  const scope = options.scope ?? { kind: "all" };
  // undefined: the store-wide rollups; otherwise the (disjoint) prefixes whose events are counted.
  const prefixes = scope.kind === "all" ? (prefix === undefined ? undefined : [prefix]) : readPrefixes(scope, prefix)!;
  // Under a prefix, windows of hour or day buckets read the stores' hourly counts per prefix group
  // (exact for prefixes no deeper than the groups); shorter ones, and deeper prefixes up to 24 hours,
  // count the events themselves.
  const isRollupWindow = bucketMs >= HOUR_MS;
  const isEventWindow = to.getTime() - from.getTime() <= PREFIX_MAX_RANGE_MS + 1;
  const usesRollups = (store: LeaseStore) =>
    isRollupWindow && store.prefixStats !== undefined && prefixes !== undefined && prefixes.every(isPrefixServedByGroups);
  // Observed stores are read beside the lease stores: one aggregate per observed store from the observer's record.
  const observedRead = readObservedSection(scope, params.range.endsAt ?? undefined, options);
  const read = await fanOutStores(
    selected.entries,
    (store, signal): Promise<StoreRead | { refused: string }> => {
      if (prefixes !== undefined) {
        if (usesRollups(store)) return readPrefixRollupsStore(store, prefixes, { from, to, bucketMs }, previousRange, tail, signal);
        if (isEventWindow) return readPrefixesStore(store, prefixes, { from, to, bucketMs }, previousRange, tail, signal);
        return Promise.resolve({ refused: longWindowRefusal(store, prefixes) });
      }
      const readStats = (q: StatsReadQuery) => (isReusing ? closedBuckets.readStats(store, { ...q, signal }, nowMs) : store.stats({ ...q, signal }));
      return readStore(store, readStats, { from, to, bucketMs }, previousRange, tail, params.depth, signal);
    },
    options.timeoutMs,
    options.signal,
  );
  // A store whose prefix read passed its bound says so ("not counted"), rather than showing a partial count or an outage.
  const outcomes = read.map((o) =>
    o.ok && "refused" in o.data ? { store: o.store, kind: o.kind, ok: false as const, error: o.data.refused, cause: "refused" as const } : o,
  ) as StoreOutcome<StoreRead>[];
  const prefixSource = prefixes === undefined ? null : selected.entries.some((e) => usesRollups(e.store)) ? ("rollups" as const) : ("events" as const);
  const coverage = outcomes.flatMap((o) =>
    o.ok && o.data.coveredFrom && o.data.coveredFrom.getTime() > from.getTime() ? [{ store: o.store, from: o.data.coveredFrom.toISOString() }] : [],
  );

  const windowMinutes = (to.getTime() - from.getTime()) / 60_000;
  const stores = outcomes.map((o) => {
    if (!o.ok) return o;
    // Tiles need only the counters; skipping the prefix breakdown keeps a 7-day read cheap.
    const merged = mergeBuckets(axis, [o.data.buckets], { hasPrefixes: false });
    return { ...o, data: { tiles: computeTiles(merged, o.data.active, windowMinutes) } satisfies StoreOverview };
  });

  const reads = outcomes.flatMap((o) => (o.ok ? [{ store: o.store, ...o.data }] : []));
  const merged = mergeBuckets(axis, reads.map((r) => r.buckets), { depth: params.depth });
  const activeNow = reads.reduce((sum, r) => sum + r.active, 0);
  const total = computeTiles(merged, activeNow, windowMinutes);
  const prefixTotals = sumPrefixes(merged);
  // Per store, merged once however many of its names make the resources table.
  const trendsByStore = new Map<StoreRead, ReturnType<typeof storeTrends>>();
  const resourceTrends = (read: StoreRead) => {
    let trends = trendsByStore.get(read);
    if (!trends) trendsByStore.set(read, (trends = storeTrends(read, axis, previousAxis)));
    return trends;
  };
  const previousPrefixTotals = sumPrefixes(mergeBuckets(previousAxis, reads.map((r) => r.previous), { depth: params.depth }));
  const stackPrefixes = [...prefixTotals.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP_STACK_PREFIXES).map(([p]) => p);
  const points = buildPoints(axis, merged, activeNow, stackPrefixes);
  const hasOther = points.some((p) => (p.stack[OTHER_KEY] ?? 0) > 0);
  const observed = await observedRead;

  return {
    ok: true,
    view: {
      readAt: new Date(nowMs).toISOString(),
      window,
      from: from.toISOString(),
      to: to.toISOString(),
      endsAt: params.range.endsAt?.toISOString() ?? null,
      bucketMs,
      requested: params.range.requested ? { from: params.range.requested.from.toISOString(), to: params.range.requested.to.toISOString() } : null,
      depth: params.depth,
      prefix: prefix ?? null,
      scope: scope.kind === "prefixes" ? describeScope(scope) : null,
      selectedStore: params.store ?? null,
      storeNames: all.map((e) => e.store.name),
      stores,
      total,
      points,
      stackKeys: [
        ...stackPrefixes.map((prefix, i) => ({ key: `c${i}`, prefix })),
        ...(hasOther ? [{ key: OTHER_KEY, prefix: "other prefixes" }] : []),
      ],
      histogram: buildHistogram(merged),
      topPrefixes: [...prefixTotals.entries()]
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .slice(0, TOP_TABLE_ROWS)
        // Share of every failed acquire (the exact counter), not only of the ones the rollups name.
        .map(
          ([prefix, contended]): PrefixCount => ({
            prefix,
            contended,
            share: total.contended > 0 ? contended / total.contended : 0,
            trend: { previous: previousPrefixTotals.get(prefix) ?? 0, spark: sparkOf(merged, prefix) },
          }),
        ),
      topResources: reads
        .flatMap((r) => r.resources.map((row) => ({ row, read: r })))
        .sort((a, b) => compareResourceCounts(a.row, b.row))
        .slice(0, TOP_TABLE_ROWS)
        .map(({ row, read }): ResourceCount => ({ ...row, trend: resourceTrends(read).trendOf(row.resource) })),
      resourceDepth: RESOURCE_DEPTH,
      prefixSource,
      coverage,
      observed,
    },
  };
}

/**
 * The overview's observed section, never its failure: an observed history that
 * cannot be read shows as "not read" per store (getObservedCounts), and a
 * configuration error as no section (the observed page reports it). Callers that
 * bring their own lease stores (tests, the benchmark) read no observed stores.
 */
async function readObservedSection(scope: ViewerScope, at: Date | undefined, options: ReadOptions): Promise<ObservedOverview | null> {
  if (options.entries !== undefined) return null;
  return getObservedOverview({ scope, ...(at ? { at } : {}) }).catch(() => null);
}

/**
 * One store's part: one `stats()` at depth 3 serves both the resources table and,
 * cut to fewer segments while merging, the chart at a shallower depth — as long
 * as that breakdown is complete (its prefixes add up to the bucket's exact
 * `contended` counter). A store that keeps only the top prefixes per bucket can
 * leave it incomplete; then a shallower prefix's count cannot be rebuilt from
 * depth 3, and the store is asked for that depth directly.
 */
async function readStore(
  store: LeaseStore,
  readStats: (query: StatsReadQuery) => Promise<StatsBucket[]>,
  range: Omit<StatsQuery, "prefixDepth">,
  previousRange: Omit<StatsQuery, "prefixDepth">,
  tail: TailRange | null,
  depth: number,
  signal: AbortSignal,
): Promise<StoreRead> {
  // The previous window's buckets are all closed, so after the first read they come from the closed-bucket cache.
  // The live count is needed only at the end: it runs beside both rounds of bucket reads.
  const counting = store.countActive({ signal });
  counting.catch(() => {}); // awaited below; a failure before then is not unhandled
  const [deep, previousDeep, after] = await Promise.all([
    readStats({ ...range, prefixDepth: RESOURCE_DEPTH }),
    readTotalsOnly(readStats, { ...previousRange, prefixDepth: RESOURCE_DEPTH }),
    tail ? readTail(readStats, tail) : [],
  ]);
  const atDepth = (buckets: StatsBucket[], r: Omit<StatsQuery, "prefixDepth">, read = readStats) =>
    depth === RESOURCE_DEPTH || isBreakdownComplete(buckets) ? buckets : read({ ...r, prefixDepth: depth });
  const [buckets, previous, resources, activeNow] = await Promise.all([
    atDepth(deep, range),
    atDepth(previousDeep, previousRange, (q) => readTotalsOnly(readStats, q)),
    identifyResources(store, topNames(deep), signal),
    counting,
  ]);
  // The live count and the tail's counters are not one snapshot: a lease acquired after the count
  // was taken can be in the tail's counters, and the difference then falls short by it (below
  // zero for a window before any lease). Never fewer than none, as in buildPoints.
  const active = Math.max(0, activeNow - netChange(after));
  return { buckets, deep, previous, previousDeep, resources, active };
}

/** After a window that ends in the past: from the end of its last bucket to now. */
interface TailRange {
  from: Date;
  to: Date;
}

/**
 * The buckets after a past window, only summed: minutes up to the next whole hour, then hours
 * (whole days as day rollups, see readTotalsOnly), so a week-old `at` costs no week of minutes.
 */
async function readTail(readStats: (query: StatsReadQuery) => Promise<StatsBucket[]>, tail: TailRange): Promise<StatsBucket[]> {
  const nextHour = Math.ceil(tail.from.getTime() / HOUR_MS) * HOUR_MS;
  if (nextHour >= tail.to.getTime()) return readStats({ ...tail, bucketMs: MINUTE_MS, prefixDepth: 1 });
  const [minutes, hours] = await Promise.all([
    nextHour > tail.from.getTime() ? readStats({ from: tail.from, to: new Date(nextHour), bucketMs: MINUTE_MS, prefixDepth: 1 }) : [],
    readTotalsOnly(readStats, { from: new Date(nextHour), to: tail.to, bucketMs: HOUR_MS, prefixDepth: 1 }),
  ]);
  return [...minutes, ...hours];
}

/** Leases taken minus leases ended over `buckets`: how the active count moved. */
function netChange(buckets: readonly StatsBucket[]): number {
  let net = 0;
  for (const b of buckets) net += b.counts.acquired - b.counts.released - b.counts.expired - b.counts.force_released;
  return net;
}

/**
 * Buckets of a window that is only ever summed (the previous window: the tables' change
 * column, never a chart). Its whole UTC days are read as day buckets, the stores' day
 * rollups, and only the part days at its edges in the window's own buckets: the week
 * before a 7-day window is 48 hour buckets and 6 days instead of 168 hours (on Redis,
 * hashes per bucket of the store; on Postgres, ranked prefix rows).
 */
export async function readTotalsOnly(readStats: (query: StatsReadQuery) => Promise<StatsBucket[]>, query: StatsReadQuery): Promise<StatsBucket[]> {
  const fromMs = query.from.getTime();
  const toMs = query.to.getTime();
  const firstDay = Math.ceil(fromMs / DAY_MS) * DAY_MS;
  const lastDay = Math.floor(toMs / DAY_MS) * DAY_MS;
  if (query.bucketMs >= DAY_MS || lastDay - firstDay < 2 * DAY_MS) return readStats(query);
  const parts = await Promise.all([
    fromMs < firstDay ? readStats({ ...query, to: new Date(firstDay) }) : [],
    readStats({ ...query, from: new Date(firstDay), to: new Date(lastDay), bucketMs: DAY_MS }),
    lastDay < toMs ? readStats({ ...query, from: new Date(lastDay) }) : [],
  ]);
  return parts.flat();
}

/**
 * One store's part under a prefix, from its events (lib/console/shared/prefix-overview):
 * the breakdown is complete at depth 3, so the merge cuts it to any depth.
 */
async function readPrefixStore(
  store: LeaseStore,
  prefix: string,
  range: Omit<StatsQuery, "prefixDepth">,
  previousRange: Omit<StatsQuery, "prefixDepth">,
  tail: TailRange | null,
  signal: AbortSignal,
): Promise<StoreRead | { refused: string }> {
  const [read, activeNow, after] = await Promise.all([
    readPrefixBuckets(store, prefix, range, previousRange, undefined, signal),
    countActiveUnder(store, prefix, undefined, signal),
    // The events since a past window's end (no previous window: an empty range).
    tail ? readPrefixBuckets(store, prefix, { ...tail, bucketMs: range.bucketMs }, { from: tail.from, to: tail.from, bucketMs: range.bucketMs }, undefined, signal) : null,
  ]);
  const refusal = (r: Extract<PrefixRead<unknown>, { ok: false }>) => ({
    refused: `more than ${formatNumber(r.limit)} ${r.what} under "${prefix}" in this window; choose a shorter window or a longer prefix`,
  });
  if (!read.ok) return refusal(read);
  if (!activeNow.ok) return refusal(activeNow);
  if (after && !after.ok) return refusal(after);
  const { buckets, previous } = read.data;
  const resources = await identifyResources(store, topNames(buckets), signal);
  const active = activeNow.data - (after ? netChange(after.data.buckets) : 0);
  return { buckets, deep: buckets, previous, previousDeep: previous, resources, active };
}

/** Why a store cannot count under these prefixes over this (longer than 24 hours) window. */
function longWindowRefusal(store: LeaseStore, prefixes: readonly string[]): string {
  const deep = prefixes.find((p) => !isPrefixServedByGroups(p));
  if (store.prefixStats === undefined || deep === undefined) {
    return "this store keeps no counts per prefix, and counting its events is bounded to 24 hours; choose window=24h or shorter";
  }
  return `counts per prefix are kept for prefixes of up to ${PREFIX_GROUP_DEPTH} segments (e.g. "${resourcePrefix(deep, PREFIX_GROUP_DEPTH)}:"), and counting the events under "${deep}" is bounded to 24 hours; choose window=24h or shorter, or a shorter prefix`;
}

/**
 * One store's part under prefixes the group rollups answer (hour or day buckets): counts per kind
 * and hold histograms from the groups under each prefix, contention per depth-3 name under it,
 * and the active leases from the index. Several prefixes are disjoint, so their parts add up.
 */
async function readPrefixRollupsStore(
  store: LeaseStore,
  prefixes: readonly string[],
  range: Omit<StatsQuery, "prefixDepth">,
  previousRange: Omit<StatsQuery, "prefixDepth">,
  tail: TailRange | null,
  signal: AbortSignal,
): Promise<StoreRead | { refused: string }> {
  const bucketMs = range.bucketMs === DAY_MS ? DAY_MS : HOUR_MS;
  // Prefix rollups are hourly: the changes after a past window are counted from its next whole hour.
  const tailFrom = tail ? new Date(Math.ceil(tail.from.getTime() / HOUR_MS) * HOUR_MS) : null;
  const parts = await Promise.all(
    prefixes.map(async (prefix) => {
      const [current, previous, activeNow, after] = await Promise.all([
        store.prefixStats!({ prefix, from: range.from, to: range.to, bucketMs, signal }),
        store.prefixStats!({ prefix, from: previousRange.from, to: previousRange.to, bucketMs, signal }),
        countActiveUnder(store, prefix, undefined, signal),
        tail && tailFrom && tailFrom < tail.to ? store.prefixStats!({ prefix, from: tailFrom, to: tail.to, bucketMs: HOUR_MS, signal }) : null,
      ]);
      const active = activeNow.ok && after ? { ok: true as const, data: activeNow.data - netChange(after.buckets) } : activeNow;
      return { prefix, current, previous, active };
    }),
  );
  const summed = sumStoreReads(
    parts.map(({ prefix, current, previous, active }): StoreRead | { refused: string } => {
      if (!active.ok) return { refused: `more than ${formatNumber(active.limit)} ${active.what} under "${prefix}"; choose a longer prefix` };
      if (current.coveredFrom && current.coveredFrom.getTime() >= range.to.getTime()) {
        return { refused: `this store counts per prefix only since ${current.coveredFrom.toISOString().slice(0, 16).replace("T", " ")} UTC, after this window; choose a later window` };
      }
      // Group rollups are complete at every depth: the same buckets serve the resources table.
      const { buckets } = current;
      return { buckets, deep: buckets, previous: previous.buckets, previousDeep: previous.buckets, resources: [], active: active.data, coveredFrom: current.coveredFrom ?? null };
    }),
  );
  if ("refused" in summed) return summed;
  summed.resources = await identifyResources(store, topNames(summed.buckets), signal);
  return summed;
}

/** Several disjoint prefixes' parts summed: the first refusal (a read past its bound) stands for all. */
async function readPrefixesStore(
  store: LeaseStore,
  prefixes: readonly string[],
  range: Omit<StatsQuery, "prefixDepth">,
  previousRange: Omit<StatsQuery, "prefixDepth">,
  tail: TailRange | null,
  signal: AbortSignal,
): Promise<StoreRead | { refused: string }> {
  return sumStoreReads(await Promise.all(prefixes.map((p) => readPrefixStore(store, p, range, previousRange, tail, signal))));
}

/**
 * Disjoint prefixes' parts of one store summed: buckets of the same start add up
 * when merged onto the axis, and the store's counts are complete from the latest
 * part's coverage. The first refusal (a read past its bound) stands for all.
 */
function sumStoreReads(parts: ReadonlyArray<StoreRead | { refused: string }>): StoreRead | { refused: string } {
  const summed: StoreRead = { buckets: [], deep: [], previous: [], previousDeep: [], resources: [], active: 0 };
  for (const part of parts) {
    if ("refused" in part) return part;
    summed.buckets.push(...part.buckets);
    summed.deep.push(...part.deep);
    summed.previous.push(...part.previous);
    summed.previousDeep.push(...part.previousDeep);
    summed.resources.push(...part.resources);
    summed.active += part.active;
    const covered = part.coveredFrom;
    if (covered !== undefined) {
      if (summed.coveredFrom === undefined || summed.coveredFrom === null) summed.coveredFrom = covered;
      else if (covered && covered.getTime() > summed.coveredFrom.getTime()) summed.coveredFrom = covered;
    }
  }
  return summed;
}

/** One name's failed acquires per bucket, summed into at most SPARK_POINTS equal slices. */
function sparkOf(buckets: readonly MergedBucket[], name: string): number[] {
  return downsample(buckets.map((b) => b.contendedByPrefix.get(name) ?? 0), SPARK_POINTS);
}

/** Sums neighbouring values so at most `points` remain; slices are equal (the last may be shorter). */
export function downsample(values: readonly number[], points: number): number[] {
  if (values.length <= points) return [...values];
  const size = Math.ceil(values.length / points);
  const out: number[] = [];
  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size).reduce((a, b) => a + b, 0));
  return out;
}

/**
 * Resource rows' trends, from their own store's depth-3 buckets (the names the rows show): each
 * row's name looked up in each bucket, as mergeBuckets would place it, rather than merging every
 * name of the window (some ten thousand a store over seven days) for the ten rows shown.
 */
function storeTrends(read: StoreRead, axis: readonly number[], previousAxis: readonly number[]) {
  const slotOf = axisSlots(axis);
  const previousSlotOf = axisSlots(previousAxis);
  const currentSlots = read.deep.map((b) => slotOf(b.start.getTime()));
  const isPreviousOnAxis = read.previousDeep.map((b) => previousSlotOf(b.start.getTime()) !== undefined);
  return {
    trendOf: (name: string): ContentionTrend => {
      const series = new Array<number>(axis.length).fill(0);
      read.deep.forEach((b, j) => {
        const i = currentSlots[j];
        if (i !== undefined) series[i]! += b.contendedByPrefix[name] ?? 0;
      });
      let previous = 0;
      read.previousDeep.forEach((b, j) => {
        if (isPreviousOnAxis[j]) previous += b.contendedByPrefix[name] ?? 0;
      });
      return { previous, spark: downsample(series, SPARK_POINTS) };
    },
  };
}

/** Whether every bucket's prefix counts add up to its `contended` counter (nothing left out). */
export function isBreakdownComplete(buckets: readonly StatsBucket[]): boolean {
  return buckets.every((b) => {
    let sum = 0;
    for (const prefix in b.contendedByPrefix) sum += b.contendedByPrefix[prefix]!;
    return sum === b.counts.contended;
  });
}

/** The window's most contended depth-3 names of one store, most first. */
function topNames(buckets: readonly StatsBucket[]): Array<[string, number]> {
  const totals = new Map<string, number>();
  for (const b of buckets) for (const name in b.contendedByPrefix) totals.set(name, (totals.get(name) ?? 0) + b.contendedByPrefix[name]!);
  return [...totals.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, TOP_TABLE_ROWS);
}

/**
 * A name with fewer than RESOURCE_DEPTH segments is a whole resource (its prefix
 * is itself). One with exactly that many may be a resource or the start of
 * longer ones; a resource of exactly that name has its own history (a contended
 * acquire is recorded on it), which both stores read from an index, not a scan.
 */
async function identifyResources(store: LeaseStore, names: Array<[string, number]>, signal: AbortSignal): Promise<Omit<ResourceCount, "trend">[]> {
  return Promise.all(
    names.map(async ([name, contended]): Promise<Omit<ResourceCount, "trend">> => {
      const isResource = name.split(":").length < RESOURCE_DEPTH || (await store.events({ resource: name, limit: 1, signal })).items.length > 0;
      return { store: store.name, resource: name, contended, isResource };
    }),
  );
}

function compareResourceCounts(a: Omit<ResourceCount, "trend">, b: Omit<ResourceCount, "trend">): number {
  return b.contended - a.contended || a.resource.localeCompare(b.resource) || a.store.localeCompare(b.store);
}

/**
 * Bucket starts covering [from, to), aligned to the bucket size (UTC minutes / hours / days).
 * `to` is exclusive, as in every store: a range ending at a midnight has no bucket of the day
 * after (which would also make the previous window a bucket longer). Windows "up to now" end
 * at now + 1 ms, so the bucket holding now is always there.
 */
export function bucketAxis(fromMs: number, toMs: number, bucketMs: number): number[] {
  const axis: number[] = [];
  for (let t = Math.floor(fromMs / bucketMs) * bucketMs; t < toMs; t += bucketMs) axis.push(t);
  return axis;
}

/** Where a bucket starting at `start` lands on `axis` (undefined: outside it). */
function axisSlots(axis: readonly number[]): (start: number) => number | undefined {
  const index = new Map(axis.map((t, i) => [t, i]));
  const bucketMs = axis.length > 1 ? axis[1]! - axis[0]! : 0;
  // Stores align buckets the same way; tolerate one that reports a mid-bucket start.
  return (start) => index.get(start) ?? (bucketMs > 0 ? index.get(Math.floor(start / bucketMs) * bucketMs) : undefined);
}

/**
 * Sum the stores' buckets onto the axis; buckets outside it are ignored, gaps are
 * zeros. With `depth`, contention prefixes are cut to that many segments (deeper
 * names sum into their prefix); `hasPrefixes: false` skips contention altogether.
 */
export function mergeBuckets(
  axis: readonly number[],
  perStore: readonly StatsBucket[][],
  { hasPrefixes = true, depth }: { hasPrefixes?: boolean; depth?: number } = {},
): MergedBucket[] {
  // The same few hundred names recur in every bucket: cut each one once.
  const cut = new Map<string, string>();
  const prefixOf = (name: string): string => {
    if (depth === undefined) return name;
    let prefix = cut.get(name);
    if (prefix === undefined) cut.set(name, (prefix = resourcePrefix(name, depth)));
    return prefix;
  };
  const slotOf = axisSlots(axis);
  const merged: MergedBucket[] = axis.map(() => ({
    counts: {},
    holdHistogram: new Array<number>(HOLD_HISTOGRAM_BOUNDS_MS.length + 1).fill(0),
    contendedByPrefix: new Map(),
  }));
  for (const buckets of perStore) {
    for (const bucket of buckets) {
      const i = slotOf(bucket.start.getTime());
      if (i === undefined) continue;
      const target = merged[i]!;
      for (const [kind, n] of Object.entries(bucket.counts) as [CounterKind, number][]) {
        if (typeof n === "number" && n !== 0) target.counts[kind] = (target.counts[kind] ?? 0) + n;
      }
      bucket.holdHistogram.forEach((n, j) => {
        if (j < target.holdHistogram.length) target.holdHistogram[j]! += n;
      });
      if (!hasPrefixes) continue;
      for (const name in bucket.contendedByPrefix) {
        const prefix = prefixOf(name);
        target.contendedByPrefix.set(prefix, (target.contendedByPrefix.get(prefix) ?? 0) + bucket.contendedByPrefix[name]!);
      }
    }
  }
  return merged;
}

function count(bucket: MergedBucket, kind: CounterKind): number {
  return bucket.counts[kind] ?? 0;
}

function sumKind(buckets: readonly MergedBucket[], kind: CounterKind): number {
  return buckets.reduce((sum, b) => sum + count(b, kind), 0);
}

function ratio(numerator: number, denominator: number): number | null {
  return denominator > 0 ? numerator / denominator : null;
}

export function computeTiles(buckets: readonly MergedBucket[], activeLeases: number, windowMinutes: number): OverviewTiles {
  const acquired = sumKind(buckets, "acquired");
  const contended = sumKind(buckets, "contended");
  const released = sumKind(buckets, "released");
  const expired = sumKind(buckets, "expired");
  return {
    activeLeases,
    acquired,
    acquisitionsPerMinute: windowMinutes > 0 ? acquired / windowMinutes : 0,
    contended,
    contentionRate: ratio(contended, contended + acquired),
    released,
    expired,
    forceReleased: sumKind(buckets, "force_released"),
    expiredToReleased: ratio(expired, released),
    renewFailed: sumKind(buckets, "renew_failed"),
    lost: sumKind(buckets, "lost"),
    fencingRejected: sumKind(buckets, "fencing_rejected"),
    renewed: sumKind(buckets, "renewed"),
  };
}

function sumPrefixes(buckets: readonly MergedBucket[]): Map<string, number> {
  const totals = new Map<string, number>();
  for (const b of buckets) for (const [p, n] of b.contendedByPrefix) totals.set(p, (totals.get(p) ?? 0) + n);
  return totals;
}

/**
 * Active leases over time come from the counters, walking back from the live
 * count: active at the end of bucket i = active now − the net change of every
 * later bucket (acquired − released − expired − force_released). A lease held
 * but lapsed and not yet swept still counts, as it does in `countActive()`.
 */
export function buildPoints(
  axis: readonly number[],
  buckets: readonly MergedBucket[],
  activeNow: number,
  stackPrefixes: readonly string[],
): OverviewPoint[] {
  const active = new Array<number>(axis.length).fill(0);
  let running = activeNow;
  for (let i = axis.length - 1; i >= 0; i--) {
    active[i] = Math.max(0, running);
    const b = buckets[i]!;
    running -= count(b, "acquired") - count(b, "released") - count(b, "expired") - count(b, "force_released");
  }
  return axis.map((t, i) => {
    const b = buckets[i]!;
    const acquired = count(b, "acquired");
    const contended = count(b, "contended");
    const released = count(b, "released");
    const expired = count(b, "expired");
    const stack: Record<string, number> = {};
    let stacked = 0;
    stackPrefixes.forEach((prefix, j) => {
      const n = b.contendedByPrefix.get(prefix) ?? 0;
      stack[`c${j}`] = n;
      stacked += n;
    });
    // "other" is measured against the exact counter: a store that names only its
    // top prefixes per bucket still stacks up to every failed acquire.
    stack[OTHER_KEY] = Math.max(0, contended - stacked);
    return {
      t,
      acquired,
      contended,
      contentionRate: roundTo(ratio(contended, contended + acquired), 4),
      released,
      expired,
      forceReleased: count(b, "force_released"),
      expiredToReleased: roundTo(ratio(expired, released), 4),
      p50: roundTo(histogramQuantile(b.holdHistogram, 0.5), 1),
      p95: roundTo(histogramQuantile(b.holdHistogram, 0.95), 1),
      p99: roundTo(histogramQuantile(b.holdHistogram, 0.99), 1),
      active: active[i]!,
      stack,
    };
  });
}

/**
 * Chart points go to the browser twice (HTML and the live payload) and up to 1 440
 * at a time; digits past these are noise for a chart (quantiles are estimated
 * within a histogram bucket anyway), so they are not sent.
 */
function roundTo(value: number | null, decimals: number): number | null {
  if (value === null) return null;
  const scale = 10 ** decimals;
  return Math.round(value * scale) / scale;
}

export function buildHistogram(buckets: readonly MergedBucket[]): HistogramBar[] {
  const totals = new Array<number>(HOLD_HISTOGRAM_BOUNDS_MS.length + 1).fill(0);
  for (const b of buckets) b.holdHistogram.forEach((n, i) => (totals[i]! += n));
  return totals.map((n, i) => {
    const le = HOLD_HISTOGRAM_BOUNDS_MS[i] ?? null;
    const label = le === null ? `> ${formatBound(HOLD_HISTOGRAM_BOUNDS_MS[HOLD_HISTOGRAM_BOUNDS_MS.length - 1]!)}` : `≤ ${formatBound(le)}`;
    return { label, le, count: n };
  });
}

/**
 * `/` and `/api/overview`: parse the URL parameters, then read. Reads of the
 * configured stores are shared between identical requests for OVERVIEW_SHARE_MS;
 * callers that bring their own stores or clock (tests, the benchmark's read-model
 * timings) always read afresh.
 */
export async function getOverviewFromSearch(search: SearchParamsInput, options: ReadOptions): Promise<ReadResult<OverviewView>> {
  const parsed = parseOverviewParams(search, options.nowMs);
  if (!parsed.ok) return parsed;
  if (options.entries || options.nowMs !== undefined) return getOverview(parsed.params, options);
  // One read serves every caller who asks meanwhile: one caller leaving must not cancel it for the others
  // (it is still bounded by the per-store timeout and statement_timeout).
  const sharedOptions: ReadOptions = { ...options };
  delete sharedOptions.signal;
  return sharedReads.share(overviewReadKey(parsed.params, options.scope ?? { kind: "all" }), () => getOverview(parsed.params, sharedOptions));
}

/** Same store, prefix, depth and window → same answer; a custom window also keys on its bounds. */
export function overviewReadKey(params: OverviewParams, scope: ViewerScope): string {
  const { window, from, to, requested } = params.range;
  // The range asked for too: two ranges widened to the same days share counts but not the header.
  // A named window ending at `at=` is as fixed as a custom one.
  const bounds = window === "custom" || params.range.endsAt ? [from, to, requested?.from, requested?.to].map((d) => d?.toISOString() ?? "").join("/") : "";
  // Viewers with different scopes never share an answer.
  const scopeKey = scope.kind === "all" ? null : scope.prefixes;
  return JSON.stringify([params.store ?? null, params.prefix ?? null, params.depth, window, bounds, scopeKey]);
}
