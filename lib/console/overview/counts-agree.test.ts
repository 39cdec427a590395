/**
 * The same count read through every page's read model agrees, on both stores: for one
 * window of known history, the overview's tiles, the events list (paged to its end), the
 * counts above it (facets) and the owner page. A count that cannot be exact says what it
 * covers instead.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type LeaseStore, type PostgresLeaseStore, RedisLeaseStore } from "@leasewatch/lease";
import { backfillHistory } from "@/scripts/seed/backfill";
import type { TStoreConfig } from "@/lib/server/store-config";
import { getEventFacetsFromSearch } from "@/lib/console/facets/facets";
import type { StoreRef } from "@/lib/console/shared/fan-out";
import { getOverviewFromSearch } from "./get-overview";
import { getOwnerFromRoute } from "@/lib/console/owners/get-owner";
import { listEventsFromSearch } from "@/lib/console/events/list-events";
import { wrapWithLazyMigration } from "@/lib/server/store-registry";
import type { ReadResult } from "@/lib/console/shared/views";
import { setUpStorePair } from "@/test/support/store-pair";
import { createStoreFixture } from "@/test/support/stores";

const MINUTE = 60_000;
const EXPIRING_OWNER = "counts-zombie";
/** More than the owner page lists per store, so its counts must come from a count, not the list. */
const EXPIRIES = 60;
const CONTENDED = 45;
const RELEASED = 20;

