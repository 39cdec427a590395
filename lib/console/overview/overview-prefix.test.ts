/**
 * The overview narrowed by `prefix=`, against real stores (own Postgres schema,
 * own Redis namespace): every count it shows equals what the store's own events
 * say for that prefix and window, and resources outside the prefix count nowhere.
 */
import { describe, expect, it } from "vitest";
import { histogramQuantile, HOLD_HISTOGRAM_BOUNDS_MS, holdBucketIndex, type LeaseEvent, type LeaseStore } from "@leasewatch/lease";
import { getOverviewFromSearch } from "./get-overview";
import { parseOverviewParams } from "@/lib/console/shared/params";
import { countActiveUnder, readPrefixBuckets } from "@/lib/console/shared/prefix-overview";
import type { OverviewView, ReadResult } from "@/lib/console/shared/views";
import { setUpStorePair } from "@/test/support/store-pair";

const PREFIX = "tp:a";

function viewOf(result: ReadResult<OverviewView>): OverviewView {
  if (!result.ok) throw new Error(`expected a view, got a problem: ${result.problem.param}: ${result.problem.message}`);
  return result.view;
}

/**
 * A little of everything under `resource`: releases, contention, an expiry
 * recorded by sweep, a force-release, a fencing rejection, and a lease left held.
 */
async function workload(store: LeaseStore, resource: string, rounds: number): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    const held = await store.acquire({ resource: `${resource}:r${i}`, owner: "w1", task: "t", ttlMs: 60_000 });
    if (!held.acquired) throw new Error("expected to acquire");
    for (let j = 0; j <= i; j++) await store.acquire({ resource: `${resource}:r${i}`, owner: "w2", task: "t", ttlMs: 60_000 });
    if (i % 2 === 0) await store.release({ resource: `${resource}:r${i}`, leaseId: held.lease.leaseId });
    else await store.forceRelease({ resource: `${resource}:r${i}`, leaseId: held.lease.leaseId, actor: "op", reason: "test" });
  }
  const short = await store.acquire({ resource: `${resource}:short`, owner: "w3", task: "t", ttlMs: 100 });
  if (!short.acquired) throw new Error("expected to acquire");
  await store.reportFencingRejection({ resource: `${resource}:short`, fencingToken: String(short.lease.fencingToken), seenToken: "99999999999999999", by: "db" });
  await new Promise((resolve) => setTimeout(resolve, 150));
  await store.sweep();
  await store.acquire({ resource: `${resource}:kept`, owner: "w4", task: "t", ttlMs: 60_000 });
}

