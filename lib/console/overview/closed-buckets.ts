/**
 * Server-only: stats buckets that can no longer change, remembered per store so
 * a 7-day overview re-reads only its newest hour instead of all 168.
 *
 * A bucket is closed once it ended CLOSED_BUCKET_SETTLE_MS ago. Stores only add
 * to the bucket of the event's own time (Redis counters are bumped in the same
 * script as the event; Postgres rollups are recomputed from events whose time is
 * already past, and the store's own safety margin is shorter than ours), so a
 * closed bucket reads the same every time. The settle margin is on the console's
 * clock and generous on purpose: it also absorbs modest skew from a store's clock.
 * Entries still expire after CLOSED_BUCKET_TTL_MS, which bounds how long history
 * written behind the stores' back (a backfill, a restored snapshot) goes unseen.
 */
import type { LeaseStore, StatsBucket, StatsQuery } from "@leasewatch/lease";

export const CLOSED_BUCKET_SETTLE_MS = 2 * 60_000;
export const CLOSED_BUCKET_TTL_MS = 10 * 60_000;

export type StatsReadQuery = StatsQuery & { prefixDepth: number };

export interface ClosedBucketCache {
  /** The buckets `store.stats(query)` would return; closed ones come from memory when held. */
  readStats(store: LeaseStore, query: StatsReadQuery, nowMs: number): Promise<StatsBucket[]>;
}

interface Held {
  bucket: StatsBucket;
  heldAt: number;
}

export function createClosedBucketCache({
  settleMs = CLOSED_BUCKET_SETTLE_MS,
  ttlMs = CLOSED_BUCKET_TTL_MS,
}: { settleMs?: number; ttlMs?: number } = {}): ClosedBucketCache {
  // Keyed by the store object (not its name): tests and benchmarks make many stores with one name.
  const byStore = new WeakMap<LeaseStore, Map<string, Map<number, Held>>>();

  const seriesOf = (store: LeaseStore, query: StatsReadQuery): Map<number, Held> => {
    let series = byStore.get(store);
    if (!series) byStore.set(store, (series = new Map()));
    const key = `${query.bucketMs}/${query.prefixDepth}`;
    let held = series.get(key);
    if (!held) series.set(key, (held = new Map()));
    return held;
  };

  return {
    async readStats(store, query, nowMs) {
      const { bucketMs } = query;
      const held = seriesOf(store, query);
      for (const [start, entry] of held) if (nowMs - entry.heldAt > ttlMs) held.delete(start);

      // Stores answer with every bucket whose start lies in [floor(from), to).
      const first = Math.floor(query.from.getTime() / bucketMs) * bucketMs;
      const end = query.to.getTime();
      const known: StatsBucket[] = [];
      let next = first;
      while (next < end && held.has(next)) {
        known.push(held.get(next)!.bucket);
        next += bucketMs;
      }
      if (next >= end) return known;

      const fresh = await store.stats({ ...query, from: new Date(next) });
      const closedBefore = nowMs - settleMs;
      for (const bucket of fresh) {
        const start = bucket.start.getTime();
        if (start + bucketMs <= closedBefore) held.set(start, { bucket, heldAt: nowMs });
      }
      return [...known, ...fresh];
    },
  };
}
