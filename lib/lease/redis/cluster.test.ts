import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findRepeatedEnds, findStaleWrites, findTokenOrderViolations, holdsOnRecord } from "@/test/support/history-checks";
import { startRedisCluster, stopAllServers, type ThrowawayCluster } from "@/test/support/servers";
import { checkConservation, collectEvents, createFencedDownstream } from "@/test/support/stores";
import { spawnWorker, stopAllWorkers } from "@/test/support/worker-process";
import { LeaseError } from "../errors";
import { fencedWrite, readFencedHistory } from "../fencing";
import { describeLeaseStoreContract } from "../testing/contract";
import { sleep, TEST_DATABASE_URL } from "../testing/isolation";
import { compareFencingTokens } from "../validation";
import { bucketOf, clusterSlotOf } from "./keys";
import { RedisLeaseStore } from "./store";

/**
 * The Redis store on a throwaway 3-master Redis Cluster (no replicas): the whole contract
 * suite, a live reshard under contention, and a master killed with -9.
 */

let cluster: ThrowawayCluster;
let pool: pg.Pool;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
  pool.on("error", () => undefined);
}, 60_000);

afterAll(async () => {
  await stopAllWorkers();
  await pool?.end();
  await stopAllServers();
});

function freshNamespace(): string {
  return `lwt_${randomBytes(6).toString("hex")}`;
}

/** Unlinks the namespace's keys on every running master (one key per UNLINK: keys of many slots). */
async function dropNamespace(namespace: string): Promise<void> {
  for (const master of cluster.masters.filter((m) => m.isRunning)) {
    const node = new Redis(master.url);
    try {
      let cursor = "0";
      do {
        const [next, keys] = await node.scan(cursor, "MATCH", `${namespace}:*`, "COUNT", 1000);
        cursor = next;
        if (keys.length > 0) await node.pipeline(keys.map((k) => ["unlink", k])).exec();
      } while (cursor !== "0");
    } finally {
      node.disconnect();
    }
  }
}

function openClusterStore(namespace: string, name = "redis-cluster"): RedisLeaseStore {
  return new RedisLeaseStore({ name, cluster: { nodes: cluster.seeds }, namespace });
}

/** The master serving a resource's bucket (slot ranges as `--cluster create` assigns them to 3 masters). */
function slotOfResource(resource: string): number {
  return clusterSlotOf(`{b${bucketOf(resource, 16)}}`);
}

describeLeaseStoreContract("redis cluster (3 masters)", async () => {
  const namespace = freshNamespace();
  const store = openClusterStore(namespace);
  return {
    store,
    cleanup: async () => {
      await store.close();
      await dropNamespace(namespace);
    },
  };
});

