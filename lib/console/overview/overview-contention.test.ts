/**
 * The overview's contention tables and chart from rollups alone, against real
 * stores (own Postgres schema, own Redis namespace): which rows are resources
 * and which are prefixes, and exact prefix counts when a store's depth-3
 * breakdown is cut to its top prefixes per bucket.
 */
import { randomUUID } from "node:crypto";
import { Pool } from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LeaseStore, type StatsBucket } from "@leasewatch/lease";
import { TOP_PREFIXES_PER_BUCKET } from "@leasewatch/lease/internal";
import { writePostgresEvents } from "@/scripts/seed/pg-seed";
import type { SyntheticEvent } from "@/scripts/seed/history";
import { getOverviewFromSearch, isBreakdownComplete, mergeBuckets, OTHER_KEY } from "./get-overview";
import type { OverviewView, ReadResult } from "@/lib/console/shared/views";
import { setUpStorePair } from "@/test/support/store-pair";

function viewOf(result: ReadResult<OverviewView>): OverviewView {
  if (!result.ok) throw new Error(`expected a view, got a problem: ${result.problem.param}: ${result.problem.message}`);
  return result.view;
}

/** Holds `resource` as "holder", then has "waiter" refused `times` times. */
async function contend(store: LeaseStore, resource: string, times: number): Promise<void> {
  const held = await store.acquire({ resource, owner: "holder", task: "t", ttlMs: 60_000 });
  if (!held.acquired) throw new Error(`expected to acquire ${resource}`);
  for (let i = 0; i < times; i++) {
    const refused = await store.acquire({ resource, owner: "waiter", task: "t", ttlMs: 60_000 });
    if (refused.acquired) throw new Error(`expected ${resource} to be refused`);
  }
}

const stores = setUpStorePair({ pg: "pg-c", redis: "redis-c" });
/** Writes events at chosen times into the store's own table (as the demo seeder does). */
let pgPool: Pool;

const MINUTE = 60_000;

beforeEach(async () => {
  pgPool = new Pool({ connectionString: stores.pgSchema.connectionString, max: 1 });
});

afterEach(async () => {
  await pgPool.end();
});

