/**
 * Store specs that can cross a process boundary (JSON), and fixtures that give
 * each test its own Postgres schema / Redis namespace on any server URL
 * (the shared ones or a throwaway one from servers.ts).
 */
import type pg from "pg";
import { z } from "zod";
import {
  createFencedTable,
  type EventQuery,
  LEASE_EVENT_KINDS,
  type LeaseEvent,
  type LeaseEventKind,
  type LeaseStore,
  PostgresLeaseStore,
  type PostgresLeaseStoreOptions,
  RedisLeaseStore,
  type RedisLeaseStoreOptions,
  type StoreKind,
} from "@leasewatch/lease";
import { freshPgSchema, freshRedisNamespace, TEST_DATABASE_URL, TEST_REDIS_URL } from "@leasewatch/lease/testing";

export const ZStoreSpec = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("postgres"), name: z.string(), url: z.string(), schema: z.string() }),
  z.strictObject({ kind: z.literal("redis"), name: z.string(), url: z.string(), namespace: z.string() }),
]);
export type StoreSpec = z.infer<typeof ZStoreSpec>;

/**
 * Per kind: its spec, the constructor options a fixture passes through (the name and where
 * the data lives come from the spec) and the store class, so a test gets the concrete store.
 */
interface StoreKinds {
  postgres: {
    spec: Extract<StoreSpec, { kind: "postgres" }>;
    options: Omit<PostgresLeaseStoreOptions, "name" | "connectionString" | "pool" | "schema">;
    store: PostgresLeaseStore;
  };
  redis: {
    spec: Extract<StoreSpec, { kind: "redis" }>;
    options: Omit<RedisLeaseStoreOptions, "name" | "url" | "client" | "cluster" | "namespace">;
    store: RedisLeaseStore;
  };
}
export type SpecOf<K extends StoreKind> = StoreKinds[K]["spec"];
export type StoreOptions<K extends StoreKind> = StoreKinds[K]["options"];
export type StoreOf<K extends StoreKind> = StoreKinds[K]["store"];

const openers: { [K in StoreKind]: (spec: SpecOf<K>, options?: StoreOptions<K>) => StoreOf<K> } = {
  postgres: (spec, options) => new PostgresLeaseStore({ ...options, name: spec.name, connectionString: spec.url, schema: spec.schema }),
  redis: (spec, options) => new RedisLeaseStore({ ...options, name: spec.name, url: spec.url, namespace: spec.namespace }),
};

/** Opens a store from a spec. Postgres: the schema must already be migrated (see createStoreFixture). */
export function openStore<K extends StoreKind>(spec: SpecOf<K>, options?: StoreOptions<K>): StoreOf<K> {
  const open: (spec: SpecOf<K>, options?: StoreOptions<K>) => StoreOf<K> = openers[spec.kind as K];
  return open(spec, options);
}

export interface StoreFixtureSetup<K extends StoreKind = StoreKind> {
  /** Server (default: the shared one for the kind, or a throwaway one from servers.ts). */
  url?: string;
  /** Store name, stamped on leases and events (default "pg-test" / "redis-test"). */
  name?: string;
  /** Passed to every store the fixture opens, the migrating one included. */
  options?: StoreOptions<K>;
}

export interface StoreFixture<K extends StoreKind = StoreKind> {
  spec: SpecOf<K>;
  /** A store opened for the test itself. */
  store: StoreOf<K>;
  /** Another store instance (own connections) on the same data; `name` and each of `options` replace the fixture's. */
  open(overrides?: Omit<StoreFixtureSetup<K>, "url">): StoreOf<K>;
  /** Closes every store opened here and drops the schema / namespace. */
  cleanup(): Promise<void>;
}

