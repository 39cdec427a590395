/**
 * A migrated Postgres store and a Redis store, each in a fresh schema /
 * namespace on the shared test servers, for tests that read both kinds at once.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { PostgresLeaseStore, RedisLeaseStore } from "@leasewatch/lease";
import { freshPgSchema, type FreshPgSchema, freshRedisNamespace, type FreshRedisNamespace } from "@leasewatch/lease/testing";

export interface StorePair {
  pgStore: PostgresLeaseStore;
  redis: RedisLeaseStore;
  pgSchema: FreshPgSchema;
  redisNs: FreshRedisNamespace;
}

export interface StorePairNames {
  pg: string;
  redis: string;
}

export async function openStorePair(names: StorePairNames): Promise<StorePair & { close(): Promise<void> }> {
  const redisNs = freshRedisNamespace();
  const redis = new RedisLeaseStore({ name: names.redis, url: redisNs.url, namespace: redisNs.namespace });
  const pgSchema = freshPgSchema();
  const pgStore = new PostgresLeaseStore({ name: names.pg, connectionString: pgSchema.connectionString, schema: pgSchema.schema });
  await pgStore.migrate();
  return {
    pgStore,
    redis,
    pgSchema,
    redisNs,
    close: async () => {
      await redis.close();
      await pgStore.close();
      await redisNs.drop();
      await pgSchema.drop();
    },
  };
}

/**
 * A store pair opened before each test (`per: "test"`) or once for the file
 * (`per: "file"`), and closed and dropped after it. Read its fields inside
 * tests and in hooks registered after this call: they change with every pair.
 */
export function setUpStorePair(names: StorePairNames, per: "test" | "file" = "test"): StorePair {
  const current = {} as StorePair;
  let close: (() => Promise<void>) | undefined;
  const [before, after] = per === "test" ? [beforeEach, afterEach] : [beforeAll, afterAll];
  before(async () => {
    const { close: closePair, ...pair } = await openStorePair(names);
    close = closePair;
    Object.assign(current, pair);
  });
  after(async () => {
    await close?.();
  });
  return current;
}
