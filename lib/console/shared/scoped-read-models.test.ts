/**
 * A viewer whose role map entry limits them to `tenant_1:*`, against real stores
 * (a Postgres schema and a Redis namespace of their own) holding leases of two
 * tenants: every read model answers for tenant_1 alone — rows, counts, facets,
 * charts — and tenant_2 never appears in any answer.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { scopeOf, type ViewerScope } from "@/lib/auth/scope";
import { type Lease, type LeaseStore } from "@leasewatch/lease";
import { sleep } from "@leasewatch/lease/testing";
import { getEventFacetsFromSearch, getLeaseFacetsFromSearch } from "@/lib/console/facets/facets";
import type { StoreRef } from "@/lib/console/shared/fan-out";
import { getLeaseDetailFromRoute } from "@/lib/console/leases/get-lease-detail";
import { getMetricsText } from "@/lib/console/metrics/get-metrics-text";
import { getOverviewFromSearch } from "@/lib/console/overview/get-overview";
import { getOwnerFromRoute } from "@/lib/console/owners/get-owner";
import { getPastLeasesFromSearch } from "@/lib/console/past/get-past-leases";
import { getRenewalSlackFromSearch, getTtlAdviceFromSearch } from "@/lib/console/advice/get-ttl-advice";
import { listEventsFromSearch } from "@/lib/console/events/list-events";
import { listLeasesFromSearch } from "@/lib/console/leases/list-leases";
import { listReleaseCandidates } from "@/lib/console/release/list-release-candidates";
import { resolveJumpFromSearch } from "@/lib/console/jump/resolve-jump";
import { ScopeError, scopeStore } from "./scoped-store";
import type { EventsView, LeasesView, ReadResult } from "./views";
import { setUpStorePair } from "@/test/support/store-pair";

const TENANT_1: ViewerScope = scopeOf(["tenant_1:"]);

function viewOf<T>(result: ReadResult<T>): T {
  if (!result.ok) throw new Error(`expected a view, got a problem: ${result.problem.param}: ${result.problem.message}`);
  return result.view;
}

/** The whole answer as text: another tenant's name must not be anywhere in it. */
function expectNoTenant2(value: unknown): void {
  expect(JSON.stringify(value)).not.toContain("tenant_2");
}

async function mustAcquire(store: LeaseStore, resource: string, owner: string, ttlMs = 30_000): Promise<Lease> {
  const r = await store.acquire({ resource, owner, task: "task-1", ttlMs });
  if (!r.acquired) throw new Error(`expected to acquire ${resource}`);
  return r.lease;
}

const stores = setUpStorePair({ pg: "pg-t", redis: "redis-t" });
const held = new Map<string, Lease>();

/** The same history on each store, for both tenants (and a third, for scopes of several prefixes). */
async function seed(store: LeaseStore): Promise<void> {
  for (const tenant of ["tenant_1", "tenant_2", "tenant_3"]) {
    held.set(`${store.name}/${tenant}:held`, await mustAcquire(store, `${tenant}:billing:held`, "w-shared"));
    await mustAcquire(store, `${tenant}:billing:other`, `w-${tenant}`);
    const done = await mustAcquire(store, `${tenant}:billing:done`, `w-${tenant}`);
    await store.release({ resource: done.resource, leaseId: done.leaseId });
    await store.acquire({ resource: `${tenant}:billing:held`, owner: `waiter-${tenant}`, task: "t", ttlMs: 5_000 });
    const lease = held.get(`${store.name}/${tenant}:held`)!;
    await store.renew({ resource: lease.resource, leaseId: lease.leaseId, ttlMs: 30_000 });
  }
  // An expiry each (recorded by the sweep), then a lease each left lapsed and unswept.
  await mustAcquire(store, "tenant_1:billing:crash", "w-crash", 150);
  await mustAcquire(store, "tenant_2:billing:crash", "w-crash", 150);
  await sleep(300);
  await store.sweep();
  await mustAcquire(store, "tenant_1:billing:lapsed", "w-lapse", 150);
  await mustAcquire(store, "tenant_2:billing:lapsed", "w-lapse", 150);
  await sleep(300);
}

