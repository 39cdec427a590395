import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, startRedisCluster, stopAllServers, type ThrowawayCluster, type ThrowawayServer } from "@/test/support/servers";
import { LeaseError } from "../errors";
import type { AcquireResult } from "../types";
import { bucketOf, buildNamespaceBucketsKey, clusterSlotOf } from "./keys";
import { RedisLeaseStore, type TRedisLeaseStoreOptions } from "./store";

/**
 * What the Redis store checks about its namespace and servers while it runs, on throwaway
 * servers (never the shared 6379): every store sharing a namespace uses one bucket count, even
 * after the keys recording it were lost, and no master may evict lock keys.
 */

afterAll(stopAllServers);

function freshNamespace(): string {
  return `lwt_${randomBytes(6).toString("hex")}`;
}

/** Each resource's acquire: true when granted, else the error it was refused with. */
async function tryAcquireAll(store: RedisLeaseStore, resources: readonly string[], owner: string): Promise<(true | false | unknown)[]> {
  return Promise.all(
    resources.map((resource) =>
      store.acquire({ resource, owner, task: "t", ttlMs: 60_000 }).then(
        (r: AcquireResult) => r.acquired,
        (e: unknown) => e,
      ),
    ),
  );
}

function expectMisconfigured(outcomes: readonly unknown[], text: RegExp): void {
  for (const outcome of outcomes) {
    expect(outcome).toBeInstanceOf(LeaseError);
    expect((outcome as LeaseError).code).toBe("misconfigured");
    expect((outcome as LeaseError).message).toMatch(text);
  }
}

/** Resources whose bucket differs between 16 and 8 buckets: two stores would lock them under different keys. */
const SPLIT_RESOURCES = Array.from({ length: 200 }, (_, i) => `job:${i}`)
  .filter((r) => bucketOf(r, 16) !== bucketOf(r, 8))
  .slice(0, 12);

describe("RedisLeaseStore namespace checks on one server", () => {
  let server: ThrowawayServer;
  let admin: Redis;
  const stores: RedisLeaseStore[] = [];
  const open = (options: Omit<TRedisLeaseStoreOptions, "url" | "name">) => {
    const store = new RedisLeaseStore({ name: "redis-checks", url: server.url, ...options });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    server = await startRedis();
    admin = new Redis(server.url);
    admin.on("error", () => undefined);
  });

  afterAll(async () => {
    for (const store of stores) await store.close();
    admin?.disconnect();
  });

  it("refuses a store with another bucket count for every resource held, after <ns>:buckets was deleted", async () => {
    const namespace = freshNamespace();
    const first = open({ namespace, buckets: 16 });
    expect(await tryAcquireAll(first, SPLIT_RESOURCES, "first")).toEqual(SPLIT_RESOURCES.map(() => true));

    expect(await admin.del(buildNamespaceBucketsKey(namespace))).toBe(1);
    const second = open({ namespace, buckets: 8 });
    const outcomes = await tryAcquireAll(second, SPLIT_RESOURCES, "second");
    expect(outcomes.filter((o) => o === true), "resources granted to both stores").toHaveLength(0);
    expectMisconfigured(outcomes, /16 buckets.*given 8/);
  });

  it("refuses a running store once a restart that lost every key let a store with another count in first", async () => {
    const namespace = freshNamespace();
    const first = open({ namespace, buckets: 16 });
    expect((await first.acquire({ resource: "warm", owner: "first", task: "t", ttlMs: 60_000 })).acquired).toBe(true);

    await server.restart();
    const second = open({ namespace, buckets: 8 });
    expect(await tryAcquireAll(second, SPLIT_RESOURCES, "second")).toEqual(SPLIT_RESOURCES.map(() => true));
    const outcomes = await tryAcquireAll(first, SPLIT_RESOURCES, "first");
    expect(outcomes.filter((o) => o === true), "resources granted to both stores").toHaveLength(0);
    expectMisconfigured(outcomes, /8 buckets.*given 16/);
  });

  it("refuses writes once the server's maxmemory-policy turns evicting while the store runs, and resumes once it is fixed", async () => {
    const store = open({ namespace: freshNamespace(), memoryPolicyCheckMs: 0 });
    try {
      expect((await store.acquire({ resource: "policy:1", owner: "a", task: "t", ttlMs: 60_000 })).acquired).toBe(true);
      await admin.config("SET", "maxmemory-policy", "volatile-lru");
      await store.sweep().catch(() => undefined);
      const refused = await store.acquire({ resource: "policy:2", owner: "a", task: "t", ttlMs: 60_000 }).then(
        (r) => r.acquired,
        (e: unknown) => e,
      );
      expectMisconfigured([refused], /maxmemory-policy is volatile-lru/);
      await admin.config("SET", "maxmemory-policy", "noeviction");
      expect((await store.acquire({ resource: "policy:2", owner: "a", task: "t", ttlMs: 60_000 })).acquired).toBe(true);
    } finally {
      await admin.config("SET", "maxmemory-policy", "noeviction");
    }
  });
});

