import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TokenBucketLimiter } from "@/lib/actions/rate-limit";
import type { AppSession } from "@/lib/auth/session";
import { PostgresLeaseStore } from "@/lib/lease/postgres/store";
import { RedisLeaseStore } from "@/lib/lease/redis/store";
import { createRandom, freshPgSchema, freshRedisNamespace } from "@/lib/lease/testing/isolation";
import type { LeaseStore } from "@/lib/lease/types";
import { respondWithRead } from "./api-response";
import type { ReadOptions } from "./fan-out";
import type { ReadResult } from "./views";
import { getLeaseDetailFromRoute } from "./get-lease-detail";
import { getOverviewFromSearch } from "./get-overview";
import { listEventsFromSearch } from "./list-events";
import { listLeasesFromSearch } from "./list-leases";

/**
 * 500 viewer requests built from the parameters the read routes accept, with valid,
 * valid-ish and hostile values, through the same edge as the routes
 * (respondWithRead) against a real Postgres and a real Redis store at test volume.
 * None may be a 5xx or carry a stack trace. The slowest is printed, not asserted.
 * (The audit log's reads live in lib/audit; its parameters are fuzzed by audit-params.test.ts.)
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261126);
const REQUESTS = 500;

const VALUES: Record<string, string[]> = {
  store: ["pg-fuzz", "redis-fuzz", "nope", "", "PG-FUZZ", "a".repeat(300)],
  prefix: ["jobs:", "jobs:1", "", "%", "_", "jobs:\u0000", "'; DROP TABLE x; --", "é:ü:字", "a".repeat(2000), "jobs:*", "\\"],
  owner: ["w1", "nobody", "", " ", "w1' OR '1'='1", "x".repeat(1000), "%"],
  task: ["t1", "nothing", "", "t".repeat(600), "\u202e"],
  resource: ["jobs:1", "jobs:1:2", "", "/", "..", "r".repeat(5000)],
  kind: ["acquired", "released,expired", "contended", "bogus", "", ",,,", "acquired,bogus"],
  token: ["1", "0", "18446744073709551616", "-1", "1e9", "abc", "9".repeat(40)],
  lease: [randomUUID(), "not-a-uuid", "", "00000000-0000-0000-0000-000000000000"],
  window: ["15m", "1h", "6h", "24h", "7d", "custom", "30d", "", "1y"],
  from: ["2026-01-01T00:00:00Z", new Date(Date.now() - 3_600_000).toISOString(), "yesterday", "", "0", "9999-12-31T23:59:59Z", "2026-13-45T99:99:99Z"],
  to: [new Date().toISOString(), "2020-01-01T00:00:00Z", "tomorrow", "", "-1"],
  limit: ["1", "50", "200", "201", "0", "-5", "1e3", "abc", "99999999999"],
  cursor: ["", "abc", "eyJ4IjoxfQ", Buffer.from('{"pg-fuzz":"zzz"}').toString("base64url"), Buffer.from("[1,2]").toString("base64url"), "%%%"],
  prev: ["", "abc", "a,b,c"],
  sort: ["expires", "held_longest", "newest", "random", ""],
  state: ["held", "expiring", "overdue", "lapsed", "expired", "dead", ""],
  depth: ["1", "2", "3", "0", "4", "-1", "x"],
};
const PARAMS = {
  leases: ["store", "prefix", "owner", "task", "state", "sort", "window", "from", "to", "limit", "cursor", "prev"],
  events: ["store", "kind", "prefix", "owner", "task", "token", "lease", "resource", "window", "from", "to", "limit", "cursor", "prev"],
  overview: ["store", "window", "from", "to", "depth"],
} as const;

describe("viewer request fuzz", () => {
  const stores: LeaseStore[] = [];
  const drops: Array<() => Promise<unknown>> = [];
  const viewer: AppSession = { user: { id: "fuzz", email: null, name: "fuzz", roles: ["viewer"], scopes: { viewer: { kind: "all" } } }, signedInAt: Date.now(), authTime: null };
  const unlimited = new TokenBucketLimiter({ capacity: 1e9, refillPerSecond: 1e9 });

  beforeAll(async () => {
    const pgFresh = freshPgSchema();
    const pgStore = new PostgresLeaseStore({ name: "pg-fuzz", connectionString: pgFresh.connectionString, schema: pgFresh.schema });
    await pgStore.migrate();
    const redisFresh = freshRedisNamespace();
    const redisStore = new RedisLeaseStore({ name: "redis-fuzz", url: redisFresh.url, namespace: redisFresh.namespace });
    stores.push(pgStore, redisStore);
    drops.push(pgFresh.drop, redisFresh.drop);
    for (const store of stores) {
      for (let i = 0; i < 30; i++) {
        const got = await store.acquire({ resource: `jobs:${i % 7}:${i}`, owner: `w${i % 3}`, task: `t${i % 4}`, ttlMs: 60_000 });
        if (got.acquired && i % 2 === 0) await store.release({ resource: `jobs:${i % 7}:${i}`, leaseId: got.lease.leaseId });
      }
    }
  }, 60_000);

  afterAll(async () => {
    for (const store of stores) await store.close();
    for (const drop of drops) await drop();
  });

  it(`${REQUESTS} requests (seed ${SEED}): never a 5xx, never a stack trace`, async () => {
    const random = createRandom(SEED);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const entries = stores.map((store) => ({ store }));
    const statuses = new Map<number, number>();
    let slowest = { ms: 0, what: "" };
    for (let i = 0; i < REQUESTS; i++) {
      const route = pick(["leases", "events", "overview", "detail"] as const);
      const search = new URLSearchParams();
      let read: () => ReturnType<typeof respondWithRead>;
      if (route === "detail") {
        const segments = pick([["jobs:1:1"], ["jobs", "1"], [""], ["%E0%A4%A"], ["a".repeat(3000)], ["jobs:%2F"]]);
        const storeName = pick(VALUES.store!);
        read = () => respondWithRead(viewer, "leases:read", () => getLeaseDetailFromRoute({ store: storeName, resource: segments }, { entries }), unlimited);
        search.set("detail", `${storeName}/${segments.join("/")}`);
      } else {
        for (const name of PARAMS[route]) {
          if (random() < 0.35) search.append(name, pick(VALUES[name]!));
          if (random() < 0.03) search.append(name, pick(VALUES[name]!)); // repeated parameter
        }
        const readers: Record<typeof route, (search: URLSearchParams, options: ReadOptions) => Promise<ReadResult<unknown>>> = {
          leases: listLeasesFromSearch,
          events: listEventsFromSearch,
          overview: getOverviewFromSearch,
        };
        const fn = readers[route];
        const permission = route === "events" ? "events:read" : "leases:read";
        read = () => respondWithRead(viewer, permission, () => fn(search, { entries, reuseClosedBuckets: false }), unlimited);
      }
      const started = performance.now();
      const response = await read();
      const ms = performance.now() - started;
      if (ms > slowest.ms) slowest = { ms, what: `${route}?${search.toString().slice(0, 200)}` };
      const body = await response.text();
      const what = `request ${i} (seed ${SEED}) ${route}?${search.toString().slice(0, 300)} → ${response.status} ${body.slice(0, 300)}`;
      expect(response.status, what).toBeLessThan(500);
      expect(body, what).not.toMatch(/\n\s+at [^\n]+:\d+:\d+/);
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    }
    console.log(`viewer fuzz: ${REQUESTS} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}, slowest ${Math.round(slowest.ms)} ms (${slowest.what})`);
    // Both kinds of answer were exercised: accepted reads and refused parameters.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
  }, 300_000);
});
