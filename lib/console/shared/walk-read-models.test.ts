/**
 * The read models behind the walk from an alert to its answer — counts above the
 * lists, the owner page, the jump box — against a real Postgres and a real Redis
 * store, each in its own schema / namespace.
 */
import { describe, expect, it } from "vitest";
import { type Lease, type LeaseStore } from "@leasewatch/lease";
import { sleep } from "@leasewatch/lease/testing";
import { getEventFacetsFromSearch, getFacetsFromSearch, getLeaseFacetsFromSearch, prefixOf } from "@/lib/console/facets/facets";
import type { FacetsView } from "@/lib/console/facets/facets-types";
import type { StoreRef } from "@/lib/console/shared/fan-out";
import { getOwnerFromRoute, judgeOwner } from "@/lib/console/owners/get-owner";
import { eventsHref, leaseHref, locksHref, ownerHref } from "./links";
import { listEventsFromSearch } from "@/lib/console/events/list-events";
import { listLeasesFromSearch } from "@/lib/console/leases/list-leases";
import { resolveJump } from "@/lib/console/jump/resolve-jump";
import type { ReadResult } from "./views";
import { setUpStorePair } from "@/test/support/store-pair";

function viewOf<T>(result: ReadResult<T>): T {
  if (!result.ok) throw new Error(`expected a view, got a problem: ${result.problem.param}: ${result.problem.message}`);
  return result.view;
}

async function mustAcquire(store: LeaseStore, resource: string, owner: string, task: string, ttlMs = 30_000): Promise<Lease> {
  const r = await store.acquire({ resource, owner, task, ttlMs });
  if (!r.acquired) throw new Error(`expected to acquire ${resource}`);
  return r.lease;
}

/** Leases of `owner` that expire (short TTL), then are recorded by a sweep. */
async function expireLeases(store: LeaseStore, owner: string, task: string, resources: string[]): Promise<void> {
  await Promise.all(resources.map((r) => mustAcquire(store, r, owner, task, 150)));
  await sleep(300);
  await store.sweep();
}

const group = (view: FacetsView, field: string) => view.groups.find((g) => g.field === field)?.values ?? [];

const stores = setUpStorePair({ pg: "pg-t", redis: "redis-t" });

const both = (): StoreRef[] => [{ store: stores.pgStore }, { store: stores.redis }];