/** Every event in [from, to), read without a prefix and filtered here, so the store's prefix read is checked too. */
async function eventsUnder(store: LeaseStore, prefix: string, view: OverviewView): Promise<LeaseEvent[]> {
  const all: LeaseEvent[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.events({ from: new Date(view.from), to: new Date(view.to), limit: 500, cursor });
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return all.filter((e) => e.resource.startsWith(prefix));
}

function countKind(events: readonly LeaseEvent[], kind: LeaseEvent["kind"]): number {
  return events.filter((e) => e.kind === kind).length;
}

function holdHistogram(events: readonly LeaseEvent[]): number[] {
  const bars = new Array<number>(HOLD_HISTOGRAM_BOUNDS_MS.length + 1).fill(0);
  for (const e of events) if (e.holdMs !== undefined && ["released", "expired", "force_released"].includes(e.kind)) bars[holdBucketIndex(e.holdMs)]! += 1;
  return bars;
}

const stores = setUpStorePair({ pg: "pg-p", redis: "redis-p" });

describe("the overview narrowed to a prefix", () => {
  it.each(["pg", "redis"] as const)("counts on %s equal the store's events under the prefix", async (kind) => {
    const store = kind === "pg" ? stores.pgStore : stores.redis;
    await workload(store, `${PREFIX}:x`, 4);
    await workload(store, `${PREFIX}b:y`, 1); // shares the string prefix "tp:a", so it is under it too
    await workload(store, "tp:other", 3);
    await workload(store, "zz", 2);

    const view = viewOf(await getOverviewFromSearch({ window: "15m", prefix: PREFIX }, { entries: [{ store }] }));
    expect(view.prefix).toBe(PREFIX);
    const events = await eventsUnder(store, PREFIX, view);
    // The workload left events under the prefix and outside it, so equality below is a real check.
    expect(events.length).toBeGreaterThan(0);
    expect((await eventsUnder(store, "", view)).length).toBeGreaterThan(events.length);

    const t = view.total;
    expect(t.acquired).toBe(countKind(events, "acquired"));
    expect(t.released).toBe(countKind(events, "released"));
    expect(t.expired).toBe(countKind(events, "expired"));
    expect(t.forceReleased).toBe(countKind(events, "force_released"));
    expect(t.contended).toBe(countKind(events, "contended"));
    expect(t.fencingRejected).toBe(countKind(events, "fencing_rejected"));
    expect(t.renewFailed).toBe(countKind(events, "renew_failed"));
    // What the workload did under the prefix, as a check on the events themselves: 4 + 1 rounds, plus a short and a kept lease each.
    expect(t.acquired).toBe(4 + 2 + 1 + 2);
    expect(t.contended).toBe(1 + 2 + 3 + 4 + 1);
    expect(t.expired).toBe(2);
    expect(t.fencingRejected).toBe(2);
    expect(t.activeLeases).toBe(2);

    // Hold quantiles and histogram, from the terminal events' holdMs.
    expect(view.histogram.map((b) => b.count)).toEqual(holdHistogram(events));
    const byBucket = new Map<number, LeaseEvent[]>();
    for (const e of events) {
      const start = Math.floor(e.at.getTime() / view.bucketMs) * view.bucketMs;
      byBucket.set(start, [...(byBucket.get(start) ?? []), e]);
    }
    for (const point of view.points) {
      const inBucket = byBucket.get(point.t) ?? [];
      expect(point.acquired).toBe(countKind(inBucket, "acquired"));
      expect(point.contended).toBe(countKind(inBucket, "contended"));
      for (const [q, key] of [[0.5, "p50"], [0.95, "p95"], [0.99, "p99"]] as const) {
        const expected = histogramQuantile(holdHistogram(inBucket), q);
        expect(point[key]).toBe(expected === null ? null : Math.round(expected * 10) / 10);
      }
    }

    // Contention tables: only names under the prefix, with the events' counts.
    // Rows group by whole `:` segments: "tp:a" holds "tp:a:x:…", not "tp:ab:…".
    const contendedUnder = (name: string) =>
      events.filter((e) => e.kind === "contended" && (e.resource === name || e.resource.startsWith(`${name}:`))).length;
    expect(view.topPrefixes.map((p) => p.prefix).sort()).toEqual(["tp:a", "tp:ab"]);
    for (const row of view.topPrefixes) {
      expect(row.prefix.startsWith("tp:a")).toBe(true);
      expect(row.contended).toBe(contendedUnder(row.prefix));
    }
    for (const row of view.topResources) {
      expect(row.resource.startsWith(PREFIX)).toBe(true);
      expect(row.contended).toBe(contendedUnder(row.resource));
    }
    expect(view.stackKeys.every((k) => k.prefix.startsWith("tp:a"))).toBe(true);
    const store0 = view.stores[0]!;
    if (!store0.ok) throw new Error(store0.error);
    expect(store0.data.tiles).toEqual(t);
  });

  it("narrows both stores at once and sums them", async () => {
    await workload(stores.pgStore, `${PREFIX}:x`, 2);
    await workload(stores.redis, `${PREFIX}:x`, 3);
    await workload(stores.redis, "zz", 2);
    const entries = [{ store: stores.pgStore }, { store: stores.redis }];
    const view = viewOf(await getOverviewFromSearch({ window: "1h", prefix: PREFIX }, { entries }));
    const pgEvents = await eventsUnder(stores.pgStore, PREFIX, view);
    const redisEvents = await eventsUnder(stores.redis, PREFIX, view);
    expect(view.total.acquired).toBe(countKind(pgEvents, "acquired") + countKind(redisEvents, "acquired"));
    expect(view.total.contended).toBe(countKind(pgEvents, "contended") + countKind(redisEvents, "contended"));
    expect(view.total.expired).toBe(countKind(pgEvents, "expired") + countKind(redisEvents, "expired"));
    expect(view.total.activeLeases).toBe(2); // one kept lease per store
  });

  it.each(["pg", "redis"] as const)("on %s, refuses past its bound instead of counting part of the events", async (kind) => {
    const store = kind === "pg" ? stores.pgStore : stores.redis;
    await workload(store, `${PREFIX}:x`, 2); // 11 events (4 acquired), 1 lease left
    const now = Date.now();
    const range = { from: new Date(now - 15 * 60_000), to: new Date(now + 1), bucketMs: 60_000 };
    const previous = { from: new Date(now - 30 * 60_000), to: range.from, bucketMs: 60_000 };
    const within = await readPrefixBuckets(store, PREFIX, range, previous, 100);
    if (!within.ok) throw new Error("expected the events within the bound");
    expect(within.data.buckets.reduce((n, b) => n + b.counts.acquired, 0)).toBe(4);
    expect(await readPrefixBuckets(store, PREFIX, range, previous, 5)).toEqual({ ok: false, limit: 5, what: "events" });
    expect(await countActiveUnder(store, PREFIX, 1)).toEqual({ ok: true, data: 1 });
    expect(await countActiveUnder(store, PREFIX, 0)).toEqual({ ok: false, limit: 0, what: "active leases" });
  });

  it("keeps the window asked for with a prefix, however long", () => {
    for (const window of ["24h", "7d", "30d"]) {
      const result = parseOverviewParams({ window, prefix: PREFIX });
      expect(result.ok && result.params.range.window).toBe(window);
    }
  });
});
