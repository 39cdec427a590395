import { randomBytes } from "node:crypto";
import { loadPg } from "../postgres/driver";
import { loadIoredis } from "../redis/driver";

/**
 * Test isolation: every test gets its own Postgres schema and its own Redis key
 * namespace, removed afterwards. The shared servers are used by other suites at
 * the same time, so nothing here ever drops a database or flushes Redis.
 */

export const TEST_DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const TEST_REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

const TEST_SCHEMA_PATTERN = /^lw_test_[a-f0-9]{12}$/;
const TEST_NAMESPACE_PATTERN = /^lwt_[a-f0-9]{12}$/;

export interface FreshPgSchema {
  /** A random schema name like `lw_test_3f9c0a1b2c4d`; not created yet (the store's migrate() creates it). */
  schema: string;
  connectionString: string;
  /** Drops the schema and everything in it. Returns whether a schema was dropped. */
  drop(): Promise<{ dropped: boolean }>;
}

export function freshPgSchema(connectionString: string = TEST_DATABASE_URL): FreshPgSchema {
  const schema = `lw_test_${randomBytes(6).toString("hex")}`;
  return {
    schema,
    connectionString,
    async drop() {
      // The name is ours and matches a fixed pattern, so quoting it is safe.
      if (!TEST_SCHEMA_PATTERN.test(schema)) throw new Error(`refusing to drop unexpected schema ${schema}`);
      const client = new (loadPg().Client)({ connectionString });
      client.on("error", () => {});
      await client.connect();
      try {
        const found = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        return { dropped: (found.rowCount ?? 0) > 0 };
      } finally {
        await client.end();
      }
    },
  };
}

export interface FreshRedisNamespace {
  /** A random namespace like `lwt_3f9c0a1b2c4d`; the store's keys are `${namespace}:…`. */
  namespace: string;
  url: string;
  /** Unlinks every `${namespace}:*` key (SCAN + UNLINK, never FLUSHDB). Returns how many. */
  drop(): Promise<{ deleted: number }>;
}

export function freshRedisNamespace(url: string = TEST_REDIS_URL): FreshRedisNamespace {
  const namespace = `lwt_${randomBytes(6).toString("hex")}`;
  return {
    namespace,
    url,
    async drop() {
      if (!TEST_NAMESPACE_PATTERN.test(namespace)) throw new Error(`refusing to delete unexpected namespace ${namespace}`);
      const redis = new (loadIoredis().Redis)(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
      redis.on("error", () => {});
      await redis.connect();
      let deleted = 0;
      try {
        let cursor = "0";
        do {
          const [next, keys] = await redis.scan(cursor, "MATCH", `${namespace}:*`, "COUNT", 1000);
          cursor = next;
          if (keys.length > 0) deleted += await redis.unlink(...keys);
        } while (cursor !== "0");
        return { deleted };
      } finally {
        redis.disconnect();
      }
    },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const UTC_DAY_MS = 86_400_000;

/**
 * Waits into the next UTC day when fewer than `needMs` are left of this one, so a test that
 * writes history and then reads "today" back does both on the same day, at whatever hour the
 * suite runs. (Store and test clocks agree to well under the margin given.)
 */
export async function untilDayHasLeft(needMs: number): Promise<void> {
  const left = UTC_DAY_MS - (Date.now() % UTC_DAY_MS);
  if (left < needMs) await sleep(left + 1_000);
}

/** A small seeded PRNG (mulberry32) so "random" histories are reproducible from the seed in a failure message. */
export function createRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