describe("facets", () => {
  it("counts expiries by owner, task and prefix in the window, equal to the expired list, on both stores", async () => {
    await expireLeases(stores.redis, "worker-8@reports", "nightly", ["reports:eu:1", "reports:eu:2", "reports:us:3"]);
    await expireLeases(stores.redis, "worker-3@mailer", "send", ["mail:q:1"]);
    await expireLeases(stores.pgStore, "worker-8@reports", "nightly", ["reports:eu:4"]);
    await mustAcquire(stores.redis, "reports:eu:held", "worker-8@reports", "nightly"); // held, not expired: not counted

    const facets = viewOf(await getLeaseFacetsFromSearch({ state: "expired", window: "1h" }, { entries: both() }));
    expect(facets).toMatchObject({ view: "leases", noun: "expiries", total: 5, isCapped: false });
    expect(group(facets, "owner")).toEqual([
      { value: "worker-8@reports", count: 4 },
      { value: "worker-3@mailer", count: 1 },
    ]);
    expect(group(facets, "task")).toEqual([
      { value: "nightly", count: 4 },
      { value: "send", count: 1 },
    ]);
    expect(group(facets, "prefix")).toEqual([
      { value: "reports:eu:", count: 3 },
      { value: "mail:q:", count: 1 },
      { value: "reports:us:", count: 1 },
    ]);

    // The counts are of exactly the rows the list shows: narrowing by the top owner keeps its count.
    const redisOnly = viewOf(await getLeaseFacetsFromSearch({ store: "redis-t", state: "expired", window: "1h" }, { entries: both() }));
    expect(group(redisOnly, "owner")).toEqual([
      { value: "worker-8@reports", count: 3 },
      { value: "worker-3@mailer", count: 1 },
    ]);
    const list = viewOf(await listLeasesFromSearch({ store: "redis-t", state: "expired", window: "1h", owner: "worker-8@reports" }, { entries: both() }));
    expect(list.expired).toHaveLength(3);
    const listByTask = viewOf(await listLeasesFromSearch({ state: "expired", window: "1h", task: "send" }, { entries: both() }));
    expect(listByTask.expired.map((e) => e.resource)).toEqual(["mail:q:1"]);
  });

  it("counts current leases grouped one segment below the prefix filter, and events by kind with a default 24 h window", async () => {
    await mustAcquire(stores.pgStore, "tenant_1:billing:a", "w1", "close");
    await mustAcquire(stores.redis, "tenant_1:billing:b", "w1", "close");
    await mustAcquire(stores.redis, "tenant_1:ledger:c", "w2", "export");
    await mustAcquire(stores.redis, "tenant_2:billing:d", "w2", "close");

    const leases = viewOf(await getLeaseFacetsFromSearch({ prefix: "tenant_1:" }, { entries: both() }));
    expect(leases).toMatchObject({ noun: "leases", total: 3, from: null });
    expect(group(leases, "prefix")).toEqual([
      { value: "tenant_1:billing:", count: 2 },
      { value: "tenant_1:ledger:", count: 1 },
    ]);
    expect(group(leases, "owner")).toEqual([
      { value: "w1", count: 2 },
      { value: "w2", count: 1 },
    ]);

    // A state filter counts what the list shows in that state: fresh leases are held, none overdue.
    expect(viewOf(await getLeaseFacetsFromSearch({ state: "held" }, { entries: both() })).total).toBe(4);
    expect(viewOf(await getLeaseFacetsFromSearch({ state: "overdue" }, { entries: both() })).total).toBe(0);

    await stores.redis.acquire({ resource: "tenant_1:billing:b", owner: "w9", task: "retry", ttlMs: 1_000 }); // contended
    const nowMs = Date.now();
    const events = viewOf(await getFacetsFromSearch(new URLSearchParams({ view: "events", prefix: "tenant_1:" }), { entries: both(), nowMs }));
    expect(events).toMatchObject({ view: "events", noun: "events", total: 4 });
    expect(Date.parse(events.to!) - Date.parse(events.from!)).toBe(24 * 3_600_000 + 1);
    expect(group(events, "kind")).toEqual([
      { value: "acquired", count: 3 },
      { value: "contended", count: 1 },
    ]);
    expect(group(events, "resource")[0]).toEqual({ value: "tenant_1:billing:b", count: 2 });
  });

  it("refuses a missing or unknown view and bad list parameters by name", async () => {
    expect(await getFacetsFromSearch({}, { entries: both() })).toMatchObject({ ok: false, problem: { param: "view" } });
    expect(await getFacetsFromSearch({ view: "charts" }, { entries: both() })).toMatchObject({ ok: false, problem: { param: "view" } });
    expect(await getEventFacetsFromSearch({ token: "12x" }, { entries: both() })).toMatchObject({ ok: false, problem: { param: "token" } });
    expect(await getLeaseFacetsFromSearch({ store: "nope" }, { entries: both() })).toMatchObject({ ok: false, problem: { param: "store" } });
  });

  it("groups a resource by its leading segments", () => {
    expect(prefixOf("a:b:c:d", 2)).toBe("a:b:");
    expect(prefixOf("a:b", 2)).toBe("a:b");
  });
});

describe("events filters by task, lease id and token", () => {
  it("narrow /events on both stores, with a 24 h window by default", async () => {
    const a = await mustAcquire(stores.pgStore, "jobs:1", "w1", "task-a");
    const b = await mustAcquire(stores.redis, "jobs:2", "w1", "task-b");
    await stores.redis.release({ resource: "jobs:2", leaseId: b.leaseId });

    const byTask = viewOf(await listEventsFromSearch({ task: "task-b" }, { entries: both() }));
    expect(byTask.items.map((e) => `${e.store}:${e.kind}`)).toEqual(["redis-t:released", "redis-t:acquired"]);
    expect(byTask.from).not.toBeNull();
    const byLease = viewOf(await listEventsFromSearch({ lease: a.leaseId }, { entries: both() }));
    expect(byLease.items.map((e) => `${e.store}:${e.kind}`)).toEqual(["pg-t:acquired"]);
    const byToken = viewOf(await listEventsFromSearch({ token: String(b.fencingToken) }, { entries: both() }));
    expect(byToken.items.every((e) => e.leaseId === b.leaseId)).toBe(true);
    expect(byToken.items).toHaveLength(2);
    expect(await listEventsFromSearch({ token: "-1" }, { entries: both() })).toMatchObject({ ok: false, problem: { param: "token" } });
  });
});

