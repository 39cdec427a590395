import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { freshPgSchema, freshRedisNamespace, TEST_DATABASE_URL, TEST_REDIS_URL } from "@leasewatch/lease/testing";
import { startPgBouncer, startRedis, stopAllServers } from "@/test/support/servers";
import { captureLogs } from "@/lib/log/testing";
import { PostgresLeaseStore } from "@leasewatch/lease";
import { ConfigError, parseStoresConfig } from "./store-config";
import { readRedisEventRetention } from "./store-kinds";
import { createStore, getStore, getStoreEntries, getStoreNames, wrapWithLazyMigration } from "./store-registry";

const REGISTRY_KEY = Symbol.for("leasewatch.console.registry");

function resetRegistry(): void {
  const g = globalThis as Record<symbol, { entries: Array<{ store: { close(): Promise<void> } }>; sweepTimer: NodeJS.Timeout | null } | undefined>;
  const current = g[REGISTRY_KEY];
  if (current) {
    if (current.sweepTimer) clearInterval(current.sweepTimer);
    for (const e of current.entries) void e.store.close();
  }
  delete g[REGISTRY_KEY];
}

describe("registry configuration", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    resetRegistry();
  });

  it("refuses a bad LEASEWATCH_STORES with a ConfigError that says what is wrong", () => {
    vi.stubEnv("LEASEWATCH_STORES", '[{"name":"pg-main","kind":"mysql","url":"mysql://x"}]');
    expect(() => getStoreEntries()).toThrow(ConfigError);
    vi.stubEnv("LEASEWATCH_STORES", "not json");
    expect(() => getStoreNames()).toThrow(/LEASEWATCH_STORES is not valid JSON/);
  });

  it("builds each configured store once, by name, in order", () => {
    vi.stubEnv(
      "LEASEWATCH_STORES",
      JSON.stringify([
        { name: "pg-a", kind: "postgres", url: "postgres://postgres@127.0.0.1:1/postgres" },
        { name: "redis-b", kind: "redis", url: "redis://127.0.0.1:1" },
      ]),
    );
    expect(getStoreNames()).toEqual(["pg-a", "redis-b"]);
    expect(getStore("pg-a")?.kind).toBe("postgres");
    expect(getStore("redis-b")?.kind).toBe("redis");
    expect(getStore("nope")).toBeUndefined();
    expect(getStore("redis-b")).toBe(getStoreEntries()[1]!.store);
  });
});

describe("Redis event retention from the environment", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("reads days and a memory budget, and nothing when unset", () => {
    expect(readRedisEventRetention({})).toEqual({});
    expect(readRedisEventRetention({ LEASEWATCH_REDIS_EVENT_RETENTION_DAYS: "7", LEASEWATCH_REDIS_EVENT_MEMORY_MB: "512" })).toEqual({
      eventRetentionDays: 7,
      eventRetentionMaxMb: 512,
    });
    expect(readRedisEventRetention({ LEASEWATCH_REDIS_EVENT_MEMORY_MB: "64" })).toEqual({ eventRetentionMaxMb: 64 });
  });

  it("refuses a value that is not a whole positive number, naming the variable", () => {
    expect(() => readRedisEventRetention({ LEASEWATCH_REDIS_EVENT_RETENTION_DAYS: "0" })).toThrow(/LEASEWATCH_REDIS_EVENT_RETENTION_DAYS must be at least 1/);
    expect(() => readRedisEventRetention({ LEASEWATCH_REDIS_EVENT_RETENTION_DAYS: "1.5" })).toThrow(/LEASEWATCH_REDIS_EVENT_RETENTION_DAYS must be a whole number/);
    expect(() => readRedisEventRetention({ LEASEWATCH_REDIS_EVENT_MEMORY_MB: "lots" })).toThrow(/LEASEWATCH_REDIS_EVENT_MEMORY_MB must be a number/);
  });

  it("gives the configured days to the console's Redis stores", async () => {
    vi.stubEnv("LEASEWATCH_REDIS_EVENT_RETENTION_DAYS", "7");
    const fresh = freshRedisNamespace(TEST_REDIS_URL);
    const store = createStore({ name: "redis-ret", kind: "redis", url: fresh.url, namespace: fresh.namespace }, { migrate: false });
    try {
      expect(await store.eventRetention?.()).toEqual({ retentionDays: 7, retainedFrom: null });
    } finally {
      await store.close();
      await fresh.drop();
    }
  });
});

describe("migrating and sweeping are switched on by configuration", () => {
  const fresh = freshPgSchema();
  afterEach(() => {
    vi.unstubAllEnvs();
    resetRegistry();
  });
  afterAll(async () => {
    await fresh.drop();
  });
  const registryTimer = () => (globalThis as Record<symbol, { sweepTimer: NodeJS.Timeout | null } | undefined>)[REGISTRY_KEY]?.sweepTimer;

  it("off by default: no sweep timer, and a fresh schema is not created by the console", async () => {
    vi.stubEnv("LEASEWATCH_MIGRATE", "");
    vi.stubEnv("LEASEWATCH_SWEEP", "");
    vi.stubEnv("LEASEWATCH_STORES", JSON.stringify([{ name: "pg-a", kind: "postgres", url: fresh.connectionString, schema: fresh.schema }]));
    await expect(getStore("pg-a")!.list()).rejects.toThrow(/does not exist/);
    expect(registryTimer()).toBeNull();
  });

  it("LEASEWATCH_MIGRATE=1 migrates on first use; LEASEWATCH_SWEEP=1 starts the sweeper", async () => {
    vi.stubEnv("LEASEWATCH_MIGRATE", "1");
    vi.stubEnv("LEASEWATCH_SWEEP", "1");
    vi.stubEnv("LEASEWATCH_STORES", JSON.stringify([{ name: "pg-a", kind: "postgres", url: fresh.connectionString, schema: fresh.schema }]));
    expect((await getStore("pg-a")!.list()).items).toEqual([]);
    expect(registryTimer()).not.toBeNull();
  });
});