beforeEach(async () => {
  held.clear();
  await Promise.all([seed(stores.pgStore), seed(stores.redis)]);
});

const both = (): StoreRef[] => [{ store: stores.pgStore }, { store: stores.redis }];
const scoped = (scope: ViewerScope = TENANT_1) => ({ entries: both(), scope });

describe("a viewer scoped to tenant_1:*", () => {
  it("lists only tenant_1's leases, whatever prefix or state is asked for", async () => {
    const all = viewOf(await listLeasesFromSearch({}, scoped()));
    expect(all.items.length).toBeGreaterThan(0);
    expect(all.items.every((l) => l.resource.startsWith("tenant_1:"))).toBe(true);
    // Exactly what an unscoped viewer sees under the prefix.
    const reference = viewOf(await listLeasesFromSearch({ prefix: "tenant_1:" }, { entries: both() }));
    expect(all.items.map((l) => `${l.store}/${l.resource}`).sort()).toEqual(reference.items.map((l) => `${l.store}/${l.resource}`).sort());
    expectNoTenant2(all);

    expect(viewOf(await listLeasesFromSearch({ prefix: "tenant_2:" }, scoped())).items).toEqual([]);
    // A prefix wider than the scope is cut to it.
    const wide = viewOf(await listLeasesFromSearch({ prefix: "tenant_" }, scoped()));
    expect(wide.items.map((l) => l.resource).sort()).toEqual(all.items.map((l) => l.resource).sort());
    const expired = viewOf(await listLeasesFromSearch({ state: "expired", window: "1h" }, scoped()));
    expect(expired.expired.map((e) => e.resource)).toEqual(["tenant_1:billing:crash", "tenant_1:billing:crash"]);
    expectNoTenant2(expired);
  });

  it("shows only tenant_1's events; another tenant's prefix or resource reads as empty", async () => {
    const events = viewOf(await listEventsFromSearch({ window: "1h" }, scoped()));
    expect(events.items.length).toBeGreaterThan(0);
    expect(events.items.every((e) => e.resource.startsWith("tenant_1:"))).toBe(true);
    expectNoTenant2(events);
    expect(viewOf(await listEventsFromSearch({ window: "1h", prefix: "tenant_2:" }, scoped())).items).toEqual([]);
    expect(viewOf(await listEventsFromSearch({ window: "1h", resource: "tenant_2:billing:held" }, scoped())).items).toEqual([]);
    expect(viewOf(await listEventsFromSearch({ window: "1h", owner: "w-shared" }, scoped())).items.every((e) => e.resource.startsWith("tenant_1:"))).toBe(true);
  });

  it("counts the overview's tiles and charts from tenant_1 alone, over an hour and over a week", async () => {
    const overview = viewOf(await getOverviewFromSearch({ window: "1h" }, scoped()));
    const reference = viewOf(await getOverviewFromSearch({ window: "1h", prefix: "tenant_1:" }, { entries: both() }));
    const unscoped = viewOf(await getOverviewFromSearch({ window: "1h" }, { entries: both() }));
    expect(overview.scope).toBe("tenant_1:*");
    expect(overview.total).toEqual(reference.total);
    expect(overview.total.acquired).toBeGreaterThan(0);
    // The whole stores hold more: the scoped numbers are not the store-wide ones.
    expect(unscoped.total.acquired).toBeGreaterThan(overview.total.acquired);
    expect(overview.total.activeLeases).toBe(reference.total.activeLeases);
    expect(overview.points.map((p) => p.acquired ?? null)).toEqual(reference.points.map((p) => p.acquired ?? null));
    expectNoTenant2(overview);

    // A week is counted from the rollups per prefix group: tenant_1's groups only.
    const week = viewOf(await getOverviewFromSearch({ window: "7d" }, scoped()));
    const weekReference = viewOf(await getOverviewFromSearch({ window: "7d", prefix: "tenant_1:" }, { entries: both() }));
    expect(week.stores.every((s) => s.ok)).toBe(true);
    expect(week.prefixSource).toBe("rollups");
    expect(week.total).toEqual(weekReference.total);
    expect(week.total.acquired).toBe(overview.total.acquired);
    expectNoTenant2(week);
    expect(viewOf(await getOverviewFromSearch({ window: "1h", prefix: "tenant_2:" }, scoped())).total.acquired).toBe(0);
  });

  it("answers not found for another tenant's lease page, and shows its own", async () => {
    const other = await getLeaseDetailFromRoute({ store: "pg-t", resource: ["tenant_2:billing:held"] }, scoped());
    expect(other.ok).toBe(false);
    if (!other.ok) expect(other.problem.isNotFound).toBe(true);
    // The same answer for a tenant_2 name that never existed: nothing to tell them apart.
    const never = await getLeaseDetailFromRoute({ store: "pg-t", resource: ["tenant_2:never"] }, scoped());
    expect(never).toEqual(other);
    const own = viewOf(await getLeaseDetailFromRoute({ store: "redis-t", resource: ["tenant_1:billing:held"] }, scoped()));
    expect(own.ok && own.data.lease?.owner).toBe("w-shared");
    expectNoTenant2(own);
  });

  it("keeps owners, facets, the jump box, past views, advice and bulk candidates to tenant_1", async () => {
    const owner = viewOf(await getOwnerFromRoute("w-shared", {}, scoped()));
    expect(JSON.stringify(owner)).toContain("tenant_1:billing:held");
    expectNoTenant2(owner);

    const leaseFacets = viewOf(await getLeaseFacetsFromSearch({}, scoped()));
    expectNoTenant2(leaseFacets);
    expect(JSON.stringify(leaseFacets)).toContain("w-tenant_1");
    expectNoTenant2(viewOf(await getEventFacetsFromSearch({ window: "1h" }, scoped())));

    const jumpOther = viewOf(await resolveJumpFromSearch({ q: "tenant_2:billing:held" }, scoped()));
    expect(jumpOther).toMatchObject({ found: false, href: null });
    const otherLease = held.get("pg-t/tenant_2:held")!;
    expect(viewOf(await resolveJumpFromSearch({ q: otherLease.leaseId }, scoped()))).toMatchObject({ found: false });
    expect(viewOf(await resolveJumpFromSearch({ q: "w-tenant_2" }, scoped()))).toMatchObject({ found: false });
    expect(viewOf(await resolveJumpFromSearch({ q: "tenant_1:billing:held" }, scoped()))).toMatchObject({ found: true });

    const past = viewOf(await getPastLeasesFromSearch({ at: new Date(Date.now() - 100).toISOString() }, scoped()));
    expect(JSON.stringify(past)).toContain("tenant_1:billing:held");
    expectNoTenant2(past);
    const pastOther = viewOf(await getPastLeasesFromSearch({ at: new Date(Date.now() - 100).toISOString(), prefix: "tenant_2:" }, scoped()));
    expectNoTenant2(pastOther);

    expectNoTenant2(viewOf(await getTtlAdviceFromSearch({}, scoped())));
    expectNoTenant2(viewOf(await getRenewalSlackFromSearch({}, scoped())));

    const candidates = viewOf(await listReleaseCandidates({ prefix: "tenant_" }, scoped()));
    expect(candidates.items.map((c) => c.resource)).toEqual(["tenant_1:billing:lapsed", "tenant_1:billing:lapsed"]);
  });

  it("finds nothing by another tenant's lease ids, tokens, owners or resources, and answers as for ids that never existed", async () => {
    const at = new Date(Date.now() - 100).toISOString();
    const otherPg = held.get("pg-t/tenant_2:held")!;
    const otherRedis = held.get("redis-t/tenant_2:held")!;
    // Ids and names that exist only under tenant_2 (w-shared and task-1 hold tenant_1's leases too).
    const foreign: Record<string, string>[] = [
      { lease: otherPg.leaseId },
      { lease: otherRedis.leaseId },
      { token: otherPg.fencingToken },
      { token: otherRedis.fencingToken },
      { owner: "w-tenant_2" },
      { owner: "waiter-tenant_2" },
      { resource: "tenant_2:billing:held" },
    ];
    for (const filter of foreign) {
      const what = JSON.stringify(filter);
      // They are real: an unscoped viewer finds them.
      expect(viewOf(await listEventsFromSearch({ window: "1h", ...filter }, { entries: both() })).items.length, what).toBeGreaterThan(0);
      const events = viewOf(await listEventsFromSearch({ window: "1h", ...filter }, scoped()));
      expect(events.items, what).toEqual([]);
      const eventFacets = viewOf(await getEventFacetsFromSearch({ window: "1h", ...filter }, scoped()));
      expect({ total: eventFacets.total, values: eventFacets.groups.flatMap((g) => g.values) }, what).toEqual({ total: 0, values: [] });
      // Current and past leases filter by owner (not by lease id, token or resource).
      if ("owner" in filter) {
        const leases = viewOf(await listLeasesFromSearch(filter, scoped()));
        expect(leases.items, what).toEqual([]);
        const leaseFacets = viewOf(await getLeaseFacetsFromSearch(filter, scoped()));
        expect({ total: leaseFacets.total, values: leaseFacets.groups.flatMap((g) => g.values) }, what).toEqual({ total: 0, values: [] });
        const past = viewOf(await getPastLeasesFromSearch({ at, ...filter }, scoped()));
        expect(past.items, what).toEqual([]);
      }
    }

    // The owner page of an owner seen only under tenant_2 reads exactly like one never seen anywhere.
    const ownerPage = async (owner: string) => {
      const view = viewOf(await getOwnerFromRoute(owner, { window: "1h" }, scoped()));
      // The name asked for, and when it was read, differ; nothing else may.
      return { ...view, owner: null, readAt: null, from: null, to: null };
    };
    expect(viewOf(await getOwnerFromRoute("w-tenant_2", { window: "1h" }, { entries: both() })).verdict).not.toBe("unseen");
    const foreignOwner = await ownerPage("w-tenant_2");
    expect(foreignOwner).toMatchObject({ verdict: "unseen", lastSeenAt: null, held: [], events: [], troubles: [] });
    expect(foreignOwner).toEqual(await ownerPage("w-never-seen"));

    // Advice for another tenant's prefix: no rows, and no count of the groups it holds.
    expect(viewOf(await getTtlAdviceFromSearch({ prefix: "tenant_2:" }, { entries: both() })).rows.length).toBeGreaterThan(0);
    expect(viewOf(await getRenewalSlackFromSearch({ prefix: "tenant_2:" }, { entries: both() })).renewals).toBeGreaterThan(0);
    const advice = viewOf(await getTtlAdviceFromSearch({ prefix: "tenant_2:" }, scoped()));
    expect({ rows: advice.rows, totalRows: advice.totalRows }).toEqual({ rows: [], totalRows: 0 });
    const slack = viewOf(await getRenewalSlackFromSearch({ prefix: "tenant_2:" }, scoped()));
    expect({ renewals: slack.renewals, closeCalls: slack.closeCalls, histogram: slack.histogram.filter((n) => n > 0) }).toEqual({ renewals: 0, closeCalls: 0, histogram: [] });
  });

  it("cannot read the store-wide metrics (they count every tenant)", async () => {
    const text = await getMetricsText({ entries: both(), scope: TENANT_1, audit: null });
    expectNoTenant2(text);
    expect(text.body).not.toMatch(/^leasewatch_leases_active\{[^}]*store="pg-t"[^}]*\} [1-9]/m);
  });
});