describe("RedisLeaseStore namespace checks on a Redis Cluster", () => {
  let cluster: ThrowawayCluster;

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);

  /** Which master serves a key's slot, as CLUSTER SLOTS says now. */
  async function readSlotMap(): Promise<(key: string) => ThrowawayServer> {
    const probe = new Redis(cluster.masters.find((m) => m.isRunning)!.url);
    const ranges = (await probe.cluster("SLOTS")) as unknown as [number, number, [string, number]][];
    probe.disconnect();
    return (key) => {
      const slot = clusterSlotOf(key);
      const port = ranges.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
      const master = cluster.masters.find((m) => m.port === port);
      if (!master) throw new Error(`no master serves slot ${slot}`);
      return master;
    };
  }

  const openClusterStore = (namespace: string, buckets: number, extra: Partial<TRedisLeaseStoreOptions> = {}) =>
    new RedisLeaseStore({ name: "redis-cluster-checks", cluster: { nodes: cluster.seeds }, namespace, buckets, ...extra });

  it("refuses a store with another bucket count after the master holding <ns>:buckets restarted empty", async () => {
    const namespace = freshNamespace();
    const masterOf = await readSlotMap();
    const keeper = masterOf(buildNamespaceBucketsKey(namespace));
    // Resources whose locks (16 buckets) live on the other masters, under another key than 8 buckets would use.
    const elsewhere = Array.from({ length: 500 }, (_, i) => `job:${i}`)
      .filter((r) => masterOf(`{b${bucketOf(r, 16)}}`) !== keeper && bucketOf(r, 16) !== bucketOf(r, 8))
      .slice(0, 11);
    const first = openClusterStore(namespace, 16);
    let second: RedisLeaseStore | undefined;
    try {
      expect(await tryAcquireAll(first, elsewhere, "first")).toEqual(elsewhere.map(() => true));
      await keeper.kill9();
      await keeper.restart();
      await cluster.waitUntilOk();

      second = openClusterStore(namespace, 8);
      const outcomes = await tryAcquireAll(second, elsewhere, "second");
      expect(outcomes.filter((o) => o === true), "resources granted to both stores").toHaveLength(0);
      expectMisconfigured(outcomes, /16 buckets.*given 8/);
    } finally {
      await first.close();
      await second?.close();
    }
  }, 60_000);

  it("reads the maxmemory-policy of every master, at start and again from sweep()", async () => {
    const namespace = freshNamespace();
    const keeper = (await readSlotMap())(buildNamespaceBucketsKey(namespace));
    const others = cluster.masters.filter((m) => m !== keeper);
    const resources = Array.from({ length: 16 }, (_, i) => `evict:${i}`);
    const running = openClusterStore(namespace, 16, { memoryPolicyCheckMs: 0 });
    let late: RedisLeaseStore | undefined;
    const setPolicy = async (masters: readonly ThrowawayServer[], policy: string) => {
      for (const master of masters) {
        const node = new Redis(master.url);
        await node.config("SET", "maxmemory-policy", policy);
        node.disconnect();
      }
    };
    try {
      expect((await running.acquire({ resource: "warm", owner: "a", task: "t", ttlMs: 60_000 })).acquired).toBe(true);
      await setPolicy(others, "allkeys-lru");

      late = openClusterStore(namespace, 16);
      expectMisconfigured(await tryAcquireAll(late, resources, "late"), /maxmemory-policy is allkeys-lru/);

      await running.sweep().catch(() => undefined);
      expectMisconfigured(await tryAcquireAll(running, resources, "running"), /maxmemory-policy is allkeys-lru/);
    } finally {
      await setPolicy(cluster.masters, "noeviction");
      await running.close();
      await late?.close();
    }
  }, 60_000);
});