function viewOf<T>(result: ReadResult<T>): T {
  if (!result.ok) throw new Error(`expected a view, got a problem: ${result.problem.param}: ${result.problem.message}`);
  return result.view;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function seed(store: LeaseStore): Promise<void> {
  for (let i = 0; i < EXPIRIES; i++) {
    const r = await store.acquire({ resource: `counts:zombie:${i}`, owner: EXPIRING_OWNER, task: "job", ttlMs: 100 });
    if (!r.acquired) throw new Error("expected to acquire");
  }
  const held = await store.acquire({ resource: "counts:hot:1", owner: "counts-holder", task: "job", ttlMs: 120_000 });
  if (!held.acquired) throw new Error("expected to acquire the hot resource");
  for (let i = 0; i < CONTENDED; i++) {
    const r = await store.acquire({ resource: "counts:hot:1", owner: "counts-waiter", task: "job", ttlMs: 10_000 });
    if (r.acquired) throw new Error("expected contention");
  }
  for (let i = 0; i < RELEASED; i++) {
    const r = await store.acquire({ resource: `counts:tidy:${i}`, owner: "counts-tidy", task: "job", ttlMs: 10_000 });
    if (!r.acquired) throw new Error("expected to acquire");
    await store.release({ resource: r.lease.resource, leaseId: r.lease.leaseId });
  }
  await sleep(250);
  await store.sweep();
}

const stores = setUpStorePair({ pg: "pg-n", redis: "redis-n" }, "file");
let from: string;
let to: string;

beforeAll(async () => {
  // A window of whole minutes around the history, so no page counts part of a minute.
  const startMs = Math.floor(Date.now() / MINUTE) * MINUTE - MINUTE;
  await Promise.all([seed(stores.pgStore), seed(stores.redis)]);
  await stores.redis.project();
  from = new Date(startMs).toISOString();
  to = new Date(Math.ceil((Date.now() + 1) / MINUTE) * MINUTE + MINUTE).toISOString();
}, 60_000);

/**
 * What these tests compare is counts, not speed: reads get far more than the console's per-store
 * deadline, so a loaded machine cannot turn a slow read into a store that answered nothing.
 */
const UNHURRIED = { timeoutMs: 60_000 };

async function countEvents(entries: StoreRef[], search: Record<string, string>): Promise<number> {
  let n = 0;
  let cursor: string | undefined;
  do {
    const view = viewOf(await listEventsFromSearch({ ...search, limit: "200", ...(cursor ? { cursor } : {}) }, { entries, ...UNHURRIED }));
    expect(view.stores.every((s) => s.ok && !s.data.partial)).toBe(true);
    n += view.items.length;
    cursor = view.nextCursor ?? undefined;
  } while (cursor);
  return n;
}

describe.each([
  ["postgres", () => stores.pgStore],
  ["redis", () => stores.redis],
])("counts agree between pages on %s", (_kind, storeOf) => {
  it("overview tiles, events list, facets and owner page give the same numbers", async () => {
    const entries = [{ store: storeOf() }];
    const window = { window: "custom", from, to };
    const overview = viewOf(await getOverviewFromSearch(window, { entries }));
    expect(overview.stores.every((s) => s.ok)).toBe(true);
    const tiles = overview.total;

    for (const [kind, expected, tile] of [
      ["contended", CONTENDED, tiles.contended],
      ["expired", EXPIRIES, tiles.expired],
      ["released", RELEASED, tiles.released],
      ["acquired", EXPIRIES + 1 + RELEASED, tiles.acquired],
    ] as const) {
      expect(tile, `overview ${kind}`).toBe(expected);
      expect(await countEvents(entries, { ...window, kind }), `events list ${kind}`).toBe(expected);
      const facets = viewOf(await getEventFacetsFromSearch({ ...window, kind }, { entries }));
      expect(facets.isCapped).toBe(false);
      expect(facets.total, `facets ${kind}`).toBe(expected);
    }

    const kinds = viewOf(await getEventFacetsFromSearch(window, { entries })).groups.find((g) => g.field === "kind")!;
    expect(Object.fromEntries(kinds.values.map((v) => [v.value, v.count]))).toMatchObject({ contended: CONTENDED, expired: EXPIRIES, released: RELEASED });

    // More expiries than the owner page lists: its count is still the events list's.
    const owner = viewOf(await getOwnerFromRoute(EXPIRING_OWNER, window, { entries }));
    expect(owner.troubles.length).toBe(owner.troubleListLimit);
    expect(owner.troubleCounts.expired).toBe(EXPIRIES);
    expect(owner.troubleCountCover).toBeNull();
    expect(await countEvents(entries, { ...window, owner: EXPIRING_OWNER, kind: "expired" })).toBe(EXPIRIES);
    const ownerFacets = viewOf(await getEventFacetsFromSearch({ ...window, kind: "expired" }, { entries })).groups.find((g) => g.field === "owner")!;
    expect(ownerFacets.values.find((v) => v.value === EXPIRING_OWNER)?.count).toBe(EXPIRIES);
  });

  it("a prefix overview counts the same over 1 hour (events), 24 hours and 7 days (rollups per prefix group)", async () => {
    const entries = [{ store: storeOf() }];
    for (const window of ["1h", "24h", "7d"]) {
      const view = viewOf(await getOverviewFromSearch({ window, prefix: "counts:" }, { entries }));
      expect(view.window).toBe(window);
      expect(view.stores.every((s) => s.ok), `${window}: ${JSON.stringify(view.stores)}`).toBe(true);
      expect(view.prefixSource).toBe(window === "1h" ? "events" : "rollups");
      expect(view.coverage).toEqual([]);
      expect(view.total, window).toMatchObject({ contended: CONTENDED, expired: EXPIRIES, released: RELEASED, acquired: EXPIRIES + 1 + RELEASED, activeLeases: 1 });
      const zombies = viewOf(await getOverviewFromSearch({ window, prefix: "counts:zombie:" }, { entries }));
      expect(zombies.total, window).toMatchObject({ contended: 0, expired: EXPIRIES, released: 0, acquired: EXPIRIES });
    }
  });

  it("the console's store wrappers pass the prefix rollups through", async () => {
    const store = storeOf();
    const wrapped = store.kind === "postgres" ? wrapWithLazyMigration(store as PostgresLeaseStore) : store;
    const view = viewOf(await getOverviewFromSearch({ window: "7d", prefix: "counts:" }, { entries: [{ store: wrapped }] }));
    expect(view.stores.every((s) => s.ok)).toBe(true);
    expect(view.total.contended).toBe(CONTENDED);
  });

  it("a prefix it cannot count over 7 days is not counted, with the reason: never zeros, never down", async () => {
    const entries = [{ store: storeOf() }];
    const view = viewOf(await getOverviewFromSearch({ window: "7d", prefix: "counts:zombie:1" }, { entries }));
    expect(view.window).toBe("7d");
    const [store] = view.stores;
    expect(store?.ok).toBe(false);
    if (store && !store.ok) {
      expect(store.cause).toBe("refused");
      expect(store.error).toMatch(/choose window=24h or shorter, or a shorter prefix/);
    }
    // Up to 24 hours the same prefix is counted from its events.
    const day = viewOf(await getOverviewFromSearch({ window: "24h", prefix: "counts:zombie:1" }, { entries }));
    expect(day.prefixSource).toBe("events");
    expect(day.total.expired).toBe(11);
  });
});

describe("the per-store pill on the overview", () => {
  it("says down only when the store's connection fails, not when one read fails or is refused", async () => {
    const down = new RedisLeaseStore({ name: "redis-gone", url: "redis://127.0.0.1:1" });
    // A healthy store whose chart read fails: an error of that read, not an outage.
    const failing: LeaseStore = new Proxy(stores.pgStore as LeaseStore, {
      get(target, key, receiver) {
        if (key === "name") return "pg-failing";
        if (key === "stats") return () => Promise.reject(new Error("stats read failed"));
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    try {
      const view = viewOf(await getOverviewFromSearch({ window: "15m" }, { entries: [{ store: down }, { store: failing }, { store: stores.redis }], timeoutMs: 3_000 }));
      const causes = Object.fromEntries(view.stores.map((s) => [s.store, s.ok ? "ok" : s.cause]));
      expect(causes).toEqual({ "redis-gone": "unreachable", "pg-failing": "failed", "redis-n": "ok" });
      const refused = viewOf(await getOverviewFromSearch({ window: "7d", prefix: "counts:zombie:1" }, { entries: [{ store: stores.redis }] }));
      expect(refused.stores.map((s) => (s.ok ? "ok" : s.cause))).toEqual(["refused"]);
    } finally {
      await down.close();
    }
  }, 30_000);
});

describe("a Redis namespace that projected events before it counted per prefix group", () => {
  it("says from when its prefix counts start, and does not count the hours before", async () => {
    const fixture = await createStoreFixture("redis", { name: "redis-old", options: { buckets: 2 } });
    const { store } = fixture;
    try {
      await store.acquire({ resource: "old:a:1", owner: "w", task: "t", ttlMs: 60_000 });
      await store.project();
      // As a namespace projected by a store that kept no group counts: no mark of since when.
      for (let b = 0; b < 2; b++) await store.client.hdel(`${fixture.spec.namespace}:{b${b}}:proj`, "groups");
      await store.acquire({ resource: "old:a:2", owner: "w", task: "t", ttlMs: 60_000 });
      const view = viewOf(await getOverviewFromSearch({ window: "7d", prefix: "old:" }, { entries: [{ store }] }));
      // Its marks now start after the events it had projected: within the current hour, so nothing of this window is covered.
      const [outcome] = view.stores;
      expect(outcome?.ok).toBe(false);
      if (outcome && !outcome.ok) expect(outcome.error).toMatch(/counts per prefix only since .* UTC, after this window/);
    } finally {
      await fixture.cleanup();
    }
  });
});

/**
 * History written by the demo's backfill (bulk writes that stand in for the scripts and the
 * projector): every kind filter must find what the rollups count, contention included.
 */
describe.each([
  ["postgres", "pg-h"],
  ["redis", "redis-h"],
] as const)("backfilled history on %s", (kind, name) => {
  it("counts contention, expiries and acquires alike on the overview, the events list and the facets", async () => {
    const fixture = await createStoreFixture(kind, { name });
    const { store } = fixture;
    const config: TStoreConfig | undefined = fixture.spec.kind === "postgres" ? fixture.spec : undefined;
    try {
      const written = await backfillHistory({ store, hours: 1, seed: 23, ...(config ? { config } : {}) });
      expect(written.events).toBeGreaterThan(1_000);
      const entries = [{ store }];
      const nowMs = Date.now();
      const window = {
        window: "custom",
        from: new Date(Math.floor((nowMs - 45 * MINUTE) / MINUTE) * MINUTE).toISOString(),
        to: new Date(Math.floor((nowMs - 15 * MINUTE) / MINUTE) * MINUTE).toISOString(),
      };
      const overview = viewOf(await getOverviewFromSearch(window, { entries, ...UNHURRIED }));
      expect(overview.stores.map((s) => (s.ok ? "ok" : s.error))).toEqual(["ok"]);
      const tiles = overview.total;
      expect(tiles.contended).toBeGreaterThan(0);
      for (const [k, tile] of [
        ["contended", tiles.contended],
        ["expired", tiles.expired],
        ["acquired", tiles.acquired],
      ] as const) {
        expect(await countEvents(entries, { ...window, kind: k }), `events list ${k}`).toBe(tile);
        const facets = viewOf(await getEventFacetsFromSearch({ ...window, kind: k }, { entries, ...UNHURRIED }));
        if (!facets.isCapped) expect(facets.total, `facets ${k}`).toBe(tile);
      }
      // Under a prefix, over 24 hours and 7 days: the rollups per prefix group count what the events list lists.
      for (const prefix of ["tenant_1:", "tenant_1:billing-close:", "tenant_1"]) {
        for (const w of ["24h", "7d"]) {
          const view = viewOf(await getOverviewFromSearch({ window: w, prefix }, { entries, ...UNHURRIED }));
          expect(view.prefixSource).toBe("rollups");
          expect(view.stores.every((s) => s.ok)).toBe(true);
          for (const [k, tile] of [
            ["contended", view.total.contended],
            ["expired", view.total.expired],
            ["acquired", view.total.acquired],
          ] as const) {
            expect(await countEvents(entries, { window: "24h", prefix, kind: k }), `${prefix} ${w} ${k}`).toBe(tile);
          }
        }
      }
    } finally {
      await fixture.cleanup();
    }
  }, 120_000);
});
