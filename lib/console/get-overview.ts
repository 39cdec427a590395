/**
 * Server-only read model of the overview `/`: tiles per store and in total, and
 * the chart series over the selected window — all from the stores' rollups
 * (`stats()`), never from scans of raw events, so a 7-day chart stays cheap. The
 * one raw read is a bounded sample of recent contention events for the
 * "top contended resources" table (rollups only keep prefixes).
 */
import { histogramQuantile } from "@/lib/lease/histogram";
import { HOLD_HISTOGRAM_BOUNDS_MS, type CounterKind, type StatsBucket } from "@/lib/lease/types";
import { fanOutStores, resolveEntries, selectEntries, type ReadOptions } from "./fan-out";
import { formatBound } from "./format";
import { parseOverviewParams, type OverviewParams, type SearchParamsInput } from "./params";
import type {
  HistogramBar,
  OverviewPoint,
  OverviewTiles,
  OverviewView,
  PrefixCount,
  ReadResult,
  ResourceCount,
  StoreOverview,
} from "./views";

/** Prefixes stacked by name in the contention chart; the rest are summed as "other". */
export const TOP_STACK_PREFIXES = 5;
export const TOP_TABLE_ROWS = 10;
/** Contention events sampled per store for the top-resources table. */
export const RESOURCE_SAMPLE_LIMIT = 500;
export const OTHER_KEY = "other";

interface StoreRead {
  buckets: StatsBucket[];
  active: number;
  contendedSample: Array<{ resource: string }>;
}

/** A bucket summed over stores; `counts` only has the kinds that occurred. */
export interface MergedBucket {
  counts: Partial<Record<CounterKind, number>>;
  holdHistogram: number[];
  contendedByPrefix: Map<string, number>;
}

export async function getOverview(params: OverviewParams, options: ReadOptions = {}): Promise<ReadResult<OverviewView>> {
  const all = await resolveEntries(options);
  const selected = selectEntries(all, params.store);
  if (!selected.ok) return selected;
  const { from, to, bucketMs, window } = params.range;

  const outcomes = await fanOutStores(
    selected.entries,
    async (store): Promise<StoreRead> => {
      const [buckets, active, sample] = await Promise.all([
        store.stats({ from, to, bucketMs, prefixDepth: params.depth }),
        store.countActive(),
        store.events({ kinds: ["contended"], from, to, limit: RESOURCE_SAMPLE_LIMIT }),
      ]);
      return { buckets, active, contendedSample: sample.items };
    },
    options.timeoutMs,
  );

  const axis = bucketAxis(from.getTime(), to.getTime(), bucketMs);
  const windowMinutes = (to.getTime() - from.getTime()) / 60_000;
  const stores = outcomes.map((o) => {
    if (!o.ok) return o;
    const merged = mergeBuckets(axis, [o.data.buckets]);
    return { ...o, data: { tiles: computeTiles(merged, o.data.active, windowMinutes) } satisfies StoreOverview };
  });

  const reads = outcomes.flatMap((o) => (o.ok ? [{ store: o.store, ...o.data }] : []));
  const merged = mergeBuckets(axis, reads.map((r) => r.buckets));
  const activeNow = reads.reduce((sum, r) => sum + r.active, 0);
  const prefixTotals = sumPrefixes(merged);
  const stackPrefixes = [...prefixTotals.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP_STACK_PREFIXES).map(([p]) => p);
  const totalContendedByPrefix = [...prefixTotals.values()].reduce((a, b) => a + b, 0);

  return {
    ok: true,
    view: {
      readAt: new Date(options.nowMs ?? Date.now()).toISOString(),
      window,
      from: from.toISOString(),
      to: to.toISOString(),
      bucketMs,
      depth: params.depth,
      selectedStore: params.store ?? null,
      storeNames: all.map((e) => e.store.name),
      stores,
      total: computeTiles(merged, activeNow, windowMinutes),
      points: buildPoints(axis, merged, activeNow, stackPrefixes),
      stackKeys: [
        ...stackPrefixes.map((prefix, i) => ({ key: `c${i}`, prefix })),
        ...(prefixTotals.size > stackPrefixes.length ? [{ key: OTHER_KEY, prefix: "other prefixes" }] : []),
      ],
      histogram: buildHistogram(merged),
      topPrefixes: [...prefixTotals.entries()]
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .slice(0, TOP_TABLE_ROWS)
        .map(([prefix, contended]): PrefixCount => ({ prefix, contended, share: contended / totalContendedByPrefix })),
      topResources: topResources(reads),
      topResourcesSample: reads.reduce((sum, r) => sum + r.contendedSample.length, 0),
    },
  };
}

