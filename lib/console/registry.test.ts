import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { freshPgSchema, freshRedisNamespace, TEST_REDIS_URL } from "@/lib/lease/testing/isolation";
import { PostgresLeaseStore } from "@/lib/lease/postgres/store";
import { ConfigError } from "./config";
import { createStore, getStore, getStoreEntries, getStoreNames, readRedisEventRetention, wrapWithLazyMigration } from "./registry";

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