describe("most contended resources, from rollups", () => {
  it("links whole resources to their lease page and longer names to their prefix", async () => {
    // Two segments: the name is the resource. Three: a real resource, checked by its history.
    // Four and five: only their first three segments are counted, which is no resource of its own.
    await contend(stores.redis, "solo:job", 1);
    await contend(stores.redis, "t1:billing:2026-04", 3);
    await contend(stores.redis, "t2:export:day:1", 2);
    await contend(stores.redis, "t2:export:day:2:part", 2);
    await contend(stores.pgStore, "t3:sync:a:b", 1);

    const view = viewOf(await getOverviewFromSearch({ window: "15m" }, { entries: [{ store: stores.pgStore }, { store: stores.redis }] }));
    expect(view.resourceDepth).toBe(3);
    expect(view.topResources).toMatchObject([
      { store: "redis-c", resource: "t2:export:day", contended: 4, isResource: false },
      { store: "redis-c", resource: "t1:billing:2026-04", contended: 3, isResource: true },
      { store: "redis-c", resource: "solo:job", contended: 1, isResource: true },
      { store: "pg-c", resource: "t3:sync:a", contended: 1, isResource: false },
    ]);
    // The chosen depth (default 2) groups the same counts by two segments.
    expect(view.topPrefixes.map((p) => [p.prefix, p.contended])).toEqual([
      ["t2:export", 4],
      ["t1:billing", 3],
      ["solo:job", 1],
      ["t3:sync", 1],
    ]);
    expect(view.topPrefixes.reduce((n, p) => n + p.share, 0)).toBeCloseTo(1);
    // Each row's sparkline is its own count over the window; the namespace is new, so the window before had none.
    for (const row of [...view.topPrefixes, ...view.topResources]) {
      expect(row.trend.spark.reduce((a, b) => a + b, 0)).toBe(row.contended);
      expect(row.trend.previous).toBe(0);
    }
  });

  it("counts prefixes exactly when a store keeps only its top depth-3 names per bucket", async () => {
    // More distinct depth-3 names in one minute than Postgres keeps per bucket: its
    // depth-3 breakdown is cut, so depth-2 counts must come from the store, not be summed here.
    // Written at fixed times inside one closed minute (live acquires could straddle a
    // minute boundary, leaving two buckets that are each small enough not to be cut).
    const names = TOP_PREFIXES_PER_BUCKET + 20;
    const minute = Math.floor(Date.now() / MINUTE) * MINUTE - 3 * MINUTE;
    const events: SyntheticEvent[] = Array.from({ length: names }, (_, i) => ({
      at: minute + 1_000 + i * 100,
      kind: "contended",
      resource: `${i % 3 === 0 ? "hot" : "cold"}:area:r${i}`,
      leaseId: randomUUID(),
      owner: "waiter",
      task: "t",
      fencingToken: String(i),
    }));
    await writePostgresEvents(pgPool, stores.pgSchema.schema, events);
    await stores.pgStore.refreshRollups();
    const hot = Math.ceil(names / 3);

    // The scenario happened: one bucket holds every failed acquire, and its depth-3 breakdown is cut.
    const depth3 = await stores.pgStore.stats({ from: new Date(minute - 5 * MINUTE), to: new Date(minute + 5 * MINUTE), bucketMs: MINUTE, prefixDepth: 3 });
    const contendedBuckets = depth3.filter((b) => b.counts.contended > 0);
    expect(contendedBuckets.map((b) => [b.start.getTime(), b.counts.contended])).toEqual([[minute, names]]);
    expect(Object.keys(contendedBuckets[0]!.contendedByPrefix)).toHaveLength(TOP_PREFIXES_PER_BUCKET);
    expect(isBreakdownComplete(depth3)).toBe(false);

    const view = viewOf(await getOverviewFromSearch({ window: "15m", depth: "2" }, { entries: [{ store: stores.pgStore }] }));
    expect(view.total.contended).toBe(names);
    expect(view.topPrefixes.map((p) => [p.prefix, p.contended])).toEqual([
      ["cold:area", names - hot],
      ["hot:area", hot],
    ]);
    // The stacked chart adds up to every failed acquire.
    const stacked = view.points.reduce((n, p) => n + Object.values(p.stack).reduce((a, b) => a + b, 0), 0);
    expect(stacked).toBe(names);
    expect(view.topResources).toHaveLength(10);
    expect(view.topResources.every((r) => r.isResource && r.contended === 1)).toBe(true);
  });
});

describe("regrouping a depth-3 breakdown", () => {
  const bucket = (contended: number, byPrefix: Record<string, number>): StatsBucket => ({
    start: new Date(0),
    counts: { acquired: 0, released: 0, expired: 0, force_released: 0, contended, renew_failed: 0, lost: 0, fencing_rejected: 0, renewed: 0 },
    holdHistogram: [],
    holdMsSum: 0,
    contendedByPrefix: byPrefix,
  });

  it("sums longer names into their shorter prefix, and knows when the breakdown is complete", () => {
    const complete = [bucket(6, { "a:b:c": 2, "a:b:d": 3, e: 1 })];
    expect(isBreakdownComplete(complete)).toBe(true);
    const cutTo = (depth: number) => Object.fromEntries(mergeBuckets([0], [complete], { depth })[0]!.contendedByPrefix);
    expect(cutTo(3)).toEqual({ "a:b:c": 2, "a:b:d": 3, e: 1 });
    expect(cutTo(2)).toEqual({ "a:b": 5, e: 1 });
    expect(cutTo(1)).toEqual({ a: 5, e: 1 });
    expect(isBreakdownComplete([...complete, bucket(9, { "a:b:c": 2 })])).toBe(false);
  });

  it("names the 'other' band only when something is left outside the stacked prefixes", async () => {
    await contend(stores.redis, "only:one:here", 2);
    const view = viewOf(await getOverviewFromSearch({ window: "15m" }, { entries: [{ store: stores.redis }] }));
    expect(view.stackKeys.map((k) => k.key)).toEqual(["c0"]);
    expect(view.points.every((p) => (p.stack[OTHER_KEY] ?? 0) === 0)).toBe(true);
  });
});