describe("the scoped store view", () => {
  it("refuses store-wide counters, answers not found outside the scope and ends nothing there", async () => {
    const view = scopeStore(stores.pgStore, TENANT_1);
    const now = new Date();
    await expect(view.stats({ from: new Date(now.getTime() - 60_000), to: now, bucketMs: 60_000 })).rejects.toThrow(ScopeError);
    await expect(view.lifetimeTotals()).rejects.toThrow(/not available to an account limited to tenant_1:\*/);
    expect(await view.get("tenant_2:billing:held")).toBeNull();
    const other = held.get("pg-t/tenant_2:held")!;
    expect(await view.forceRelease({ resource: other.resource, leaseId: other.leaseId, actor: "t", reason: "test" })).toEqual({
      released: false,
      reason: "not_found",
      current: null,
    });
    expect((await stores.pgStore.get(other.resource))?.leaseId).toBe(other.leaseId);
    // Counted under the scope only: the unscoped store holds more.
    expect(await view.countActive()).toBe((await stores.pgStore.list({ prefix: "tenant_1:", limit: 1000 })).items.length);
    expect(await stores.pgStore.countActive()).toBeGreaterThan(await view.countActive());
    // Unscoped viewers get the store itself.
    expect(scopeStore(stores.pgStore, { kind: "all" })).toBe(stores.pgStore);
  });
});

