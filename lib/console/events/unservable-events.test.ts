import { beforeAll, describe, expect, it } from "vitest";
import type { AppSession } from "@/lib/auth/session";
import { TokenBucketLimiter } from "@/lib/console/shared/rate-limit";
import type { PostgresLeaseStore, RedisLeaseStore } from "@leasewatch/lease";
import { setUpStoreFixture } from "@/test/support/store-suite";
import { respondWithRead } from "@/lib/console/shared/api-response";
import { getEventFacetsFromSearch } from "@/lib/console/facets/facets";
import { listEventsFromSearch } from "./list-events";

/**
 * `/events` refuses a filter a store could only answer by reading its streams, with a 400 that
 * says what to use instead, before any store is read; a store that answered in part is named
 * in the view. Real stores, each in its own schema / namespace.
 */
const pgFixture = setUpStoreFixture("postgres", { name: "pg-a" });
const redisFixture = setUpStoreFixture("redis", { name: "redis-a", options: { buckets: 4 } });
let pgStore: PostgresLeaseStore;
let redisStore: RedisLeaseStore;
let tinyRedis: RedisLeaseStore;

const viewer: AppSession = { user: { id: "ann", email: null, name: "ann", roles: ["viewer"], scopes: { viewer: { kind: "all" } } }, signedInAt: Date.now(), authTime: null };
const limiter = () => new TokenBucketLimiter({ capacity: 100, refillPerSecond: 10 });

beforeAll(async () => {
  pgStore = pgFixture.store;
  redisStore = redisFixture.store;
  tinyRedis = redisFixture.open({ name: "redis-tiny", options: { readKeyBudget: 40 } });
  for (let i = 0; i < 150; i++) {
    const resource = `tenant_${i % 4}:job:${i}`;
    for (const store of [pgStore, redisStore]) {
      const got = await store.acquire({ resource, owner: `worker-${i % 3}`, task: "nightly", ttlMs: 60_000 });
      if (got.acquired) await store.release({ resource, leaseId: got.lease.leaseId });
    }
  }
}, 60_000);

describe("refused event filters", () => {
  const refused = new URLSearchParams({ prefix: "tenant_1:", window: "7d" });

  it("a prefix alone over 7 days on Redis answers 400 naming the combinations to use", async () => {
    const entries = [{ store: pgStore }, { store: redisStore }];
    const response = await respondWithRead(viewer, "events:read", () => listEventsFromSearch(refused, { entries }), limiter());
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; param: string };
    expect(body.param).toBe("prefix");
    expect(body.error).toBe(
      'Bad parameter "prefix": On Redis a prefix filter alone reads the event streams, so it covers at most 24 h: use window=24h or shorter, ' +
        "or add an indexed filter beside it: owner, task, resource, lease, token, or kind=expired,force_released,renew_failed,lost,fencing_rejected,contended (store redis-a).",
    );
    // The counts above the list refuse it the same way.
    const facets = await getEventFacetsFromSearch(refused, { entries: [{ store: redisStore }] });
    expect(facets.ok ? null : facets.problem.param).toBe("prefix");
  });

  it("serves the same prefix on Postgres (an index range), and on Redis within 24 h or with an indexed filter", async () => {
    const onPg = await listEventsFromSearch(refused, { entries: [{ store: pgStore }] });
    expect(onPg.ok && onPg.view.items.length).toBe(50);
    const servedSearches: Record<string, string>[] = [{ prefix: "tenant_1:", window: "24h" }, { prefix: "tenant_1:", window: "7d", owner: "worker-1" }, { prefix: "tenant_1:", window: "7d", kind: "contended" }];
    for (const search of servedSearches) {
      const result = await listEventsFromSearch(new URLSearchParams(search), { entries: [{ store: redisStore }, { store: pgStore }] });
      expect(result.ok, JSON.stringify(search)).toBe(true);
    }
    const withOwner = await listEventsFromSearch(new URLSearchParams({ prefix: "tenant_1:", window: "7d", owner: "worker-1" }), { entries: [{ store: redisStore }] });
    // Resources i ≡ 1 (mod 4) with owner i mod 3 = 1: i ≡ 1 (mod 12), 13 of them → an acquire and a release each.
    expect(withOwner.ok && withOwner.view.items.length).toBe(26);
  });
});

describe("partial answers", () => {
  it("a Redis store that ran out of its read budget is marked partial in the view; the other store is whole", async () => {
    const result = await listEventsFromSearch(new URLSearchParams({ prefix: "tenant_3:", window: "1h" }), { entries: [{ store: tinyRedis }, { store: pgStore }] });
    if (!result.ok) throw new Error(result.problem.message);
    const tiny = result.view.stores.find((s) => s.store === "redis-tiny");
    const pg = result.view.stores.find((s) => s.store === "pg-a");
    expect(tiny?.ok && tiny.data.partial).toEqual({ reason: "read_budget", examined: expect.any(Number) });
    expect(pg?.ok && pg.data.partial).toBeUndefined();
    expect(pg?.ok && pg.data.count).toBe(50);
  });
});
