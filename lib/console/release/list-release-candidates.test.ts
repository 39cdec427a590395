/**
 * Bulk release candidates against real stores: under a prefix, exactly the leases
 * that are lapsed (not yet swept) or overdue, from both kinds of store.
 */
import { describe, expect, it } from "vitest";
import { type LeaseStore, RedisLeaseStore } from "@leasewatch/lease";
import { sleep } from "@leasewatch/lease/testing";
import { startRedis } from "@/test/support/servers";
import { checkReleaseCandidates, listReleaseCandidates, readCurrentLeaseId } from "./list-release-candidates";
import { setUpStorePair } from "@/test/support/store-pair";

const stores = setUpStorePair({ pg: "pg-t", redis: "redis-t" });

async function acquire(store: LeaseStore, resource: string, ttlMs: number): Promise<string> {
  const r = await store.acquire({ resource, owner: "w", task: "t", ttlMs });
  if (!r.acquired) throw new Error(`could not acquire ${resource}`);
  return r.lease.leaseId;
}

describe("listReleaseCandidates", () => {
  it.each(["postgres", "redis"] as const)("lists exactly the lapsed and overdue leases under the prefix (%s)", async (kind) => {
    const store = kind === "postgres" ? stores.pgStore : stores.redis;
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
    const empty = await listReleaseCandidates({ prefix: "" }, { entries: [{ store: stores.pgStore }] });
    expect(empty.ok ? null : empty.problem.param).toBe("prefix");
    const unknown = await listReleaseCandidates({ prefix: "t1:", store: "nope" }, { entries: [{ store: stores.pgStore }] });
    expect(unknown.ok ? null : unknown.problem.param).toBe("store");
  });
});

describe("confirming leases for a bulk release never takes a failed read for a change", () => {
  it("a lease that is still a candidate is confirmed; a healthy one (renewed, or listed by someone else) is 'renewed'; another holder is 'other_lease'", async () => {
    const lapsed = await acquire(stores.pgStore, "t1:c:lapsed", 200);
    const healthy = await acquire(stores.pgStore, "t1:c:healthy", 60_000);
    const replaced = await acquire(stores.redis, "t1:c:replaced", 60_000);
    await sleep(400);
    const check = await checkReleaseCandidates("t1:", { entries: [{ store: stores.pgStore }, { store: stores.redis }] });
    expect(await check({ store: "pg-t", resource: "t1:c:lapsed", leaseId: lapsed })).toBe("candidate");
    expect(await check({ store: "pg-t", resource: "t1:c:healthy", leaseId: healthy })).toBe("renewed");
    expect(await check({ store: "redis-t", resource: "t1:c:replaced", leaseId: `${replaced}-not` })).toBe("other_lease");
  });

  it("a store whose connection is closed: its healthy lease is 'unconfirmed', and the current-lease read rejects instead of answering 'free'", async () => {
    const healthy = await acquire(stores.pgStore, "t1:d:healthy", 60_000);
    await stores.pgStore.close();
    await expect(readCurrentLeaseId("pg-t", "t1:d:healthy", { entries: [{ store: stores.pgStore }] })).rejects.toThrow();
    const check = await checkReleaseCandidates("t1:", { entries: [{ store: stores.pgStore }, { store: stores.redis }] });
    expect(await check({ store: "pg-t", resource: "t1:d:healthy", leaseId: healthy })).toBe("unconfirmed");
  });

  it("an aborted request: nothing is confirmed", async () => {
    const healthy = await acquire(stores.redis, "t1:e:healthy", 60_000);
    const aborted = AbortSignal.abort();
    await expect(readCurrentLeaseId("redis-t", "t1:e:healthy", { entries: [{ store: stores.redis }], signal: aborted })).rejects.toThrow();
    const check = await checkReleaseCandidates("t1:", { entries: [{ store: stores.redis }], signal: aborted });
    expect(await check({ store: "redis-t", resource: "t1:e:healthy", leaseId: healthy })).toBe("unconfirmed");
  });

  it("a store that hangs (its server paused) past the timeout: its healthy lease is 'unconfirmed'", async () => {
    const server = await startRedis();
    const hanging = new RedisLeaseStore({ name: "redis-slow", url: server.url, namespace: "slow" });
    try {
      const healthy = await acquire(hanging, "t1:f:healthy", 60_000);
      server.pause();
      const options = { entries: [{ store: hanging }], timeoutMs: 300 };
      await expect(readCurrentLeaseId("redis-slow", "t1:f:healthy", options)).rejects.toThrow();
      const check = await checkReleaseCandidates("t1:", options);
      expect(await check({ store: "redis-slow", resource: "t1:f:healthy", leaseId: healthy })).toBe("unconfirmed");
    } finally {
      server.resume();
      await hanging.close();
      await server.stop();
    }
  });
});