describe("lazy migration", () => {
  const fresh = freshPgSchema();
  const store = wrapWithLazyMigration(new PostgresLeaseStore({ name: "pg-lazy", connectionString: fresh.connectionString, schema: fresh.schema }));
  afterAll(async () => {
    await store.close();
    await fresh.drop();
  });

  it("migrates a postgres store on first use, so a fresh schema just works", async () => {
    const acquired = await store.acquire({ resource: "lazy:one", owner: "w", task: "t", ttlMs: 5_000 });
    expect(acquired.acquired).toBe(true);
    const page = await store.list({ prefix: "lazy:" });
    expect(page.items.map((l) => l.resource)).toEqual(["lazy:one"]);
  });

  it("reports a database that is down as down instead of throwing", async () => {
    const down = wrapWithLazyMigration(new PostgresLeaseStore({ name: "pg-down", connectionString: "postgres://postgres@127.0.0.1:1/postgres" }));
    try {
      const health = await down.health();
      expect(health.ok).toBe(false);
      await expect(down.list()).rejects.toThrow();
    } finally {
      await down.close();
    }
  });
});

describe("a store that could not be built", () => {
  it("reports itself down with the reason, refuses every call with it and closes quietly", async () => {
    // The schema rule is the store's own; a config that skipped parsing reaches it.
    const store = createStore({ name: "pg-broken", kind: "postgres", url: "postgres://postgres@127.0.0.1:1/postgres", schema: "Not-A-Schema" }, { migrate: true });
    expect(store.name).toBe("pg-broken");
    const health = await store.health();
    expect(health).toMatchObject({ store: "pg-broken", kind: "postgres", ok: false });
    expect(health.error).toMatch(/schema/);
    await expect(store.acquire({ resource: "r", owner: "o", task: "t", ttlMs: 5_000 })).rejects.toThrow(/store "pg-broken" is unavailable: .*schema/);
    await expect(store.list()).rejects.toThrow(/is unavailable/);
    await expect(store.stats({ from: new Date(0), to: new Date(), bucketMs: 60_000 })).rejects.toThrow(/is unavailable/);
    await expect(store.close()).resolves.toBeUndefined();
  });
});

describe("a Postgres store behind a transaction pooler", () => {
  afterAll(async () => {
    await stopAllServers();
  });

  it("takes pooler from LEASEWATCH_STORES and refuses a value it does not know", () => {
    const stores = (pooler: string) => ({ ...process.env, LEASEWATCH_STORES: JSON.stringify([{ name: "pg-a", kind: "postgres", url: "postgres://db-pooler:6432/app", pooler }]) });
    expect(parseStoresConfig(stores("transaction"))[0]).toMatchObject({ pooler: "transaction" });
    expect(() => parseStoresConfig(stores("session"))).toThrow(/at 0\.pooler: pooler must be "transaction"/);
  });

  it("two console stores configured with pooler share PgBouncer's one server session", async () => {
    const pooler = await startPgBouncer(TEST_DATABASE_URL, { poolSize: 1 });
    const fresh = freshPgSchema();
    const stores = ["pg-a", "pg-b"].map((name) => createStore({ name, kind: "postgres", url: pooler.url, schema: fresh.schema, pooler: "transaction" }, { migrate: true }));
    try {
      for (const [i, store] of stores.entries()) {
        expect((await store.acquire({ resource: `job:${i}`, owner: "w", task: "t", ttlMs: 10_000 })).acquired).toBe(true);
      }
      expect((await stores[0]!.list({})).items.map((l) => l.resource).sort()).toEqual(["job:0", "job:1"]);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await fresh.drop();
    }
  });
});

describe("store warnings", () => {
  afterAll(async () => {
    await stopAllServers();
  });

  it("puts a Redis server without an append-only file in the server log as a warning, once per store", async () => {
    const server = await startRedis();
    const logs = captureLogs();
    const fresh = freshRedisNamespace(server.url);
    const stores = ["redis-a", "redis-b"].map((name) => createStore({ name, kind: "redis", url: server.url, namespace: fresh.namespace }, { migrate: false }));
    try {
      for (const n of [1, 2]) for (const store of stores) await store.acquire({ resource: `job:warn-${n}`, owner: "w", task: "t", ttlMs: 10_000 });
      const warnings = logs.lines.filter((l) => l.code === "no_persistence");
      expect(warnings.map((w) => w.store)).toEqual(["redis-a", "redis-b"]);
      expect(warnings[0]).toMatchObject({ level: "warn", msg: expect.stringMatching(/runs without an append-only file/) });
    } finally {
      logs.restore();
      await Promise.all(stores.map((s) => s.close()));
    }
  });
});
