/**
 * The console's read models against real stores: a Redis store and a Postgres
 * store, each in its own namespace / schema, plus a Redis store pointed at a
 * closed port to prove one store being down never hides the others.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Lease, type LeaseStore, RedisLeaseStore } from "@leasewatch/lease";
import { sleep } from "@leasewatch/lease/testing";
import { getMetricsText } from "@/lib/console/metrics/get-metrics-text";
import { getLeaseDetailFromRoute } from "@/lib/console/leases/get-lease-detail";
import { getOverviewFromSearch } from "@/lib/console/overview/get-overview";
import { leaseHref } from "./links";
import { stuckCounts } from "@/lib/console/overview/stuck-counts";
import { listEventsFromSearch } from "@/lib/console/events/list-events";
import { listLeasesFromSearch } from "@/lib/console/leases/list-leases";
import type { StoreRef } from "@/lib/console/shared/fan-out";
import type { ReadResult } from "./views";
import { setUpStorePair } from "@/test/support/store-pair";

const DOWN_TIMEOUT_MS = 3_000;

function viewOf<T>(result: ReadResult<T>): T {
  if (!result.ok) throw new Error(`expected a view, got a problem: ${result.problem.param}: ${result.problem.message}`);
  return result.view;
}

async function mustAcquire(store: LeaseStore, resource: string, owner: string, ttlMs = 30_000, task = "task-1"): Promise<Lease> {
  const r = await store.acquire({ resource, owner, task, ttlMs });
  if (!r.acquired) throw new Error(`expected to acquire ${resource}`);
  return r.lease;
}

const stores = setUpStorePair({ pg: "pg-t", redis: "redis-t" });
let down: RedisLeaseStore;

beforeAll(() => {
  // Nothing listens on port 1: every call fails (connection refused) without touching a shared server.
  down = new RedisLeaseStore({ name: "redis-down", url: "redis://127.0.0.1:1" });
});

afterAll(async () => {
  await down.close().catch(() => undefined);
});

const both = (): StoreRef[] => [{ store: stores.pgStore }, { store: stores.redis }];

describe("listLeases", () => {
  it("narrows by prefix on every store and merges them in one order", async () => {
    await mustAcquire(stores.pgStore, "tenant_1:billing:a", "w1", 10_000);
    await mustAcquire(stores.redis, "tenant_1:billing:b", "w2", 20_000);
    await mustAcquire(stores.redis, "tenant_2:billing:c", "w3", 5_000);

    const all = viewOf(await listLeasesFromSearch({}, { entries: both() }));
    expect(all.items.map((l) => l.resource)).toEqual(["tenant_2:billing:c", "tenant_1:billing:a", "tenant_1:billing:b"]);
    expect(all.stores.every((s) => s.ok)).toBe(true);

    const narrowed = viewOf(await listLeasesFromSearch({ prefix: "tenant_1:" }, { entries: both() }));
    expect(narrowed.items.map((l) => `${l.store}/${l.resource}`).sort()).toEqual(["pg-t/tenant_1:billing:a", "redis-t/tenant_1:billing:b"]);
    const row = narrowed.items.find((l) => l.store === "redis-t")!;
    expect(row).toMatchObject({ owner: "w2", task: "task-1", state: "held", storeKind: "redis", renewals: 0 });
    expect(row.expiresInMs).toBeGreaterThan(0);
    expect(row.expiresInMs).toBeLessThanOrEqual(20_000);
    expect(Object.keys(narrowed.storeClocks).sort()).toEqual(["pg-t", "redis-t"]);
  });

  it("pages through both stores with cursors: every lease exactly once", async () => {
    const expected: string[] = [];
    for (let i = 0; i < 5; i++) {
      await mustAcquire(stores.pgStore, `page:pg:${i}`, "w");
      await mustAcquire(stores.redis, `page:redis:${i}`, "w");
      expected.push(`pg-t/page:pg:${i}`, `redis-t/page:redis:${i}`);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const view = viewOf(await listLeasesFromSearch({ limit: "2", sort: "newest", ...(cursor ? { cursor } : {}) }, { entries: both() }));
      seen.push(...view.items.map((l) => `${l.store}/${l.resource}`));
      cursor = view.nextCursor ?? undefined;
      pages += 1;
    } while (cursor && pages < 20);
    expect(seen.sort()).toEqual(expected.sort());
    expect(pages).toBeGreaterThan(1);
  });

  it("filters by state and lists expired leases from history", async () => {
    await mustAcquire(stores.redis, "state:long", "w", 60_000);
    const short = await mustAcquire(stores.redis, "state:short", "zombie", 150);
    await sleep(300);
    const lapsed = viewOf(await listLeasesFromSearch({ state: "lapsed" }, { entries: [{ store: stores.redis }] }));
    expect(lapsed.items.map((l) => l.resource)).toEqual(["state:short"]);
    expect(lapsed.items[0]!.state).toBe("lapsed");

    await stores.redis.sweep();
    const expired = viewOf(await listLeasesFromSearch({ state: "expired", window: "15m" }, { entries: [{ store: stores.redis }] }));
    expect(expired.mode).toBe("expired");
    expect(expired.expired).toHaveLength(1);
    expect(expired.expired[0]).toMatchObject({ resource: "state:short", owner: "zombie", leaseId: short.leaseId, fencingToken: short.fencingToken });
    expect(expired.expired[0]!.holdMs).toBeGreaterThanOrEqual(100);
  });

  it("state=stuck from a store whose read stopped at its bound: the tile's count for it is a floor, never the all-clear", async () => {
    for (let i = 0; i < 40; i++) await mustAcquire(stores.redis, `stuck:bounded:${i}`, "alive", 60_000);
    // The same namespace, read with a budget far below its 40 healthy leases.
    const bounded = new RedisLeaseStore({ name: "redis-t", url: stores.redisNs.url, namespace: stores.redisNs.namespace, readKeyBudget: 5 });
    try {
      const view = viewOf(await listLeasesFromSearch({ state: "stuck" }, { entries: [{ store: bounded }] }));
      expect(view.items).toEqual([]);
      expect(stuckCounts(view)).toEqual([{ store: "redis-t", count: 0, isCapped: true, isPartial: true }]);
      // Read in full, the same store has none: the count is exact, and "0" may be said.
      const full = viewOf(await listLeasesFromSearch({ state: "stuck" }, { entries: [{ store: stores.redis }] }));
      expect(stuckCounts(full)).toEqual([{ store: "redis-t", count: 0, isCapped: false, isPartial: false }]);
    } finally {
      await bounded.close();
    }
  });

  it("state=stuck lists the overdue and lapsed leases of every store, longest overdue first, and counts them", async () => {
    await mustAcquire(stores.pgStore, "stuck:healthy", "alive", 60_000);
    await mustAcquire(stores.redis, "stuck:redis-lapsed", "crashed-1", 150);
    await sleep(200);
    await mustAcquire(stores.pgStore, "stuck:pg-lapsed", "crashed-2", 150);
    await mustAcquire(stores.pgStore, "stuck:pg-lapsed-2", "crashed-3", 150);
    // A holder that stopped renewing 8 minutes into a 10-minute TTL: overdue by 8 − 6⅔ minutes, not lapsed.
    await mustAcquire(stores.pgStore, "stuck:pg-overdue", "hung", 10 * 60_000);
    const client = new pg.Client({ connectionString: stores.pgSchema.connectionString });
    await client.connect();
    try {
      await client.query(`UPDATE "${stores.pgSchema.schema}".leases SET renewed_at = now() - interval '8 minutes' WHERE resource = 'stuck:pg-overdue'`);
    } finally {
      await client.end();
    }
    await sleep(300);

    const view = viewOf(await listLeasesFromSearch({ state: "stuck" }, { entries: both() }));
    expect(view.items.map((l) => `${l.store}/${l.resource}/${l.state}`)).toEqual([
      "pg-t/stuck:pg-overdue/overdue",
      "redis-t/stuck:redis-lapsed/lapsed",
      "pg-t/stuck:pg-lapsed/lapsed",
      "pg-t/stuck:pg-lapsed-2/lapsed",
    ]);
    const overdue = view.items[0]!;
    expect(overdue.overdueByMs).toBeGreaterThanOrEqual(80_000 - 1_000);
    expect(overdue.overdueByMs).toBeLessThan(10 * 60_000 / 3);
    expect(view.items.every((l) => l.overdueByMs > 0)).toBe(true);
    expect(view.nextCursor).toBeNull();
    expect(view.stores.map((s) => (s.ok ? `${s.store}:${s.data.count}:${s.data.hasMore}` : s.store)).sort()).toEqual(["pg-t:3:false", "redis-t:1:false"]);

    // One of each state per store: a store with more says so, and the list has no next page.
    const capped = viewOf(await listLeasesFromSearch({ state: "stuck", limit: "1", store: "pg-t" }, { entries: both() }));
    expect(capped.items.map((l) => l.resource)).toEqual(["stuck:pg-overdue", "stuck:pg-lapsed"]);
    expect(capped.stores.map((s) => s.ok && s.data.hasMore)).toEqual([true]);
  });

  it("a store that is down yields ok:false while the other store's leases are returned", async () => {
    await mustAcquire(stores.redis, "alive:1", "w");
    const view = viewOf(await listLeasesFromSearch({}, { entries: [{ store: down }, { store: stores.redis }], timeoutMs: DOWN_TIMEOUT_MS }));
    expect(view.items.map((l) => l.resource)).toEqual(["alive:1"]);
    const failed = view.stores.find((s) => s.store === "redis-down");
    expect(failed?.ok).toBe(false);
    expect(failed && !failed.ok ? failed.error : "").toMatch(/\S/);
    expect(view.stores.find((s) => s.store === "redis-t")?.ok).toBe(true);
  });

  it("bad parameters give a clear problem and read nothing", async () => {
    const cases: Array<[Record<string, string>, string, RegExp]> = [
      [{ state: "zombie" }, "state", /must be one of held, expiring, overdue, lapsed, stuck, expired/],
      [{ sort: "random" }, "sort", /must be one of/],
      [{ limit: "0" }, "limit", /from 1 to 200/],
      [{ prefix: "bad\u0001prefix" }, "prefix", /printable/],
      [{ store: "nope" }, "store", /^No store is called "nope"\. Known stores: pg-t, redis-t\.$/],
      [{ cursor: "not-a-cursor" }, "cursor", /not a page link/],
      [{ state: "expired", window: "2h" }, "window", /15m, 1h, 6h, 24h, 7d, custom/],
    ];
    for (const [search, param, message] of cases) {
      const result = await listLeasesFromSearch(search, { entries: both() });
      expect(result.ok, JSON.stringify(search)).toBe(false);
      if (!result.ok) {
        expect(result.problem.param).toBe(param);
        expect(result.problem.message).toMatch(message);
      }
    }
    // A page link whose cursor for one store was edited: that store says so in its own words,
    // not as a store failure with a reference for on-call to chase.
    const forged = Buffer.from(JSON.stringify({ "pg-t": "edited", "redis-t": null })).toString("base64url");
    const forgedView = viewOf(await listLeasesFromSearch({ cursor: forged }, { entries: both() }));
    const refused = forgedView.stores.find((s) => s.store === "pg-t");
    expect(refused && !refused.ok ? refused.error : "").toBe("refused the request: list: cursor is not one this store issued");
    const repeated = await listLeasesFromSearch(new URLSearchParams("owner=a&owner=b"), { entries: both() });
    expect(repeated.ok ? null : repeated.problem).toEqual({ param: "owner", message: "The owner parameter was given more than once; give it once." });
  });
});

describe("listEvents", () => {
  it("filters by kind and prefix across stores, newest first, paged", async () => {
    const a = await mustAcquire(stores.pgStore, "ev:x:1", "w1");
    await stores.pgStore.release({ resource: "ev:x:1", leaseId: a.leaseId });
    const b = await mustAcquire(stores.redis, "ev:x:2", "w2");
    await stores.redis.acquire({ resource: "ev:x:2", owner: "w3", task: "t", ttlMs: 1_000 });
    await stores.redis.release({ resource: "ev:x:2", leaseId: b.leaseId });
    await mustAcquire(stores.redis, "other:1", "w4");

    const released = viewOf(await listEventsFromSearch({ kind: "released" }, { entries: both() }));
    expect(released.items.map((e) => `${e.store}/${e.resource}/${e.kind}`).sort()).toEqual(["pg-t/ev:x:1/released", "redis-t/ev:x:2/released"]);
    expect(released.items.every((e) => typeof e.holdMs === "number")).toBe(true);

    const multi = viewOf(await listEventsFromSearch(new URLSearchParams("kind=acquired&kind=contended&prefix=ev:"), { entries: both() }));
    expect(multi.items.map((e) => e.kind).sort()).toEqual(["acquired", "acquired", "contended"]);
    const contended = multi.items.find((e) => e.kind === "contended")!;
    expect(contended.owner).toBe("w3");
    expect(contended.note).toBe("held by w2 (task-1)");
    const times = multi.items.map((e) => e.at);
    expect([...times].sort().reverse()).toEqual(times);

    const seen = new Set<string>();
    let cursor: string | undefined;
    let total = 0;
    do {
      const page = viewOf(await listEventsFromSearch({ limit: "1", ...(cursor ? { cursor } : {}) }, { entries: both() }));
      for (const e of page.items) seen.add(`${e.store}/${e.id}`);
      total += page.items.length;
      cursor = page.nextCursor ?? undefined;
    } while (cursor && total < 50);
    expect(total).toBe(seen.size);
    expect(seen.size).toBe(viewOf(await listEventsFromSearch({}, { entries: both() })).items.length);
  });

  it("rejects bad kinds and windows with the parameter named", async () => {
    const badKind = await listEventsFromSearch({ kind: "acquired,exploded" }, { entries: both() });
    expect(badKind.ok ? null : badKind.problem.param).toBe("kind");
    expect(badKind.ok ? "" : badKind.problem.message).toMatch(/^The kind parameter has "exploded", which is not an event kind; use acquired, /);
    const badCustom = await listEventsFromSearch({ window: "custom" }, { entries: both() });
    expect(badCustom.ok ? null : badCustom.problem).toMatchObject({ param: "from" });
    const backwards = await listEventsFromSearch({ from: "2026-04-02T00:00:00Z", to: "2026-04-01T00:00:00Z" }, { entries: both() });
    expect(backwards.ok ? null : backwards.problem).toEqual({ param: "to", message: "The to parameter must be later than from." });
    const badDate = await listEventsFromSearch({ from: "yesterday" }, { entries: both() });
    expect(badDate.ok ? null : badDate.problem.message).toMatch(/ISO 8601/);
  });
});

describe("getLeaseDetail", () => {
  it("shows the holder timeline acquired → released and → expired, waiters and token history", async () => {
    const resource = "tenant_9:report/2026:04";
    const first = await mustAcquire(stores.redis, resource, "alice");
    await stores.redis.release({ resource, leaseId: first.leaseId });
    const second = await mustAcquire(stores.redis, resource, "bob", 200);
    await sleep(350);
    await stores.redis.sweep();
    const third = await mustAcquire(stores.redis, resource, "carol", 60_000);
    await stores.redis.acquire({ resource, owner: "dave", task: "nightly", ttlMs: 1_000 });
    await stores.redis.acquire({ resource, owner: "dave", task: "nightly", ttlMs: 1_000 });

    // The route hands over path segments; build them the way a link does.
    const href = leaseHref("redis-t", resource);
    const [, , store, ...segments] = href.split("/");
    const result = viewOf(await getLeaseDetailFromRoute({ store: store!, resource: segments }, { entries: both() }));
    if (!result.ok) throw new Error(result.error);
    const view = result.data;
    expect(view.resource).toBe(resource);
    expect(view.lease).toMatchObject({ owner: "carol", leaseId: third.leaseId, state: "held" });
    expect(view.timeline.map((b) => [b.owner, b.ending])).toEqual([
      ["alice", "released"],
      ["bob", "expired"],
      ["carol", "held"],
    ]);
    expect(view.timeline[1]!.leaseId).toBe(second.leaseId);
    expect(view.timeline[1]!.holdMs).toBeGreaterThanOrEqual(150);
    expect(view.waiting).toEqual([expect.objectContaining({ owner: "dave", task: "nightly", attempts: 2 })]);
    const tokens = view.tokens.map((t) => BigInt(t.fencingToken));
    expect(tokens).toHaveLength(3);
    expect(tokens[0]! > tokens[1]! && tokens[1]! > tokens[2]!).toBe(true);
    expect(view.events.length).toBeGreaterThanOrEqual(7);
    expect(view.hasHistory).toBe(true);
    expect(view.elsewhere).toEqual([]);
  });

  it("names the other stores where the same resource is held or has history", async () => {
    const resource = "tenant_9:across-stores";
    const held = await mustAcquire(stores.redis, resource, "erin");
    const lease = (store: string) => getLeaseDetailFromRoute({ store, resource: [resource] }, { entries: both() }).then(viewOf);
    const fromPg = await lease("pg-t");
    if (!fromPg.ok) throw new Error(fromPg.error);
    // Never seen in pg-t, held in redis-t.
    expect(fromPg.data).toMatchObject({ lease: null, hasHistory: false, elsewhere: [{ store: "redis-t", kind: "redis", isHeld: true }] });

    await stores.redis.release({ resource, leaseId: held.leaseId });
    const afterRelease = await lease("pg-t");
    expect(afterRelease.ok && afterRelease.data.elsewhere).toEqual([{ store: "redis-t", kind: "redis", isHeld: false }]);
    // And the other way round: redis-t has it (free, with history), pg-t never saw it.
    const fromRedis = await lease("redis-t");
    expect(fromRedis.ok && fromRedis.data).toMatchObject({ lease: null, hasHistory: true, elsewhere: [] });
  });

  it("says free for a resource nobody holds, and isolates a down store", async () => {
    const free = viewOf(await getLeaseDetailFromRoute({ store: "pg-t", resource: ["never:held"] }, { entries: both() }));
    expect(free.ok && free.data.lease).toBe(null);
    expect(free.ok && free.data.timeline).toEqual([]);
    expect(free.ok && free.data.hasHistory).toBe(false);

    const downResult = viewOf(
      await getLeaseDetailFromRoute({ store: "redis-down", resource: ["a"] }, { entries: [{ store: down }, ...both()], timeoutMs: DOWN_TIMEOUT_MS }),
    );
    expect(downResult.ok).toBe(false);

    const unknown = await getLeaseDetailFromRoute({ store: "nope", resource: ["a"] }, { entries: both() });
    expect(unknown.ok ? null : unknown.problem.param).toBe("store");
  });
});

describe("getOverview", () => {
  it("tiles and charts agree with what happened, per store and in total", async () => {
    // pg: 2 released, 1 contended. redis: 1 released, 1 expired, 2 contended, 1 still held.
    for (const r of ["ov:a:1", "ov:a:2"]) {
      const l = await mustAcquire(stores.pgStore, r, "w");
      if (r === "ov:a:1") await stores.pgStore.acquire({ resource: r, owner: "x", task: "t", ttlMs: 1_000 });
      await stores.pgStore.release({ resource: r, leaseId: l.leaseId });
    }
    const r1 = await mustAcquire(stores.redis, "ov:b:1", "w");
    await stores.redis.acquire({ resource: "ov:b:1", owner: "x", task: "t", ttlMs: 1_000 });
    await stores.redis.acquire({ resource: "ov:b:1", owner: "y", task: "t", ttlMs: 1_000 });
    await stores.redis.release({ resource: "ov:b:1", leaseId: r1.leaseId });
    await mustAcquire(stores.redis, "ov:b:2", "w", 150);
    await mustAcquire(stores.redis, "ov:c:3", "w", 60_000);
    await sleep(300);
    await stores.redis.sweep();
    await stores.pgStore.sweep();

    const view = viewOf(await getOverviewFromSearch({ window: "15m", depth: "2" }, { entries: both() }));
    expect(view.bucketMs).toBe(60_000);
    expect(view.total).toMatchObject({ acquired: 5, released: 3, expired: 1, contended: 3, forceReleased: 0, activeLeases: 1 });
    expect(view.total.contentionRate).toBeCloseTo(3 / 8);
    expect(view.total.expiredToReleased).toBeCloseTo(1 / 3);
    const pg = view.stores.find((s) => s.store === "pg-t");
    expect(pg?.ok && pg.data.tiles).toMatchObject({ acquired: 2, released: 2, contended: 1, activeLeases: 0 });

    expect(view.histogram.reduce((n, b) => n + b.count, 0)).toBe(4);
    expect(view.topPrefixes).toMatchObject([
      { prefix: "ov:b", contended: 2, share: 2 / 3 },
      { prefix: "ov:a", contended: 1, share: 1 / 3 },
    ]);
    expect(view.stackKeys.map((k) => k.prefix)).toEqual(["ov:b", "ov:a"]);
    // From rollups at depth 3: "ov:b:1" has exactly three segments, and its own history proves it is a resource.
    expect(view.resourceDepth).toBe(3);
    expect(view.topResources).toMatchObject([
      { store: "redis-t", resource: "ov:b:1", contended: 2, isResource: true },
      { store: "pg-t", resource: "ov:a:1", contended: 1, isResource: true },
    ]);

    const sum = (f: (p: (typeof view.points)[number]) => number) => view.points.reduce((n, p) => n + f(p), 0);
    expect(sum((p) => p.acquired)).toBe(5);
    expect(sum((p) => (p.stack.c0 ?? 0) + (p.stack.c1 ?? 0) + (p.stack.other ?? 0))).toBe(3);
    expect(view.points.at(-1)!.active).toBe(1);
    expect(view.points[0]!.active).toBe(0);
    expect(view.points.some((p) => p.p50 !== null)).toBe(true);
  });

  it("uses hour buckets for 7 days, rejects bad depth, and keeps the up store when one is down", async () => {
    await mustAcquire(stores.redis, "w:1", "w");
    const week = viewOf(await getOverviewFromSearch({ window: "7d" }, { entries: [{ store: stores.redis }] }));
    expect(week.bucketMs).toBe(3_600_000);
    expect(week.points.length).toBeGreaterThanOrEqual(168);
    expect(week.total.acquired).toBe(1);

    const bad = await getOverviewFromSearch({ depth: "4" }, { entries: both() });
    expect(bad.ok ? null : bad.problem).toEqual({ param: "depth", message: "The depth parameter must be 1, 2 or 3 (how many ':' segments make a prefix)." });

    const partial = viewOf(await getOverviewFromSearch({}, { entries: [{ store: down }, { store: stores.redis }], timeoutMs: DOWN_TIMEOUT_MS }));
    expect(partial.stores.map((s) => [s.store, s.ok])).toEqual([
      ["redis-down", false],
      ["redis-t", true],
    ]);
    expect(partial.total.acquired).toBe(1);
    expect(partial.total.activeLeases).toBe(1);
  });
});

describe("getMetricsText", () => {
  it("reports store_up, active leases and the store's own lifetime counters", async () => {
    const l = await mustAcquire(stores.redis, "m:1", "w");
    await stores.redis.acquire({ resource: "m:1", owner: "x", task: "t", ttlMs: 1_000 });
    const first = await getMetricsText({ entries: [{ store: down }, { store: stores.redis }], timeoutMs: DOWN_TIMEOUT_MS });
    expect(first.contentType).toMatch(/^text\/plain/);
    expect(first.body).toContain('leasewatch_store_up{store="redis-down",kind="redis"} 0');
    expect(first.body).toContain('leasewatch_store_up{store="redis-t",kind="redis"} 1');
    expect(first.body).toContain('leasewatch_active_leases{store="redis-t"} 1');
    expect(first.body).toContain('leasewatch_events_total{store="redis-t",kind="acquired"} 1');
    expect(first.body).toContain('leasewatch_contention_rate{store="redis-t"} 0.5');
    expect(first.body).not.toContain('leasewatch_active_leases{store="redis-down"}');

    await stores.redis.release({ resource: "m:1", leaseId: l.leaseId });
    await mustAcquire(stores.redis, "m:2", "w");
    const second = await getMetricsText({ entries: [{ store: stores.redis }] });
    expect(second.body).toContain('leasewatch_events_total{store="redis-t",kind="acquired"} 2');
    expect(second.body).toContain('leasewatch_events_total{store="redis-t",kind="released"} 1');
    expect(second.body).toContain('leasewatch_expired_to_released_ratio{store="redis-t"} 0');
    expect(second.body).toContain('leasewatch_hold_duration_seconds_count{store="redis-t",prefix_group="m:1"} 1');
    expect(second.body).toContain('leasewatch_hold_duration_seconds_bucket{store="redis-t",prefix_group="m:1",le="+Inf"} 1');
    // Nothing is remembered between scrapes: a second reader gets the same numbers.
    const third = await getMetricsText({ entries: [{ store: stores.redis }] });
    expect(third.body.replace(/^leasewatch_oldest_lease_age_seconds.*$/gm, "")).toBe(second.body.replace(/^leasewatch_oldest_lease_age_seconds.*$/gm, ""));
  });
});
