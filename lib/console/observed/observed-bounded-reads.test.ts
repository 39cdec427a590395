import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCOPE_ALL } from "@/lib/auth/scope";
import { migrateObservedHistory, recordSample } from "@/lib/observed/observer";
import { DEFAULT_ADVISORY_READ_LIMIT, readAdvisoryLocks } from "@/lib/observed/pg-advisory";
import { readRedisLockKeys } from "@/lib/observed/redis-keys";
import { advisorySource, redisKeysSource } from "@/lib/observed/sources";
import { freshPgSchema, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { startPostgres, startRedis, stopAllServers, type ThrowawayServer } from "@/test/support/servers";
import { getObservedCounts, getObservedView } from "@/lib/console/shared/observed";

/**
 * Observed systems far larger than a page: a Postgres with 100,000 advisory locks
 * held by real sessions, a Redis with 1,000,000 keys of which three are locks.
 * Each read stops at its bound — rows (LIMIT), keys examined (SCAN COUNT budget) —
 * and says it read only part; the console then says "partial". Throwaway servers,
 * so the shared ones are not loaded.
 */

const ADVISORY_LOCKS = 100_000;
const LOCK_SESSIONS = 4;
const REDIS_KEYS = 1_000_000;
/** The setup loads the servers; each test reads within its bounds, but a loaded machine is slow to fill them. */
const SETUP_TIMEOUT_MS = 300_000;

const history = freshPgSchema();
const historyPool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
historyPool.on("error", () => {});
const env = {
  LEASEWATCH_OBSERVED: JSON.stringify([
    { name: "big-pg", kind: "pg-advisory", url: "postgres://unused@127.0.0.1/x" },
    { name: "big-redis", kind: "redis-keys", url: "redis://127.0.0.1:1", patterns: ["locks:*"] },
  ]),
} as unknown as NodeJS.ProcessEnv;
const read = { env, pool: historyPool, schema: history.schema, scope: SCOPE_ALL };

let postgres: ThrowawayServer;
let redisServer: ThrowawayServer;
let observedPool: pg.Pool;
let redis: Redis;
const sessions: pg.Client[] = [];

beforeAll(async () => {
  // 100,000 advisory locks live in the shared lock table (max_locks_per_transaction × max_connections slots).
  [postgres, redisServer] = await Promise.all([startPostgres({ settings: { max_locks_per_transaction: "2048" } }), startRedis()]);
  observedPool = new pg.Pool({ connectionString: postgres.url, max: 2 });
  observedPool.on("error", () => {});
  const perSession = ADVISORY_LOCKS / LOCK_SESSIONS;
  for (let i = 0; i < LOCK_SESSIONS; i++) {
    const client = new pg.Client({ connectionString: postgres.url, application_name: `batch-holder-${i}` });
    client.on("error", () => {});
    await client.connect();
    sessions.push(client);
    await client.query("SELECT count(pg_advisory_lock(g)) FROM generate_series($1::bigint, $2::bigint) AS g", [i * perSession + 1, (i + 1) * perSession]);
  }

  redis = new Redis(redisServer.url);
  // One script fills the keyspace in batches (a pipeline of a million SETs would hold them all in memory here).
  for (let from = 1; from <= REDIS_KEYS; from += 100_000) {
    await redis.eval("for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do redis.call('SET', 'filler:' .. i, 'x') end", 0, from, from + 99_999);
  }
  await redis.set("locks:billing-close", "redlock-1", "PX", 600_000);
  await redis.set("locks:reports", "redlock-2", "PX", 600_000);
  await redis.zadd("locks:semaphore", Date.now() + 600_000, "holder-a");
  await migrateObservedHistory(historyPool, history.schema);
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all(sessions.map((c) => c.end().catch(() => {})));
  await observedPool?.end();
  redis?.disconnect();
  await history.drop();
  await historyPool.end();
  await stopAllServers();
}, SETUP_TIMEOUT_MS);

describe("a Postgres with 100,000 advisory locks", () => {
  it("is read up to its row limit, says it was cut short, and the console says partial", async () => {
    const snapshot = await readAdvisoryLocks(observedPool);
    expect(snapshot.total).toBe(ADVISORY_LOCKS);
    expect(snapshot.locks).toHaveLength(DEFAULT_ADVISORY_READ_LIMIT);
    expect(snapshot.truncated).toBe(true);

    const sample = await advisorySource("big-pg", observedPool).sample();
    expect(sample.complete).toBe(false);
    expect(sample.locks).toHaveLength(DEFAULT_ADVISORY_READ_LIMIT);
    await recordSample(historyPool, history.schema, { store: "big-pg", fencingToken: "1", ...sample });

    const view = await getObservedView(read);
    const store = view.stores.find((s) => s.name === "big-pg")!;
    expect(store).toMatchObject({ partial: true, error: null });
    expect(store.locks).toHaveLength(DEFAULT_ADVISORY_READ_LIMIT);
    expect((await getObservedCounts(read)).stores.find((s) => s.name === "big-pg")).toMatchObject({ partial: true, held: DEFAULT_ADVISORY_READ_LIMIT });
  });

  it("a smaller limit reads fewer rows: the bound is the limit, not the database", async () => {
    const snapshot = await readAdvisoryLocks(observedPool, { limit: 100 });
    expect(snapshot.locks.every((l) => l.resource.startsWith("advisory:") && l.holders.length === 1)).toBe(true);
    expect(snapshot).toMatchObject({ total: ADVISORY_LOCKS, truncated: true });
    expect(snapshot.locks).toHaveLength(100);
  });
});

describe("a Redis with 1,000,000 keys, three of them locks", () => {
  /** SCAN calls the server answered since the last reset (its own count). */
  async function scanCalls(): Promise<number> {
    const stats = await redis.info("commandstats");
    return Number(/cmdstat_scan:calls=(\d+)/.exec(stats)?.[1] ?? 0);
  }

  it("stops scanning at its budget of keys examined, says it was cut short, and the console says partial", async () => {
    await redis.config("RESETSTAT");
    // A time budget far beyond the test, so only the count budget can stop the read.
    const snapshot = await readRedisLockKeys(redis, { patterns: ["locks:*"], maxExamined: 100_000, budgetMs: 3_600_000 });
    expect(snapshot.complete).toBe(false);
    expect(snapshot.examined).toBe(100_000);
    // COUNT 1000 per call: 100 calls examine the budget; the server counted no more.
    expect(await scanCalls()).toBe(100);
    expect(snapshot.keys.every((k) => k.key.startsWith("locks:"))).toBe(true);

    const sample = await redisKeysSource("big-redis", redis, { patterns: ["locks:*"], maxExamined: 100_000, budgetMs: 3_600_000 }).sample();
    expect(sample.complete).toBe(false);
    await recordSample(historyPool, history.schema, { store: "big-redis", fencingToken: "1", ...sample });
    expect((await getObservedView(read)).stores.find((s) => s.name === "big-redis")).toMatchObject({ partial: true, error: null });
  });

  it("with a budget past the keyspace it reads all of it, finds the three locks, and is complete", async () => {
    await redis.config("RESETSTAT");
    const snapshot = await readRedisLockKeys(redis, { patterns: ["locks:*"], maxExamined: 2_000_000, budgetMs: 3_600_000 });
    expect(snapshot.complete).toBe(true);
    expect(snapshot.keys.map((k) => [k.key, k.type]).sort()).toEqual([
      ["locks:billing-close", "string"],
      ["locks:reports", "string"],
      ["locks:semaphore", "zset"],
    ]);
    // A full pass is about keys / COUNT calls, and never more than the budget allows.
    expect(await scanCalls()).toBeLessThanOrEqual(2_000);

    const sample = await redisKeysSource("big-redis", redis, { patterns: ["locks:*"], maxExamined: 2_000_000, budgetMs: 3_600_000 }).sample();
    await recordSample(historyPool, history.schema, { store: "big-redis", fencingToken: "2", ...sample });
    const store = (await getObservedView(read)).stores.find((s) => s.name === "big-redis")!;
    expect(store.partial).toBe(false);
    expect(store.locks.map((l) => l.resource).sort()).toEqual(["locks:billing-close", "locks:reports", "locks:semaphore"]);
  });
});
