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
  RedisLeaseStore,
  type StoreKind,
} from "@leasewatch/lease";
import { freshPgSchema, freshRedisNamespace, TEST_DATABASE_URL, TEST_REDIS_URL } from "@leasewatch/lease/testing";

export const ZStoreSpec = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("postgres"), name: z.string(), url: z.string(), schema: z.string() }),
  z.strictObject({ kind: z.literal("redis"), name: z.string(), url: z.string(), namespace: z.string() }),
]);
export type StoreSpec = z.infer<typeof ZStoreSpec>;

/** Opens a store from a spec. Postgres: the schema must already be migrated (see createStoreFixture). */
export function openStore(spec: StoreSpec): LeaseStore {
  if (spec.kind === "postgres") return new PostgresLeaseStore({ name: spec.name, connectionString: spec.url, schema: spec.schema });
  return new RedisLeaseStore({ name: spec.name, url: spec.url, namespace: spec.namespace });
}

export interface StoreFixture {
  spec: StoreSpec;
  /** A store opened for the test itself. */
  store: LeaseStore;
  /** Another store instance (own connections) on the same data. */
  open(): LeaseStore;
  /** Closes every store opened here and drops the schema / namespace. */
  cleanup(): Promise<void>;
}

/** An isolated store of `kind` on `url` (default: the shared server for that kind). */
export async function createStoreFixture(kind: StoreKind, url?: string): Promise<StoreFixture> {
  const opened: LeaseStore[] = [];
  let spec: StoreSpec;
  let drop: () => Promise<unknown>;
  if (kind === "postgres") {
    const fresh = freshPgSchema(url ?? TEST_DATABASE_URL);
    spec = { kind, name: "pg-test", url: fresh.connectionString, schema: fresh.schema };
    drop = () => fresh.drop();
    const migrator = new PostgresLeaseStore({ name: spec.name, connectionString: spec.url, schema: spec.schema });
    try {
      await migrator.migrate();
    } finally {
      await migrator.close();
    }
  } else {
    const fresh = freshRedisNamespace(url ?? TEST_REDIS_URL);
    spec = { kind, name: "redis-test", url: fresh.url, namespace: fresh.namespace };
    drop = () => fresh.drop();
  }
  const open = () => {
    const store = openStore(spec);
    opened.push(store);
    return store;
  };
  const store = open();
  return {
    spec,
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
