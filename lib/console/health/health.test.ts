import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshRedisNamespace, TEST_REDIS_URL } from "@leasewatch/lease/testing";
import { RedisLeaseStore } from "@leasewatch/lease";
import type { TStoreConfig } from "@/lib/server/store-config";
import { checkStoresHealth, createHealthCache } from "./health";
import { sweepAllStores, type StoreEntry } from "@/lib/server/store-registry";

/** A TCP server that accepts connections and never answers: a store that hangs rather than refuses. */
function startSilentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as net.AddressInfo;
      resolve({
        port: address.port,
        close: () =>
          new Promise((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** Short, so the whole check is quick; long enough that a refused connection answers first. */
const HANGING_TIMEOUT_MS = 1_000;

describe("store health and sweeping across stores", () => {
  const ns = freshRedisNamespace();
  let silent: { port: number; close: () => Promise<void> };
  let entries: StoreEntry[];

  beforeAll(async () => {
    silent = await startSilentServer();
    const configs: Array<Extract<TStoreConfig, { kind: "redis" }>> = [
      { name: "redis-up", kind: "redis", url: TEST_REDIS_URL, namespace: ns.namespace },
      { name: "redis-refused", kind: "redis", url: "redis://127.0.0.1:1" },
      { name: "redis-hanging", kind: "redis", url: `redis://127.0.0.1:${silent.port}` },
    ];
    entries = configs.map((config) => ({
      config,
      store: new RedisLeaseStore({ name: config.name, url: config.url, namespace: config.namespace }),
    }));
  });

  afterAll(async () => {
    await Promise.allSettled(entries.map((e) => e.store.close()));
    await silent.close();
    await ns.drop();
  });

  it("reports each store up or down, in configuration order, within the timeout", async () => {
    const startedAt = performance.now();
    const health = await checkStoresHealth(entries, HANGING_TIMEOUT_MS);
    const elapsedMs = performance.now() - startedAt;
    expect(health.map((h) => [h.store, h.ok])).toEqual([
      ["redis-up", true],
      ["redis-refused", false],
      ["redis-hanging", false],
    ]);
    expect(health[0]!.kind).toBe("redis");
    expect(health[1]!.error).toMatch(/ECONNREFUSED|unreachable/);
    // The hanging store is down because its check ran out of time, not because it refused.
    expect(health[2]!.error).toBe(`no answer within ${HANGING_TIMEOUT_MS} ms`);
    // It waited out its own bound. Whether it stopped there, rather than at the store's own 2 s
    // limit, is what the error above says; how late a timer fires on a loaded machine is not checked.
    expect(elapsedMs).toBeGreaterThanOrEqual(HANGING_TIMEOUT_MS - 1);
  });

  it("gives the page shell the last finished check while a new one still waits on a store", async () => {
    let clock = 1_000_000;
    const cache = createHealthCache(() => checkStoresHealth(entries, HANGING_TIMEOUT_MS), { cacheMs: 2_000, now: () => clock });
    // Nothing has finished yet: the shell waits for the check itself.
    const first = await cache.forShell(20, 30_000);
    expect(first.checkedAt.getTime()).toBe(1_000_000);
    expect(first.stores.map((s) => [s.store, s.ok])).toEqual([
      ["redis-up", true],
      ["redis-refused", false],
      ["redis-hanging", false],
    ]);
    // Past the cache a new check starts, and the hanging store holds it for a second: the shell
    // shows the finished one, with its own time; /api/health waits for the new one.
    clock += 5_000;
    expect(await cache.forShell(20, 30_000)).toBe(first);
    const fresh = await cache.current();
    expect(fresh.checkedAt.getTime()).toBe(1_005_000);
    expect(fresh).not.toBe(first);
    // Older than the shell may show: it waits for a new check.
    clock += 40_000;
    expect((await cache.forShell(20, 30_000)).checkedAt.getTime()).toBe(1_045_000);
  });

  it("sweeps every store even when others fail, and says which failed", async () => {
    const acquired = await entries[0]!.store.acquire({ resource: "health-test:short", owner: "w1", task: "t1", ttlMs: 100 });
    expect(acquired.acquired).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const results = await Promise.race([
      sweepAllStores(entries),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("sweep hung")), 30_000)),
    ]);
    expect(results[0]).toEqual({ store: "redis-up", expired: 1 });
    expect(results[1]!.error).toBeTruthy();
    const events = await entries[0]!.store.events({ resource: "health-test:short", kinds: ["expired"] });
    expect(events.items).toHaveLength(1);
  });
});
