import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, stopAllServers, type ThrowawayServer } from "@/test/support/servers";
import { createStoreFixture } from "@/test/support/stores";
import { startTcpProxy } from "@/test/support/tcp-proxy";
import { LeaseClient } from "../client";
import { LeaseError } from "../errors";
import { freshRedisNamespace, sleep } from "../testing/isolation";
import { compareFencingTokens } from "../validation";
import { buildBucketKeys } from "./keys";
import { LEASE_LIBRARY } from "./scripts";
import { RedisLeaseStore } from "./store";

/**
 * Faults on a throwaway redis-server of our own (never the shared 6379):
 * flushed functions, a restart that loses every key, a server that is down.
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

/** Calls per command since the last CONFIG RESETSTAT, from INFO commandstats (commands run inside scripts included). */
async function readCommandCalls(admin: Redis): Promise<Record<string, number>> {
  const calls: Record<string, number> = {};
  for (const match of (await admin.info("commandstats")).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[match[1]!] = Number(match[2]);
  return calls;
}

/** Of those calls, the ones that answered an error ("Function not found" counts here). */
async function readFailedCalls(admin: Redis): Promise<Record<string, number>> {
  const failed: Record<string, number> = {};
  for (const match of (await admin.info("commandstats")).matchAll(/^cmdstat_([^:]+):.*failed_calls=(\d+)/gm)) failed[match[1]!] = Number(match[2]);
  return failed;
}

/**
 * The commands one connection sends, seen by MONITOR (which tells a client's commands from the
 * ones a script runs, whose source is "lua"). take() returns those seen since the last take(),
 * after a marker sent through `admin` came through, so nothing sent before it is still on its way.
 */
async function watchConnection(server: ThrowawayServer, client: Redis, admin: Redis) {
  const address = /addr=(\S+)/.exec(String(await client.client("INFO")))?.[1];
  if (!address) throw new Error("no client address");
  const monitor = await new Redis(server.url).monitor();
  let seen: string[] = [];
  const markers = new Map<string, () => void>();
  monitor.on("monitor", (_time: string, args: string[], source: string) => {
    if (source === address) seen.push(String(args[0]).toLowerCase());
    if (String(args[0]).toLowerCase() === "echo") markers.get(String(args[1]))?.();
  });
  let n = 0;
  return {
    take: async () => {
      const marker = `marker-${n++}`;
      const arrived = new Promise<void>((resolve) => markers.set(marker, resolve));
      await admin.echo(marker);
      await arrived;
      const taken = seen;
      seen = [];
      return taken;
    },
    stop: () => monitor.disconnect(),
  };
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
  it("keeps working when the server's functions are flushed between and during operations (Function not found)", async () => {
    const store = openStore();
    const admin = new Redis(server.url);
    const callerClient = new Redis(server.url);
    const other = new RedisLeaseStore({ name: "redis-fault-b", client: callerClient, namespace: store.namespace });
    try {
      // One operation after a flush: its FCALL is refused ("Function not found") without running,
      // the library is loaded, the FCALL is sent again and runs, and the next operation finds it.
      await store.countActive(); // the once-per-store check, out of the way
      await admin.config("RESETSTAT");
      expect(await admin.function("FLUSH")).toBe("OK");
      const flushed = await store.acquire({ resource: "flush:probe", owner: "a", task: "t", ttlMs: 10_000 });
      expect(flushed.acquired).toBe(true);
      expect(await readCommandCalls(admin)).toMatchObject({ fcall: 2, "function|load": 1 });
      expect(await readFailedCalls(admin)).toMatchObject({ fcall: 1, "function|load": 0 });
      expect((await store.acquire({ resource: "flush:probe", owner: "b", task: "t", ttlMs: 10_000 })).acquired).toBe(false);
      expect(await readCommandCalls(admin)).toMatchObject({ fcall: 3, "function|load": 1 });
      expect(await readFailedCalls(admin)).toMatchObject({ fcall: 1 });

      await admin.config("RESETSTAT");
      for (let round = 0; round < 5; round++) {
        const resource = `flush:${round}`;
        expect(await admin.function("FLUSH")).toBe("OK");
        const first = await store.acquire({ resource, owner: "a", task: "t", ttlMs: 10_000 });
        expect(first.acquired).toBe(true);
        if (!first.acquired) return;
        expect(await admin.function("FLUSH")).toBe("OK");
        // Many operations in flight at once, from two connections, right after a flush.
        const [contended, renewed] = await Promise.all([
          other.acquire({ resource, owner: "b", task: "t", ttlMs: 10_000 }),
          store.renew({ resource, leaseId: first.lease.leaseId, ttlMs: 10_000 }),
          store.sweep(),
          other.sweep(),
        ]);
        expect(contended.acquired).toBe(false);
        expect(renewed.renewed).toBe(true);
        expect(await admin.function("FLUSH")).toBe("OK");
        expect((await other.forceRelease({ resource, leaseId: first.lease.leaseId, actor: "ops", reason: "test" })).released).toBe(true);
      }
      const events = await store.events({ kinds: ["acquired", "contended", "force_released"], limit: 100 });
      expect(events.items).toHaveLength(15 + 2);
      // Every flush was answered by "Function not found" and a load: 3 flushes × 5 rounds, at least one each.
      expect((await readFailedCalls(admin)).fcall).toBeGreaterThanOrEqual(15);
      expect((await readCommandCalls(admin))["function|load"]).toBeGreaterThanOrEqual(15);
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

  // The store's own client never resends; a caller's client with ioredis' defaults resends what
  // was unanswered, and the scripts must then answer the repeat as they answered the first run.
  it.each([
    ["the store's own client", false],
    ["a caller's client that resends unanswered commands", true],
  ])("runs each operation once when the connection drops after a script ran but before its reply arrived: %s", async (_, isCallerClient) => {
    const proxy = await startTcpProxy({ port: server.port });
    const fresh = freshRedisNamespace(server.url);
    const callerClient = isCallerClient ? new Redis(proxy.url, { autoResendUnfulfilledCommands: true }) : null;
    callerClient?.on("error", () => undefined);
    const store = callerClient
      ? new RedisLeaseStore({ name: "redis-drop", client: callerClient, namespace: fresh.namespace })
      : new RedisLeaseStore({ name: "redis-drop", url: proxy.url, namespace: fresh.namespace });
    // Counts events through a direct connection, so the proxy's faults never touch the checks.
    const direct = new RedisLeaseStore({ name: "redis-drop", url: server.url, namespace: fresh.namespace });
    /** Runs `call` with the reply of its (single) command thrown away and the connection cut. */
    async function withReplyLost<T>(call: () => Promise<T>): Promise<T> {
      await store.get("warm-up"); // connected and idle: the next reply is the call's own
      const dropped = proxy.dropNextReply();
      const result = await call();
      await dropped; // the fault really happened
      return result;
    }
    // Loaded beforehand, so the reply thrown away is the function's, not a "Function not found".
    await direct.client.function("LOAD", "REPLACE", LEASE_LIBRARY.code);
    const kindsOf = async (resource: string) => (await direct.events({ resource, order: "asc" })).items.map((e) => e.kind);
    try {
      // acquire: one lease, not an orphan plus a self-contention.
      const acquired = await withReplyLost(() => store.acquire({ resource: "drop:1", owner: "a", task: "t", ttlMs: 60_000 }));
      expect(acquired.acquired, JSON.stringify(acquired)).toBe(true);
      if (!acquired.acquired) return;
      expect(await direct.get("drop:1")).toEqual(acquired.lease);
      // release: the lease is released once, and the caller is told so (not "not_owner").
      const released = await withReplyLost(() => store.release({ resource: "drop:1", leaseId: acquired.lease.leaseId }));
      expect(released).toMatchObject({ released: true });
      expect(await kindsOf("drop:1")).toEqual(["acquired", "released"]);
      if (released.released) expect((await direct.events({ resource: "drop:1" })).items[0]).toEqual(released.event);

      // forceRelease: succeeded once, reported as released (not "not_found").
      const second = await store.acquire({ resource: "drop:2", owner: "a", task: "t", ttlMs: 60_000 });
      if (!second.acquired) throw new Error("expected to acquire drop:2");
      const forced = await withReplyLost(() => store.forceRelease({ resource: "drop:2", leaseId: second.lease.leaseId, actor: "ops", reason: "stuck" }));
      expect(forced).toMatchObject({ released: true, lease: second.lease, event: { kind: "force_released", actor: "ops", reason: "stuck" } });
      expect(await kindsOf("drop:2")).toEqual(["acquired", "force_released"]);

      if (isCallerClient) return;
      // The store's own client does not send a report twice: it fails (its reply is lost) and is recorded once.
      const lost = { resource: "drop:3", leaseId: second.lease.leaseId, owner: "a", task: "t", fencingToken: second.lease.fencingToken, reason: "expired" as const };
      const reported = await withReplyLost(() => store.reportLost(lost).then(() => "recorded", (e: unknown) => e));
      expect(reported).toBeInstanceOf(LeaseError);
      expect(await kindsOf("drop:3")).toEqual(["lost"]);
    } finally {
      await store.close();
      await direct.close();
      callerClient?.disconnect();
      await proxy.close();
      await fresh.drop();
    }
  });

  it("refuses a server whose maxmemory-policy can evict lock keys, unless the caller opts in", async () => {
    const admin = new Redis(server.url);
    const stores: RedisLeaseStore[] = [];
    try {
      expect(await admin.config("SET", "maxmemory-policy", "volatile-lru")).toBe("OK");
      const fresh = freshRedisNamespace(server.url);
      const refusing = new RedisLeaseStore({ name: "redis-evicting", url: server.url, namespace: fresh.namespace });
      const accepting = new RedisLeaseStore({ name: "redis-evicting", url: server.url, namespace: fresh.namespace, allowEvictingMemoryPolicy: true });
      stores.push(refusing, accepting);
      const refused = await refusing.acquire({ resource: "evict:1", owner: "a", task: "t", ttlMs: 1_000 }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(LeaseError);
      expect((refused as LeaseError).code).toBe("misconfigured");
      expect((refused as LeaseError).message).toContain("maxmemory-policy is volatile-lru");
      expect((await accepting.acquire({ resource: "evict:1", owner: "a", task: "t", ttlMs: 1_000 })).acquired).toBe(true);
    } finally {
      await admin.config("SET", "maxmemory-policy", "noeviction");
      for (const store of stores) await store.close();
      await admin.quit();
    }
  });

  it("keeps the hot path lean: the bucket count, the lock, the lease, the token, the expiry index, the totals, the lease id's note and one event, no read model", async () => {
    const admin = new Redis(server.url);
    const fixture = await createStoreFixture("redis", { url: server.url, name: "redis-lean", options: { buckets: 1 } });
    const { store } = fixture;
    // The last event's id says whether it was its millisecond's first (sequence 0), the one that
    // checks the stream's cap; read after the command counts, so it is not counted itself.
    const capCheck = async () => {
      const [last] = await admin.xrevrange(buildBucketKeys(fixture.spec.namespace, 0).events, "+", "-", "COUNT", 1);
      if (!last) throw new Error("expected an event in the bucket stream");
      return last[0].endsWith("-0") ? { xlen: 1 } : {};
    };
    try {
      const warm = await store.acquire({ resource: "lean:warm", owner: "a", task: "t", ttlMs: 60_000 });
      if (!warm.acquired) throw new Error("expected to acquire lean:warm");
      await store.release({ resource: "lean:warm", leaseId: warm.lease.leaseId });

      await admin.config("RESETSTAT");
      const acquired = await store.acquire({ resource: "lean:1", owner: "a", task: "t", ttlMs: 60_000 });
      if (!acquired.acquired) throw new Error("expected to acquire lean:1");
      // Commands run inside the script count too; the admin's own CONFIG and INFO are left out.
      const own = (calls: Record<string, number>) => Object.fromEntries(Object.entries(calls).filter(([c]) => !c.startsWith("config") && c !== "info"));
      const acquire = own(await readCommandCalls(admin));
      // get: the bucket's recorded bucket count and the lease id's note (a repeat?); one set writes
      // the note (granted); xlen: the stream's cap, checked only by the first event of a millisecond.
      expect(acquire).toEqual({ fcall: 1, time: 1, get: 2, set: 3, hset: 1, zadd: 1, hincrby: 1, ...(await capCheck()), xadd: 1 });

      await admin.config("RESETSTAT");
      expect((await store.release({ resource: "lean:1", leaseId: acquired.lease.leaseId })).released).toBe(true);
      const release = own(await readCommandCalls(admin));
      expect(release).toEqual({ fcall: 1, time: 1, hmget: 1, del: 1, zrem: 1, hincrby: 1, ...(await capCheck()), xadd: 1, set: 1 });

      // The read models follow once projected.
      await store.project();
      expect((await store.events({ resource: "lean:1" })).items.map((e) => e.kind)).toEqual(["released", "acquired"]);
    } finally {
      await fixture.cleanup();
      await admin.quit();
    }
  });

  it("sends one command per acquire, renew and release: an FCALL of the loaded library, never a load", async () => {
    const admin = new Redis(server.url);
    const fixture = await createStoreFixture("redis", { url: server.url, name: "redis-round-trips" });
    const { store } = fixture;
    const watch = await watchConnection(server, store.client as Redis, admin);
    try {
      // Warm: the library loaded and the once-per-store check done.
      const warm = await store.acquire({ resource: "trip:warm", owner: "a", task: "t", ttlMs: 10_000 });
      if (!warm.acquired) throw new Error("expected to acquire trip:warm");
      await store.renew({ resource: "trip:warm", leaseId: warm.lease.leaseId, ttlMs: 10_000 });
      await store.release({ resource: "trip:warm", leaseId: warm.lease.leaseId });
      await watch.take();

      const measure = async <T>(operation: () => Promise<T>) => {
        await admin.config("RESETSTAT");
        await watch.take();
        const result = await operation();
        const sent = await watch.take();
        const calls = await readCommandCalls(admin);
        return { result, sent, fcall: calls.fcall ?? 0, loads: calls["function|load"] ?? 0 };
      };
      const acquire = await measure(() => store.acquire({ resource: "trip:1", owner: "a", task: "t", ttlMs: 10_000 }));
      expect(acquire).toMatchObject({ result: { acquired: true }, sent: ["fcall"], fcall: 1, loads: 0 });
      if (!acquire.result.acquired) return;
      const leaseId = acquire.result.lease.leaseId;
      const contended = await measure(() => store.acquire({ resource: "trip:1", owner: "b", task: "t", ttlMs: 10_000 }));
      expect(contended).toMatchObject({ result: { acquired: false }, sent: ["fcall"], fcall: 1, loads: 0 });
      const renew = await measure(() => store.renew({ resource: "trip:1", leaseId, ttlMs: 10_000 }));
      expect(renew).toMatchObject({ result: { renewed: true }, sent: ["fcall"], fcall: 1, loads: 0 });
      const release = await measure(() => store.release({ resource: "trip:1", leaseId }));
      expect(release).toMatchObject({ result: { released: true }, sent: ["fcall"], fcall: 1, loads: 0 });
    } finally {
      watch.stop();
      await fixture.cleanup();
      await admin.quit();
    }
  });
});

/**
 * A call sent again by the store after its reply was lost, while the world moved on: the
 * reconnect is held back (the proxy lets no byte through for a while) and meanwhile the first
 * grant lapses, or another lease of the resource starts and ends.
 */
describe("RedisLeaseStore: a call resent after a lost reply answers as the first did", () => {
  async function openThroughProxy() {
    const proxy = await startTcpProxy({ port: server.port });
    const fresh = freshRedisNamespace(server.url);
    const store = new RedisLeaseStore({ name: "redis-resend", url: proxy.url, namespace: fresh.namespace });
    // Checks and the other lease go through a direct connection, untouched by the proxy's faults.
    const direct = new RedisLeaseStore({ name: "redis-resend", url: server.url, namespace: fresh.namespace });
    await direct.client.function("LOAD", "REPLACE", LEASE_LIBRARY.code);
    await store.get("warm-up"); // connected, checked and idle: the next reply is the call's own
    const kindsOf = async (resource: string) => (await direct.events({ resource, order: "asc" })).items.map((e) => e.kind);
    const close = async () => {
      await store.close();
      await direct.close();
      await proxy.close();
      await fresh.drop();
    };
    return { proxy, store, direct, kindsOf, close };
  }

  it("an acquire whose grant lapsed before it was resent is not granted again: not acquired, one acquired event, no expiry counted as a crash", async () => {
    const t = await openThroughProxy();
    try {
      const dropped = t.proxy.dropNextReply({ reconnectDelayMs: 300 });
      const outcome = await t.store.acquire({ resource: "resend:lapsed", owner: "a", task: "t", ttlMs: 100 }).then(
        (result) => result,
        (error: unknown) => error,
      );
      await dropped;
      // Not a lease whose TTL already ran out while the reply was on its way, nor one taken over from itself.
      expect(outcome).toBeInstanceOf(LeaseError);
      expect((outcome as LeaseError).code).toBe("lease_ended");
      await t.direct.sweep();
      const kinds = await t.kindsOf("resend:lapsed");
      expect(kinds.filter((k) => k === "acquired")).toHaveLength(1);
      expect(kinds).not.toContain("expired");
      const counts = await t.direct.lifetimeCounts();
      expect(counts).toMatchObject({ acquired: 1, expired: 0, held: 0 });
      expect(counts.acquired).toBe(counts.released + counts.expired + counts.force_released + counts.held);
      // The resource is free for the next acquire.
      expect((await t.store.acquire({ resource: "resend:lapsed", owner: "a", task: "t", ttlMs: 10_000 })).acquired).toBe(true);
    } finally {
      await t.close();
    }
  });

  it("LeaseClient takes an acquire whose grant lapsed before it was resent as not acquired and tries again within waitMs", async () => {
    const t = await openThroughProxy();
    const client = new LeaseClient(t.store, { owner: "worker" });
    try {
      const dropped = t.proxy.dropNextReply({ reconnectDelayMs: 300 });
      const value = await client.withLease("resend:client", async ({ lease }) => lease.leaseId, { task: "t", ttlMs: 100, waitMs: 10_000 });
      await dropped;
      const events = (await t.direct.events({ resource: "resend:client", order: "asc" })).items;
      expect(events.map((e) => e.kind)).toEqual(["acquired", "released", "acquired", "released"]);
      // The work ran under the second lease, the one its acquire was told about.
      expect(events[2]!.leaseId).toBe(value);
      expect(events[1]).toMatchObject({ leaseId: events[0]!.leaseId, reason: "acquire_reply_lost" });
    } finally {
      await t.close();
    }
  });

  it("a contended acquire resent after its reply was lost records contended once", async () => {
    const t = await openThroughProxy();
    try {
      const holder = await t.direct.acquire({ resource: "resend:held", owner: "holder", task: "t", ttlMs: 60_000 });
      if (!holder.acquired) throw new Error("expected to acquire resend:held");
      const dropped = t.proxy.dropNextReply();
      const refused = await t.store.acquire({ resource: "resend:held", owner: "b", task: "t", ttlMs: 10_000 });
      await dropped;
      expect(refused).toMatchObject({ acquired: false, holder: { leaseId: holder.lease.leaseId, owner: "holder" } });
      expect(await t.kindsOf("resend:held")).toEqual(["acquired", "contended"]);
      await t.direct.project();
      const contended = (await t.direct.stats({ from: new Date(Date.now() - 7_200_000), to: new Date(Date.now() + 3_600_000), bucketMs: 3_600_000 }))
        .reduce((sum, b) => sum + b.counts.contended, 0);
      expect(contended).toBe(1);
    } finally {
      await t.close();
    }
  });

  it("a release resent after another lease of the resource started and ended says released, and withLease returns the work's value", async () => {
    const t = await openThroughProxy();
    const clientEvents: string[] = [];
    const client = new LeaseClient(t.store, { owner: "worker", onEvent: (e) => clientEvents.push(e.type) });
    try {
      let dropped: Promise<void> | undefined;
      const work = client.withLease(
        "resend:release",
        async () => {
          // The next reply is the release's: the lease is fresh, no heartbeat is due for seconds.
          dropped = t.proxy.dropNextReply({ reconnectDelayMs: 300 });
          return "done";
        },
        { task: "t", ttlMs: 10_000 },
      );
      await eventually(async () => {
        if (!dropped) throw new Error("not armed yet");
      });
      await dropped;
      // While the release is waiting to be sent again, another lease comes and goes.
      const other = await t.direct.acquire({ resource: "resend:release", owner: "other", task: "t", ttlMs: 10_000 });
      if (!other.acquired) throw new Error("expected the other acquire to get the resource");
      expect((await t.direct.release({ resource: "resend:release", leaseId: other.lease.leaseId })).released).toBe(true);
      expect(await work).toBe("done");
      expect(clientEvents).not.toContain("lost");
      expect(await t.kindsOf("resend:release")).toEqual(["acquired", "released", "acquired", "released"]);
    } finally {
      await t.close();
    }
  });

  it("a release of a lease this caller's earlier release ended answers released, even after the resource changed hands", async () => {
    const t = await openThroughProxy();
    try {
      const first = await t.store.acquire({ resource: "resend:again", owner: "a", task: "t", ttlMs: 10_000 });
      if (!first.acquired) throw new Error("expected to acquire resend:again");
      const released = await t.store.release({ resource: "resend:again", leaseId: first.lease.leaseId });
      if (!released.released) throw new Error("expected the release to succeed");
      const other = await t.direct.acquire({ resource: "resend:again", owner: "other", task: "t", ttlMs: 10_000 });
      if (!other.acquired) throw new Error("expected the other acquire to get the resource");
      expect((await t.direct.release({ resource: "resend:again", leaseId: other.lease.leaseId })).released).toBe(true);
      // The caller sends its release again as a new call (say, its process restarted the step).
      expect(await t.store.release({ resource: "resend:again", leaseId: first.lease.leaseId })).toEqual(released);
      expect(await t.kindsOf("resend:again")).toEqual(["acquired", "released", "acquired", "released"]);
    } finally {
      await t.close();
    }
  });
});