/** An isolated store of `kind`: its own schema / namespace, migrated, on `setup.url`. */
export async function createStoreFixture<K extends StoreKind>(kind: K, setup: StoreFixtureSetup<K> = {}): Promise<StoreFixture<K>> {
  const opened: LeaseStore[] = [];
  let spec: StoreSpec;
  let drop: () => Promise<unknown>;
  if (kind === "postgres") {
    const fresh = freshPgSchema(setup.url ?? TEST_DATABASE_URL);
    spec = { kind, name: setup.name ?? "pg-test", url: fresh.connectionString, schema: fresh.schema };
    drop = () => fresh.drop();
  } else {
    const fresh = freshRedisNamespace(setup.url ?? TEST_REDIS_URL);
    spec = { kind: "redis", name: setup.name ?? "redis-test", url: fresh.url, namespace: fresh.namespace };
    drop = () => fresh.drop();
  }
  const kindSpec = spec as SpecOf<K>;
  const open = ({ name = kindSpec.name, options }: Omit<StoreFixtureSetup<K>, "url"> = {}): StoreOf<K> => {
    const store = openStore({ ...kindSpec, name }, { ...setup.options, ...options });
    opened.push(store);
    return store;
  };
  if (kind === "postgres") {
    // Migrated by a store of its own, closed before the test's stores open.
    const migrator = openStore(kindSpec, setup.options);
    try {
      if (migrator instanceof PostgresLeaseStore) await migrator.migrate();
    } finally {
      await migrator.close();
    }
  }
  const store = open();
  return {
    spec: kindSpec,
    store,
    open,
    cleanup: async () => {
      await Promise.allSettled(opened.map((s) => s.close()));
      await drop();
    },
  };
}

/** Every event matching `query`, oldest first (follows cursors). */
export async function collectEvents(store: LeaseStore, query: EventQuery = {}): Promise<LeaseEvent[]> {
  const items: LeaseEvent[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10_000; page++) {
    const result = await store.events({ ...query, order: "asc", limit: 1000, ...(cursor ? { cursor } : {}) });
    items.push(...result.items);
    cursor = result.nextCursor;
    if (!cursor) return items;
  }
  throw new Error("events() never stopped paginating");
}

/** Event counts per kind. */
export function countKinds(events: readonly LeaseEvent[]): Record<LeaseEventKind, number> {
  const counts = Object.fromEntries(LEASE_EVENT_KINDS.map((k) => [k, 0])) as Record<LeaseEventKind, number>;
  for (const e of events) counts[e.kind] += 1;
  return counts;
}

/**
 * Conservation: acquired = released + expired + force_released + currently held.
 * Returns both sides so a failing assertion shows the numbers.
 */
export async function checkConservation(store: LeaseStore, prefix?: string): Promise<{ acquired: number; ended: number; held: number; counts: Record<LeaseEventKind, number> }> {
  const counts = countKinds(await collectEvents(store, prefix ? { prefix } : {}));
  let held = 0;
  let cursor: string | undefined;
  do {
    const page = await store.list({ ...(prefix ? { prefix } : {}), limit: 1000, ...(cursor ? { cursor } : {}) });
    held += page.items.length;
    cursor = page.nextCursor;
  } while (cursor);
  return { acquired: counts.acquired, ended: counts.released + counts.expired + counts.force_released, held, counts };
}

/**
 * The same store, with a log of which methods were called in what order (calls
 * go straight through to the real store). Lets a test check that nothing was
 * *sent* after some point, e.g. no renew after a lease was lost.
 */
export function recordCalls(store: LeaseStore): { store: LeaseStore; calls: string[] } {
  const calls: string[] = [];
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push(String(property));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls };
}

/** A fenced downstream table (with its write history) in a schema of its own, for fault tests. */
export interface FencedDownstream {
  /** Schema-qualified table name, as createFencedTable / fencedWrite take it. */
  table: string;
  drop(): Promise<void>;
}

export async function createFencedDownstream(pool: pg.Pool, name: string): Promise<FencedDownstream> {
  const schema = freshPgSchema();
  await pool.query(`CREATE SCHEMA "${schema.schema}"`);
  const table = `${schema.schema}.${name}`;
  await createFencedTable({ pool, table, history: true });
  return {
    table,
    drop: async () => {
      await schema.drop();
    },
  };
}