describe("owner page", () => {
  it("says alive while holding a renewed lease, and lists its troubles from every store", async () => {
    const owner = "worker-8@reports-cecb";
    const lease = await mustAcquire(stores.redis, "reports:daily", owner, "nightly", 30_000);
    await stores.redis.renew({ resource: "reports:daily", leaseId: lease.leaseId, ttlMs: 30_000 });
    await expireLeases(stores.pgStore, owner, "nightly", ["reports:weekly"]);

    const view = viewOf(await getOwnerFromRoute(encodeURIComponent(owner), {}, { entries: both() }));
    expect(view.owner).toBe(owner);
    expect(Date.parse(view.to) - Date.parse(view.from), "an alert's window, 1 h, by default").toBe(3_600_000 + 1);
    expect(view.verdict).toBe("alive");
    expect(view.held.map((l) => `${l.store}/${l.resource}`)).toEqual(["redis-t/reports:daily"]);
    expect(view.troubleCounts).toEqual({ expired: 1, renew_failed: 0, lost: 0 });
    expect(view.troubles.map((e) => `${e.store}/${e.resource}`)).toEqual(["pg-t/reports:weekly"]);
    expect(view.events.length).toBeGreaterThanOrEqual(3);
    expect(view.lastSeenAgoMs).not.toBeNull();
    expect(view.lastSeenAgoMs!).toBeLessThan(60_000);
  });

  it("holds nothing: idle when seen moments ago on the store clock, gone later, unseen for a stranger", async () => {
    const owner = "worker-2@gone";
    await expireLeases(stores.redis, owner, "t", ["x:1"]);
    const later = Date.now() + 5 * 60_000;
    // Read as if five minutes later, over the last hour: the expiry is in the window, the owner holds nothing.
    const view = viewOf(await getOwnerFromRoute(encodeURIComponent(owner), { window: "custom", from: new Date(later - 3_600_000).toISOString() }, { entries: both(), nowMs: later }));
    expect(view.held).toEqual([]);
    expect(view.troubleCounts.expired).toBe(1);
    expect(view.verdict).toBe("idle"); // seen moments ago on the store's clock
    expect(judgeOwner([], 5 * 60_000)).toBe("gone");
    expect(judgeOwner([{ state: "overdue" }], 5_000)).toBe("stalled");

    const stranger = viewOf(await getOwnerFromRoute("nobody%40nowhere", {}, { entries: both() }));
    expect(stranger).toMatchObject({ verdict: "unseen", lastSeenAt: null, held: [], events: [] });
    expect(await getOwnerFromRoute("%E0%A4%A", {}, { entries: both() })).toMatchObject({ ok: false, problem: { param: "owner" } });
  });
});

describe("jump box", () => {
  it("resolves a resource, token, lease id, owner and prefix across stores, and says when nothing matches", async () => {
    const held = await mustAcquire(stores.redis, "billing:close:2026-04", "w7@billing", "run-1");
    const ended = await mustAcquire(stores.pgStore, "ledger:export:1", "w8@ledger", "run-2");
    await stores.pgStore.release({ resource: "ledger:export:1", leaseId: ended.leaseId });

    const go = async (q: string) => viewOf(await resolveJump(q, { entries: both() }));
    expect(await go("billing:close:2026-04")).toMatchObject({ found: true, href: leaseHref("redis-t", "billing:close:2026-04") });
    expect(await go("ledger:export:1")).toMatchObject({ found: true, href: leaseHref("pg-t", "ledger:export:1") });
    expect(await go(String(held.fencingToken))).toMatchObject({ found: true, href: leaseHref("redis-t", "billing:close:2026-04") });
    expect(await go(String(ended.fencingToken))).toMatchObject({ found: true, href: eventsHref({ store: "pg-t", token: String(ended.fencingToken) }) });
    expect(await go(held.leaseId.toUpperCase())).toMatchObject({ found: true, href: leaseHref("redis-t", "billing:close:2026-04") });
    expect(await go(ended.leaseId)).toMatchObject({ found: true, href: eventsHref({ store: "pg-t", lease: ended.leaseId }) });
    expect(await go(" w8@ledger ")).toMatchObject({ found: true, href: ownerHref("w8@ledger") });
    expect(await go("billing:")).toMatchObject({ found: true, href: locksHref({ prefix: "billing:" }) });
    expect(await go("ledger:")).toMatchObject({ found: true, href: eventsHref({ prefix: "ledger:", window: "24h" }) });
    expect(await go("nothing:like:this")).toMatchObject({ found: false, href: null, unreadStores: [] });
    expect(await resolveJump("   ", { entries: both() })).toMatchObject({ ok: false, problem: { param: "q" } });
  });
});