describe("a viewer scoped to several prefixes", () => {
  it("pages through the union of its prefixes without skipping or repeating a row", async () => {
    const scope = scopeOf(["tenant_3:", "tenant_1:"]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: LeasesView = viewOf(await listLeasesFromSearch({ limit: "2", store: "pg-t", ...(cursor ? { cursor } : {}) }, scoped(scope)));
      seen.push(...page.items.map((l) => l.resource));
      cursor = page.nextCursor;
    } while (cursor);
    const reference = [
      ...viewOf(await listLeasesFromSearch({ prefix: "tenant_1:", store: "pg-t" }, { entries: both() })).items,
      ...viewOf(await listLeasesFromSearch({ prefix: "tenant_3:", store: "pg-t" }, { entries: both() })).items,
    ].map((l) => l.resource);
    expect(seen.sort()).toEqual(reference.sort());
    expect(new Set(seen).size).toBe(seen.length);

    const events: string[] = [];
    cursor = null;
    do {
      const page: EventsView = viewOf(await listEventsFromSearch({ window: "1h", limit: "3", store: "redis-t", ...(cursor ? { cursor } : {}) }, scoped(scope)));
      events.push(...page.items.map((e) => e.id));
      cursor = page.nextCursor;
    } while (cursor);
    const eventReference = [
      ...viewOf(await listEventsFromSearch({ window: "1h", prefix: "tenant_1:", store: "redis-t" }, { entries: both() })).items,
      ...viewOf(await listEventsFromSearch({ window: "1h", prefix: "tenant_3:", store: "redis-t" }, { entries: both() })).items,
    ].map((e) => e.id);
    expect(events.sort()).toEqual(eventReference.sort());

    const overview = viewOf(await getOverviewFromSearch({ window: "1h" }, scoped(scope)));
    const one = viewOf(await getOverviewFromSearch({ window: "1h", prefix: "tenant_1:" }, { entries: both() }));
    const three = viewOf(await getOverviewFromSearch({ window: "1h", prefix: "tenant_3:" }, { entries: both() }));
    expect(overview.total.acquired).toBe(one.total.acquired + three.total.acquired);
    expect(overview.total.activeLeases).toBe(one.total.activeLeases + three.total.activeLeases);
    expectNoTenant2(overview);
  });
});