/** Bucket starts covering [from, to], aligned to the bucket size (UTC minutes / hours). */
export function bucketAxis(fromMs: number, toMs: number, bucketMs: number): number[] {
  const axis: number[] = [];
  for (let t = Math.floor(fromMs / bucketMs) * bucketMs; t <= toMs; t += bucketMs) axis.push(t);
  return axis;
}

/** Sum the stores' buckets onto the axis; buckets outside it are ignored, gaps are zeros. */
export function mergeBuckets(axis: readonly number[], perStore: readonly StatsBucket[][]): MergedBucket[] {
  const index = new Map(axis.map((t, i) => [t, i]));
  const merged: MergedBucket[] = axis.map(() => ({
    counts: {},
    holdHistogram: new Array<number>(HOLD_HISTOGRAM_BOUNDS_MS.length + 1).fill(0),
    contendedByPrefix: new Map(),
  }));
  const bucketMs = axis.length > 1 ? axis[1]! - axis[0]! : 0;
  for (const buckets of perStore) {
    for (const bucket of buckets) {
      const start = bucket.start.getTime();
      // Stores align buckets the same way; tolerate one that reports a mid-bucket start.
      const i = index.get(start) ?? (bucketMs > 0 ? index.get(Math.floor(start / bucketMs) * bucketMs) : undefined);
      if (i === undefined) continue;
      const target = merged[i]!;
      for (const [kind, n] of Object.entries(bucket.counts) as [CounterKind, number][]) {
        if (typeof n === "number" && n !== 0) target.counts[kind] = (target.counts[kind] ?? 0) + n;
      }
      bucket.holdHistogram.forEach((n, j) => {
        if (j < target.holdHistogram.length) target.holdHistogram[j]! += n;
      });
      for (const [prefix, n] of Object.entries(bucket.contendedByPrefix)) {
        target.contendedByPrefix.set(prefix, (target.contendedByPrefix.get(prefix) ?? 0) + n);
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
    let other = 0;
    for (const n of b.contendedByPrefix.values()) other += n;
    stack[OTHER_KEY] = Math.max(0, other - stacked);
    return {
      t,
      acquired,
      contended,
      contentionRate: ratio(contended, contended + acquired),
      released,
      expired,
      forceReleased: count(b, "force_released"),
      expiredToReleased: ratio(expired, released),
      p50: histogramQuantile(b.holdHistogram, 0.5),
      p95: histogramQuantile(b.holdHistogram, 0.95),
      p99: histogramQuantile(b.holdHistogram, 0.99),
      active: active[i]!,
      stack,
    };
  });
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

function topResources(reads: ReadonlyArray<{ store: string; contendedSample: Array<{ resource: string }> }>): ResourceCount[] {
  const counts = new Map<string, ResourceCount>();
  for (const read of reads) {
    for (const event of read.contendedSample) {
      const key = `${read.store}\u0000${event.resource}`;
      const row = counts.get(key) ?? { store: read.store, resource: event.resource, contended: 0 };
      row.contended += 1;
      counts.set(key, row);
    }
  }
  return [...counts.values()].sort((a, b) => b.contended - a.contended || a.resource.localeCompare(b.resource)).slice(0, TOP_TABLE_ROWS);
}

/** `/` and `/api/overview`: parse the URL parameters, then read. */
export async function getOverviewFromSearch(search: SearchParamsInput, options: ReadOptions = {}): Promise<ReadResult<OverviewView>> {
  const parsed = parseOverviewParams(search, options.nowMs);
  return parsed.ok ? getOverview(parsed.params, options) : parsed;
}
