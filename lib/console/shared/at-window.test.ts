/**
 * `at=` is the moment a page reads as of, on real stores: the events list, the expired-leases
 * list, their counts and the overview all cover the window ending at `at`, never the one ending
 * now. Each store writes a known history in two phases with `at` between them; what the pages
 * list must be exactly what the store's own events of the window say.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LeaseStore } from "@leasewatch/lease";
import { sleep } from "@leasewatch/lease/testing";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { getEventFacetsFromSearch } from "@/lib/console/facets/facets";
import { getOverviewFromSearch } from "@/lib/console/overview/get-overview";
import { listEventsFromSearch } from "@/lib/console/events/list-events";
import { listLeasesFromSearch } from "@/lib/console/leases/list-leases";
import type { ReadResult } from "./views";

function viewOf<T>(result: ReadResult<T>): T {
  if (!result.ok) throw new Error(`expected a view, got a problem: ${result.problem.param}: ${result.problem.message}`);
  return result.view;
}

async function mustAcquire(store: LeaseStore, resource: string, owner: string, ttlMs: number) {
  const r = await store.acquire({ resource, owner, task: "t", ttlMs });
  if (!r.acquired) throw new Error(`expected to acquire ${resource}`);
  return r.lease;
}

/** One phase: a release, a contended acquire, an expiry recorded by a sweep, and a lease left held. */
async function writePhase(store: LeaseStore, tag: string): Promise<void> {
  const released = await mustAcquire(store, `at:${tag}:released`, `w-${tag}`, 60_000);
  await store.release({ resource: released.resource, leaseId: released.leaseId });
  await mustAcquire(store, `at:${tag}:held`, `w-${tag}`, 60_000);
  await store.acquire({ resource: `at:${tag}:held`, owner: `x-${tag}`, task: "t", ttlMs: 1_000 });
  await mustAcquire(store, `at:${tag}:zombie`, `z-${tag}`, 150);
  await sleep(300);
  await store.sweep();
}

let fixtures: StoreFixture[] = [];
let stores: LeaseStore[] = [];

beforeEach(async () => {
  fixtures = [await createStoreFixture("postgres", { name: "pg-t" }), await createStoreFixture("redis", { name: "redis-t" })];
  stores = fixtures.map((f) => f.store);
});

afterEach(async () => {
  await Promise.all(fixtures.map((f) => f.cleanup()));
});

describe.each(["pg-t", "redis-t"])("at= on %s", (name) => {
  const storeOf = () => stores.find((s) => s.name === name)!;

  it("lists the events and expiries of the window ending at at, exactly as the store's events say", async () => {
    const store = storeOf();
    await writePhase(store, "before");
    // The newest event of the first phase, on the store's clock: the moment the links carry.
    const last = (await store.events({ limit: 1 })).items[0]!;
    const at = last.at.toISOString();
    await sleep(20);
    await writePhase(store, "after");
    const entries = [{ store }];

    const events = viewOf(await listEventsFromSearch({ store: name, window: "1h", at }, { entries }));
    const truth = await store.events({ from: new Date(last.at.getTime() - 3_600_000), to: new Date(last.at.getTime() + 1), limit: 200 });
    expect(events.items.map((e) => e.id).sort()).toEqual(truth.items.map((e) => e.id).sort());
    expect(events.items.length).toBeGreaterThanOrEqual(6);
    expect(events.items.every((e) => e.resource.startsWith("at:before:"))).toBe(true);
    expect(events).toMatchObject({ endsAt: at, to: new Date(last.at.getTime() + 1).toISOString() });
    // Without at, the same link is the hour ending now: both phases.
    const live = viewOf(await listEventsFromSearch({ store: name, window: "1h" }, { entries }));
    expect(live.items.some((e) => e.resource.startsWith("at:after:"))).toBe(true);
    expect(live.endsAt).toBeNull();

    // The expiry alert's links: kind=expired on /events, state=expired on /locks.
    const expiredEvents = viewOf(await listEventsFromSearch({ store: name, kind: "expired", window: "1h", at }, { entries }));
    expect(expiredEvents.items.map((e) => e.resource)).toEqual(["at:before:zombie"]);
    const expired = viewOf(await listLeasesFromSearch({ store: name, state: "expired", window: "1h", at }, { entries }));
    expect(expired).toMatchObject({ mode: "expired", endsAt: at });
    expect(expired.expired.map((e) => [e.resource, e.eventId])).toEqual(expiredEvents.items.map((e) => [e.resource, e.id]));
    const expiredNow = viewOf(await listLeasesFromSearch({ store: name, state: "expired", window: "1h" }, { entries }));
    expect(expiredNow.expired.map((e) => e.resource).sort()).toEqual(["at:after:zombie", "at:before:zombie"]);

    // The counts above the list cover the same window.
    const facets = viewOf(await getEventFacetsFromSearch({ store: name, window: "1h", at }, { entries }));
    expect(facets.total).toBe(truth.items.length);
  });

  it("an overview whose window ends an hour ago counts that window, and walks the active count back to its end", async () => {
    const store = storeOf();
    await writePhase(store, "now");
    await store.sweep();
    const entries = [{ store }];
    const live = viewOf(await getOverviewFromSearch({ store: name, window: "1h" }, { entries }));
    expect(live.total).toMatchObject({ acquired: 3, released: 1, expired: 1, contended: 1, activeLeases: 1 });
    expect(live.endsAt).toBeNull();

    const at = new Date(Date.now() - 3_600_000).toISOString();
    const past = viewOf(await getOverviewFromSearch({ store: name, window: "1h", at }, { entries }));
    expect(past).toMatchObject({ window: "1h", endsAt: at, to: new Date(Date.parse(at) + 1).toISOString() });
    // Nothing happened in that hour, and nothing was held at its end.
    expect(past.total).toMatchObject({ acquired: 0, released: 0, expired: 0, contended: 0, activeLeases: 0 });
    expect(past.points.every((p) => p.active === 0)).toBe(true);
  });
});

describe("at= on the leases list's JSON twin", () => {
  it("refuses at without state=expired rather than answer for now", async () => {
    const result = await listLeasesFromSearch({ at: "2026-04-01T10:00:00Z" }, { entries: [{ store: stores[0]! }] });
    expect(result.ok ? null : result.problem.param).toBe("at");
  });
});