describe("RedisLeaseStore on a Redis Cluster", () => {
  it("takes the redis+cluster:// URL form, reads every bucket across the masters, and reports itself healthy", async () => {
    const namespace = freshNamespace();
    const store = new RedisLeaseStore({ name: "redis-cluster-url", url: `${cluster.url}/${namespace}` });
    try {
      expect(store.isCluster).toBe(true);
      expect(store.namespace).toBe(namespace);
      const resources = Array.from({ length: 24 }, (_, i) => `url:${i}`);
      // Spread over every master.
      expect(new Set(resources.map((r) => Math.floor(slotOfResource(r) / 5461))).size).toBe(3);
      for (const r of resources) expect((await store.acquire({ resource: r, owner: "o", task: "t", ttlMs: 60_000 })).acquired).toBe(true);
      expect((await store.list({ prefix: "url:", limit: 100 })).items).toHaveLength(24);
      expect(await store.countActive()).toBe(24);
      expect(await store.lifetimeCounts()).toMatchObject({ acquired: 24, held: 24 });
      expect((await store.events({ kinds: ["acquired"], limit: 100 })).items).toHaveLength(24);
      expect((await store.projectionLag()).lagMs).toBe(0);
      expect(await store.health()).toMatchObject({ ok: true, projectionLagMs: 0 });
    } finally {
      await store.close();
      await dropNamespace(namespace);
    }
  });

  it("measures, trims and reports retention bucket by bucket across the masters", async () => {
    const namespace = freshNamespace();
    const store = new RedisLeaseStore({ name: "redis-cluster-ret", cluster: { nodes: cluster.seeds }, namespace, eventRetentionDays: 1, eventRetentionMaxMb: 1 });
    try {
      const resources = Array.from({ length: 24 }, (_, i) => `ret:${i}`);
      expect(new Set(resources.map((r) => Math.floor(slotOfResource(r) / 5461))).size).toBe(3);
      for (const r of resources) expect((await store.acquire({ resource: r, owner: "o", task: "t", ttlMs: 60_000 })).acquired).toBe(true);
      // Nothing is old or over budget: every stream is measured and kept.
      expect(await store.trimEvents()).toEqual({ trimmed: 0, isDone: true });
      expect(await store.eventRetention()).toEqual({ retentionDays: 1, retainedFrom: null });
      expect((await store.events({ kinds: ["acquired"], limit: 100 })).items).toHaveLength(24);
    } finally {
      await store.close();
      await dropNamespace(namespace);
    }
  });

  it("through a live reshard under 8 contending workers: no double grant, no stale write the fence could refuse, exactly-once expiry, conservation", async () => {
    const namespace = freshNamespace();
    const downstream = await createFencedDownstream(pool, "accounts");
    const store = openClusterStore(namespace, "redis-cluster-check");
    try {
      // Resources of the bucket with the lowest slot on master 0 ({b13}, slot 1439): the reshard
      // moves master 0's first slots in order, so moving one past it moves them, while the workers run.
      const movedSlots = 1_440;
      const resources = Array.from({ length: 400 }, (_, i) => `acct:${i}`)
        .filter((r) => slotOfResource(r) < movedSlots)
        .slice(0, 3);
      expect(resources).toHaveLength(3);
      const ttlMs = 300;
      const workers = Array.from({ length: 8 }, (_, i) =>
        spawnWorker({
          store: { kind: "redis", name: "redis-cluster", url: cluster.url, namespace },
          owner: `w${i}`,
          mode: "loop",
          resources,
          ttlMs,
          waitMs: 1_000,
          // An upper bound: the workers are told to stop once the reshard is over (SIGUSR2).
          durationMs: 180_000,
          writeEveryMs: 15,
          writesPerHold: 3,
          pause: { probability: 0.15, minMs: ttlMs + 100, maxMs: ttlMs * 3 },
          backoff: { baseMs: 5, capMs: 40 },
          fenced: { url: TEST_DATABASE_URL, table: downstream.table, by: "accounts-db", history: true },
          seed: 2_000 + i,
        }),
      );
      let exitedCount = 0;
      for (const w of workers) void w.exited.then(() => (exitedCount += 1));
      const acceptedWrites = () => workers.flatMap((w) => w.linesOf("write")).filter((l) => l.accepted === true).length;
      // The move starts once the workers contend (their first fenced write is in), however long
      // they took to start: the slots then hold their keys.
      await expect.poll(acceptedWrites, { timeout: 60_000, interval: 50 }).toBeGreaterThan(0);
      const [from, to] = [cluster.masters[0]!, cluster.masters[1]!];
      await cluster.reshard(from, to, movedSlots);
      // The move ended while the workers still contended, and took the resources' keys with it.
      expect(exitedCount).toBe(0);
      const target = new Redis(to.url);
      expect(await target.call("CLUSTER", "COUNTKEYSINSLOT", String(slotOfResource(resources[0]!)))).toBeGreaterThan(0);
      target.disconnect();
      // A little more contention on the new owner of the slots, then the workers finish their holds and exit.
      const atMove = acceptedWrites();
      await expect.poll(acceptedWrites, { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(Math.max(atMove + 10, 21));
      for (const w of workers) w.signal("SIGUSR2");
      const exits = await Promise.all(workers.map((w) => w.exited));
      await cluster.waitUntilOk();

      // An operation that failed during the move says so (an error line); none is lost silently.
      const errors = workers.flatMap((w) => w.linesOf("error"));
      for (const [i, w] of workers.entries()) expect(exits[i]?.code, w.errors).toBe(0);
      const writes = workers.flatMap((w) => w.linesOf("write"));
      const accepted = writes.filter((l) => l.accepted === true);
      expect(accepted.length).toBeGreaterThan(20);
      const history = await readFencedHistory({ pool, table: downstream.table, store: "redis-cluster" });
      expect(history).toHaveLength(accepted.length);

      const events = await collectEvents(store);
      const holds = holdsOnRecord(events);
      expect(findTokenOrderViolations(holds)).toEqual([]);
      expect(findRepeatedEnds(events)).toEqual([]);
      expect(findStaleWrites(holds, history).unexplained).toEqual([]);
      expect(events.filter((e) => e.kind === "acquired").length).toBeGreaterThan(10);

      await sleep(ttlMs + 200);
      await store.sweep();
      const books = await checkConservation(store);
      expect(books.acquired).toBe(books.ended + books.held);
      expect(books.held).toBe(0);
      const counts = await store.lifetimeCounts();
      expect(counts.acquired).toBe(counts.released + counts.expired + counts.force_released + counts.held);
      expect(counts.acquired).toBe(books.acquired);
      console.info(`cluster reshard: ${accepted.length} writes accepted, ${books.acquired} grants, ${errors.length} operations failed with an error during the move`);
    } finally {
      await stopAllWorkers();
      await store.close();
      await dropNamespace(namespace);
      await downstream.drop();
    }
  }, 240_000);

  it("when a master is killed (-9) its leases are lost with it, tokens never go backwards, and the fence refuses the old holder", async () => {
    const namespace = freshNamespace();
    const downstream = await createFencedDownstream(pool, "ledger");
    const store = openClusterStore(namespace, "redis-cluster-kill");
    // Master 2 serves slots 10923-16383 (unless a reshard moved some: those are on master 1 now).
    const victim = cluster.masters[2]!;
    const resource = Array.from({ length: 200 }, (_, i) => `ledger:${i}`).find((r) => slotOfResource(r) >= 11_000)!;
    const survivor = Array.from({ length: 200 }, (_, i) => `other:${i}`).find((r) => slotOfResource(r) >= 5_461 && slotOfResource(r) < 10_923)!;
    try {
      const first = await store.acquire({ resource, owner: "old", task: "t", ttlMs: 60_000 });
      if (!first.acquired) throw new Error("expected to acquire");
      const write = (token: string) =>
        fencedWrite({ pool, table: downstream.table, key: resource, value: { token }, fencingToken: token, resource, by: "ledger-db", store, history: true });
      expect(await write(first.lease.fencingToken)).toMatchObject({ accepted: true });

      await victim.kill9();
      // Its slots have no server: operations there fail with an error; the other masters go on.
      await expect(store.renew({ resource, leaseId: first.lease.leaseId, ttlMs: 60_000 })).rejects.toBeInstanceOf(LeaseError);
      expect((await store.acquire({ resource: survivor, owner: "o", task: "t", ttlMs: 60_000 })).acquired).toBe(true);

      // Back without persistence: same slots, no keys. The lease, its events and counters on that master are gone.
      await victim.restart();
      await cluster.waitUntilOk();
      let second: Awaited<ReturnType<RedisLeaseStore["acquire"]>> | undefined;
      for (let attempt = 0; attempt < 50 && !second; attempt++) {
        second = await store.acquire({ resource, owner: "new", task: "t", ttlMs: 60_000 }).catch(async () => {
          await sleep(100);
          return undefined;
        });
      }
      if (!second?.acquired) throw new Error("expected the resource to be free after its master lost every key");
      expect(compareFencingTokens(second.lease.fencingToken, first.lease.fencingToken), `${second.lease.fencingToken} > ${first.lease.fencingToken}`).toBe(1);
      expect(await store.renew({ resource, leaseId: first.lease.leaseId, ttlMs: 60_000 })).toEqual({ renewed: false, reason: "not_owner" });

      expect(await write(second.lease.fencingToken)).toMatchObject({ accepted: true });
      const stale = await write(first.lease.fencingToken);
      expect(stale).toMatchObject({ accepted: false, seenToken: second.lease.fencingToken });
      expect((await store.events({ resource, kinds: ["fencing_rejected"] })).items).toHaveLength(1);
    } finally {
      if (!victim.isRunning) await victim.restart();
      await store.close();
      await dropNamespace(namespace);
      await downstream.drop();
    }
  }, 60_000);
});
