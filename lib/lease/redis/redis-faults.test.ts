import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, stopAllServers, type ThrowawayServer } from "@/test/support/servers";
import { LeaseError } from "../errors";
import { freshRedisNamespace, sleep } from "../testing/isolation";
import { compareFencingTokens } from "../validation";
import { RedisLeaseStore } from "./store";

/**
 * Faults on a throwaway redis-server of our own (never the shared 6379):
 * a flushed script cache, a restart that loses every key, a server that is down.
 */

let server: ThrowawayServer;

beforeAll(async () => {
  server = await startRedis();
});

afterAll(async () => {
  await stopAllServers();
});

function openStore(name = "redis-fault") {
  const fresh = freshRedisNamespace(server.url);
  return new RedisLeaseStore({ name, url: server.url, namespace: fresh.namespace });
}

/** Retries `call` while the client reconnects after a restart; bounded by attempts, not by timing assertions. */
async function eventually<T>(call: () => Promise<T>, attempts = 100): Promise<T> {
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      return await call();
    } catch (error) {
      last = error;
      await sleep(100);
    }
  }
  throw last;
}

describe("RedisLeaseStore on a throwaway server", () => {
  it("keeps working when the server's script cache is flushed between and during operations (NOSCRIPT)", async () => {
    const store = openStore();
    const admin = new Redis(server.url);
    const callerClient = new Redis(server.url);
    const other = new RedisLeaseStore({ name: "redis-fault-b", client: callerClient, namespace: store.namespace });
    try {
      for (let round = 0; round < 5; round++) {
        const resource = `flush:${round}`;
        expect(await admin.script("FLUSH")).toBe("OK");
        const first = await store.acquire({ resource, owner: "a", task: "t", ttlMs: 10_000 });
        expect(first.acquired).toBe(true);
        if (!first.acquired) return;
        expect(await admin.script("FLUSH")).toBe("OK");
        // Many operations in flight at once, from two connections, right after a flush.
        const [contended, renewed] = await Promise.all([
          other.acquire({ resource, owner: "b", task: "t", ttlMs: 10_000 }),
          store.renew({ resource, leaseId: first.lease.leaseId, ttlMs: 10_000 }),
          store.sweep(),
          other.sweep(),
        ]);
        expect(contended.acquired).toBe(false);
        expect(renewed.renewed).toBe(true);
        expect(await admin.script("FLUSH")).toBe("OK");
        expect((await other.forceRelease({ resource, leaseId: first.lease.leaseId, actor: "ops", reason: "test" })).released).toBe(true);
      }
      const events = await store.events({ kinds: ["acquired", "contended", "force_released"], limit: 100 });
      expect(events.items).toHaveLength(15);
    } finally {
      await other.close();
      await store.close();
      await callerClient.quit();
      await admin.quit();
    }
  });

  it("issues higher tokens after a restart without persistence lost every key", async () => {
    const store = openStore();
    try {
      const before = await store.acquire({ resource: "restart:1", owner: "a", task: "t", ttlMs: 60_000 });
      expect(before.acquired).toBe(true);
      if (!before.acquired) return;

      await server.restart();
      const after = await eventually(() => store.acquire({ resource: "restart:1", owner: "b", task: "t", ttlMs: 60_000 }));
      // Every key is gone, including the old lock: the new holder gets it, with a higher token.
      expect(after.acquired).toBe(true);
      if (!after.acquired) return;
      expect(compareFencingTokens(after.lease.fencingToken, before.lease.fencingToken), `${after.lease.fencingToken} > ${before.lease.fencingToken}`).toBe(1);
      expect(await store.renew({ resource: "restart:1", leaseId: before.lease.leaseId, ttlMs: 1_000 })).toEqual({ renewed: false, reason: "not_owner" });
    } finally {
      await store.close();
    }
  });

  it("rejects with a clear LeaseError while Redis is down, reports unhealthy, and recovers", async () => {
    const store = openStore("redis-down");
    try {
      expect((await store.health()).ok).toBe(true);
      await server.kill9();

      const failure = await store.acquire({ resource: "down:1", owner: "a", task: "t", ttlMs: 1_000 }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(failure).toBeInstanceOf(LeaseError);
      expect((failure as LeaseError).code).toBe("store_unavailable");
      expect((failure as LeaseError).message).toContain('redis store "redis-down": acquire failed');
      await expect(store.list()).rejects.toThrow(LeaseError);
      await expect(store.events()).rejects.toThrow(LeaseError);

      const health = await store.health();
      expect(health).toMatchObject({ store: "redis-down", kind: "redis", ok: false });
      expect(health.error).toBeTruthy();

      await server.restart();
      const recovered = await eventually(async () => {
        const h = await store.health();
        if (!h.ok) throw new Error(h.error);
        return h;
      });
      expect(recovered.ok).toBe(true);
      expect((await store.acquire({ resource: "down:1", owner: "a", task: "t", ttlMs: 1_000 })).acquired).toBe(true);
    } finally {
      await store.close();
    }
  });
});
