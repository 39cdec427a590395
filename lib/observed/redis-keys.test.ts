import { Redlock } from "@sesamecare-oss/redlock";
import { Cluster, Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { freshRedisNamespace } from "@leasewatch/lease/testing";
import { startRedisCluster, stopAllServers } from "@/test/support/servers";
import { isObservedKey, readRedisLockKeys, releaseRedisLockKey } from "./redis-keys";

const fresh = freshRedisNamespace();
const redis = new Redis(fresh.url, { lazyConnect: false });

afterAll(async () => {
  await fresh.drop();
  redis.disconnect();
  await stopAllServers();
});

describe("readRedisLockKeys: lock keys other libraries write, found by pattern", () => {
  it("reads redlock keys with their holder value and TTL, and a redis-semaphore-style sorted set with its holders", async () => {
    const redlock = new Redlock([redis], { retryCount: 0 });
    const lock = await redlock.acquire([`${fresh.namespace}:locks:billing-close`], 30_000);
    await redis.zadd(`${fresh.namespace}:semaphore:exports`, Date.now() - 2_000, "holder-a", Date.now() - 1_000, "holder-b");
    await redis.pexpire(`${fresh.namespace}:semaphore:exports`, 20_000);
    await redis.set(`${fresh.namespace}:cache:unrelated`, "x");

    // The test server is shared: budgets that do not depend on how many keys other tests (or anything else) keep there, or on the machine's load.
    const snapshot = await readRedisLockKeys(redis, {
      patterns: [`${fresh.namespace}:locks:*`, `${fresh.namespace}:semaphore:*`],
      maxExamined: Number.MAX_SAFE_INTEGER,
      budgetMs: 60_000,
    });
    expect(snapshot.complete).toBe(true);
    expect(snapshot.keys.map((k) => k.key)).toEqual([`${fresh.namespace}:locks:billing-close`, `${fresh.namespace}:semaphore:exports`]);
    const [mutex, semaphore] = snapshot.keys;
    expect(mutex).toMatchObject({ type: "string", holders: [{ value: lock.value }] });
    expect(mutex!.ttlMs).toBeGreaterThan(20_000);
    expect(mutex!.ttlMs).toBeLessThanOrEqual(30_000);
    expect(semaphore!.holders.map((h) => h.value)).toEqual(["holder-a", "holder-b"]);
    expect(semaphore!.holders[0]!.since).toBeInstanceOf(Date);
    await lock.release();
  });

  it("stops at its budget and says the read is incomplete", async () => {
    const pipeline = redis.pipeline();
    for (let i = 0; i < 50; i++) pipeline.set(`${fresh.namespace}:many:${i}`, `v${i}`, "PX", 60_000);
    await pipeline.exec();
    const snapshot = await readRedisLockKeys(redis, { patterns: [`${fresh.namespace}:many:*`], maxMatched: 10 });
    expect(snapshot.complete).toBe(false);
    expect(snapshot.keys).toHaveLength(10);
  });

  it("force-releases only while the key still holds the value shown, and only configured keys", async () => {
    const key = `${fresh.namespace}:locks:reports`;
    await redis.set(key, "shown-holder", "PX", 30_000);
    await redis.set(key, "new-holder", "PX", 30_000); // taken over after the dialog opened
    expect(await releaseRedisLockKey(redis, { key, type: "string", value: "shown-holder" })).toBe(false);
    expect(await redis.get(key)).toBe("new-holder");
    expect(await releaseRedisLockKey(redis, { key, type: "string", value: "new-holder" })).toBe(true);
    expect(await redis.exists(key)).toBe(0);

    const sem = `${fresh.namespace}:semaphore:jobs`;
    await redis.zadd(sem, Date.now(), "one", Date.now(), "two");
    expect(await releaseRedisLockKey(redis, { key: sem, type: "zset", value: "one" })).toBe(true);
    expect(await redis.zrange(sem, "0", "-1")).toEqual(["two"]);

    expect(isObservedKey(`${fresh.namespace}:locks:x`, [`${fresh.namespace}:locks:*`])).toBe(true);
    expect(isObservedKey(`${fresh.namespace}:cache:x`, [`${fresh.namespace}:locks:*`])).toBe(false);
  });

  it("on a Redis Cluster, finds redlock keys on every master", async () => {
    const cluster = await startRedisCluster(3);
    const client = new Cluster(cluster.seeds);
    try {
      const redlock = new Redlock([client], { retryCount: 0 });
      const names = Array.from({ length: 12 }, (_, i) => `locks:job-${i}`);
      const locks = await Promise.all(names.map((n) => redlock.acquire([n], 30_000)));
      const owners = new Set<string>();
      for (const n of names) owners.add(String(client.slots[calcSlot(n)]?.[0]));
      expect(owners.size).toBeGreaterThan(1); // the keys really are spread over several masters

      const snapshot = await readRedisLockKeys(client, { patterns: ["locks:*"] });
      expect(snapshot.complete).toBe(true);
      expect(snapshot.keys.map((k) => k.key).sort()).toEqual([...names].sort());
      expect(snapshot.keys.find((k) => k.key === "locks:job-3")!.holders[0]!.value).toBe(locks[3]!.value);
      await Promise.all(locks.map((l) => l.release()));
    } finally {
      client.disconnect();
    }
  }, 60_000);
});

/** CRC16 slot of a key (no hash tags in these names). */
function calcSlot(key: string): number {
  let crc = 0;
  for (const byte of Buffer.from(key)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}
