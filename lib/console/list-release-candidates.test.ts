/**
 * Bulk release candidates against real stores: under a prefix, exactly the leases
 * that are lapsed (not yet swept) or overdue, from both kinds of store.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PostgresLeaseStore } from "@/lib/lease/postgres/store";
import { RedisLeaseStore } from "@/lib/lease/redis/store";
import { freshPgSchema, freshRedisNamespace, sleep, type FreshPgSchema, type FreshRedisNamespace } from "@/lib/lease/testing/isolation";
import type { LeaseStore } from "@/lib/lease/types";
import { listReleaseCandidates } from "./list-release-candidates";

let redisNs: FreshRedisNamespace;
let pgSchema: FreshPgSchema;
let redis: RedisLeaseStore;
let pgStore: PostgresLeaseStore;

beforeEach(async () => {
  redisNs = freshRedisNamespace();
  redis = new RedisLeaseStore({ name: "redis-t", url: redisNs.url, namespace: redisNs.namespace });
  pgSchema = freshPgSchema();
  pgStore = new PostgresLeaseStore({ name: "pg-t", connectionString: pgSchema.connectionString, schema: pgSchema.schema });
  await pgStore.migrate();
});

afterEach(async () => {
  await redis.close();
  await pgStore.close();
  await redisNs.drop();
  await pgSchema.drop();
});

async function acquire(store: LeaseStore, resource: string, ttlMs: number): Promise<string> {
  const r = await store.acquire({ resource, owner: "w", task: "t", ttlMs });
  if (!r.acquired) throw new Error(`could not acquire ${resource}`);
  return r.lease.leaseId;
}

describe("listReleaseCandidates", () => {
  it.each(["postgres", "redis"] as const)("lists exactly the lapsed and overdue leases under the prefix (%s)", async (kind) => {
    const store = kind === "postgres" ? pgStore : redis;
    const lapsed = await acquire(store, "t1:jobs:a", 300);
    const overdue = await acquire(store, "t1:jobs:b", 1_500);
    await acquire(store, "t1:jobs:healthy", 60_000);
    await acquire(store, "t2:jobs:lapsed-elsewhere", 300);
    // a: lapsed (300 ms TTL); b: not renewed for more than 2/3 of its TTL, not yet expired.
    await sleep(1_150);
    const result = await listReleaseCandidates({ prefix: "t1:" }, { entries: [{ store }] });
    if (!result.ok) throw new Error(result.problem.message);
    expect(result.view.items.map((l) => [l.resource, l.leaseId, l.state])).toEqual([
      ["t1:jobs:a", lapsed, "lapsed"],
      ["t1:jobs:b", overdue, "overdue"],
    ]);
    expect(result.view.hasMore).toBe(false);
  });

  it("refuses an empty prefix and names an unknown store", async () => {
    const empty = await listReleaseCandidates({ prefix: "" }, { entries: [{ store: pgStore }] });
    expect(empty.ok ? null : empty.problem.param).toBe("prefix");
    const unknown = await listReleaseCandidates({ prefix: "t1:", store: "nope" }, { entries: [{ store: pgStore }] });
    expect(unknown.ok ? null : unknown.problem.param).toBe("store");
  });
});
