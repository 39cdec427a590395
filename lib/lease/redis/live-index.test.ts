import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { writeRedisLeases } from "@/scripts/seed/redis-seed";
import { startRedis, stopAllServers, type ThrowawayServer } from "@/test/support/servers";
import { setUpStoreFixture } from "@/test/support/store-suite";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freshRedisNamespace, sleep, TEST_REDIS_URL } from "../testing/isolation";
import type { Lease, LeaseSort, ListQuery } from "../types";
import { compareBytes } from "./codec";
import { buildBucketKeys, buildLiveIndexKey, LIVE_INDEX_DONE } from "./keys";
import { RedisLeaseStore } from "./store";

/**
 * Owner and task lists served by the live-lease zsets (lo:/lt:, kept by the projector): they
 * answer what a full read of the live leases answers, in all three sorts and page by page, after
 * releases, expiries and takeovers; the backfill builds the same zsets for leases acquired before
 * they existed; and an owner list reads the owner's zsets and its page's hashes, not the walk.
 */

const BUCKETS = 4;
const SORTS: LeaseSort[] = ["expires", "held_longest", "newest"];

/** Every page of a list, following the cursor to the end. */
async function readPages(store: RedisLeaseStore, query: ListQuery, limit = 7): Promise<Lease[]> {
  const all: Lease[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 1_000; pages++) {
    const page = await store.list({ ...query, limit, ...(cursor ? { cursor } : {}) });
    expect(page.partial).toBeUndefined();
    all.push(...page.items);
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  return all;
}

/** The expected order of a sort over a full read (resource byte order breaks ties, as the store does). */
function sorted(leases: Lease[], sort: LeaseSort): Lease[] {
  const key = (l: Lease) => (sort === "expires" ? l.expiresAt.getTime() : l.acquiredAt.getTime());
  const sign = sort === "newest" ? -1 : 1;
  return [...leases].sort((a, b) => sign * (key(a) - key(b) || compareBytes(a.resource, b.resource)));
}

const ids = (leases: Lease[]) => leases.map((l) => `${l.resource}#${l.leaseId}`);

/** Every owner and task the tests below use (the ended leases' too). */
const OWNERS = ["rare", "busy", "flaky", "w-0", "w-1", "w-2", "w-3", "w-4"];
const TASKS = ["t-0", "t-1", "t-2", "t-takeover"];

/** Every non-empty live-index zset of the namespace, with members and scores (no SCAN: the server may hold much else). */
async function liveIndexSnapshot(admin: Redis, namespace: string): Promise<Record<string, string[]>> {
  const keys = Array.from({ length: BUCKETS }, (_, b) => buildBucketKeys(namespace, b)).flatMap((k) => [
    ...OWNERS.map((o) => buildLiveIndexKey(k, "owner", o)),
    ...TASKS.map((t) => buildLiveIndexKey(k, "task", t)),
  ]);
  const snapshot: Record<string, string[]> = {};
  for (const key of keys) {
    const members = await admin.zrange(key, "0", "-1", "WITHSCORES");
    if (members.length > 0) snapshot[key] = members;
  }
  return snapshot;
}

async function mustAcquire(store: RedisLeaseStore, resource: string, owner: string, task: string, ttlMs = 60_000): Promise<Lease> {
  const r = await store.acquire({ resource, owner, task, ttlMs });
  if (!r.acquired) throw new Error(`expected to acquire ${resource}`);
  return r.lease;
}

describe("Redis owner / task lists from the live-lease index", () => {
  const fixture = setUpStoreFixture("redis", { name: "redis-live", options: { buckets: BUCKETS } });
  let store: RedisLeaseStore;
  let admin: Redis;

  beforeAll(async () => {
    store = fixture.store;
    admin = new Redis(fixture.spec.url);
    const owners = (i: number) => (i % 50 === 7 ? "rare" : i % 2 === 0 ? "busy" : `w-${i % 5}`);
    const held: Lease[] = [];
    for (let i = 0; i < 200; i += 20) {
      held.push(...(await Promise.all(Array.from({ length: 20 }, (_, j) => mustAcquire(store, `jobs:${(i + j) % 7}:${i + j}`, owners(i + j), `t-${(i + j) % 3}`)))));
    }
    // Some projected before they end, some ended in the same batch as their acquire.
    await store.project();
    await Promise.all(held.filter((_, i) => i % 5 === 0).map((l) => store.release({ resource: l.resource, leaseId: l.leaseId })));
    // Short leases: some lapse and are taken over (an expired event then an acquired one, in one
    // batch), by another owner or by the same one; the rest are swept.
    const short = await Promise.all(Array.from({ length: 24 }, (_, i) => mustAcquire(store, `flaky:${i}`, "flaky", `t-${i % 3}`, 150)));
    await sleep(300);
    for (const [i, l] of short.entries()) {
      if (i % 3 === 0) await mustAcquire(store, l.resource, "busy", "t-takeover");
      else if (i % 3 === 1) await mustAcquire(store, l.resource, "flaky", l.task);
    }
    await store.sweep();
    const ended = held.filter((_, i) => i % 5 === 1);
    await Promise.all(ended.slice(0, 5).map((l) => store.forceRelease({ resource: l.resource, leaseId: l.leaseId, actor: "ops", reason: "test" })));
  }, 60_000);

  afterAll(() => {
    admin.disconnect();
  });

  const FILTERS: Array<[string, ListQuery, (l: Lease) => boolean]> = [
    ["owner busy", { owner: "busy" }, (l) => l.owner === "busy"],
    ["owner rare", { owner: "rare" }, (l) => l.owner === "rare"],
    ["owner flaky", { owner: "flaky" }, (l) => l.owner === "flaky"],
    ["owner nobody", { owner: "nobody" }, () => false],
    ["task t-1", { task: "t-1" }, (l) => l.task === "t-1"],
    ["task t-takeover", { task: "t-takeover" }, (l) => l.task === "t-takeover"],
    ["owner busy and task t-2", { owner: "busy", task: "t-2" }, (l) => l.owner === "busy" && l.task === "t-2"],
    ["owner flaky, held", { owner: "flaky", state: "held" }, (l) => l.owner === "flaky"],
  ];

  it("answers what a full read of the live leases answers, in every sort, page by page", async () => {
    const all = await readPages(store, {}, 50);
    expect(all.length).toBeGreaterThan(150);
    expect(all.filter((l) => l.owner === "rare").length).toBe(4);
    expect(all.filter((l) => l.owner === "flaky").length).toBe(8);
    for (const [name, query, keep] of FILTERS) {
      for (const sort of SORTS) {
        const got = await readPages(store, { ...query, sort });
        expect(ids(got), `${name}, sort=${sort}`).toEqual(ids(sorted(all.filter(keep), sort)));
      }
    }
    // The zsets hold exactly the live leases (no entry left behind by an end or a takeover).
    const snapshot = await liveIndexSnapshot(admin, fixture.spec.namespace);
    const indexed = Object.entries(snapshot).flatMap(([key, members]) => members.filter((_, i) => i % 2 === 0).map((m) => `${key.replace(/^.*\}:/, "")}|${m}`));
    const expected = all.flatMap((l) => [`lo:${l.owner}|${l.resource}`, `lt:${l.task}|${l.resource}`]);
    expect(indexed.sort()).toEqual(expected.sort());
  });

  it("backfills the zsets of a namespace whose leases were acquired before they existed", async () => {
    const before = await liveIndexSnapshot(admin, fixture.spec.namespace);
    expect(Object.keys(before).length).toBeGreaterThan(5);
    // An older namespace: no live zsets and no marker.
    for (const key of Object.keys(before)) await admin.del(key);
    for (let b = 0; b < BUCKETS; b++) await admin.hdel(buildBucketKeys(fixture.spec.namespace, b).proj, "live");
    // A second store (process) on the namespace, as after an upgrade: its projector builds them.
    const upgraded = fixture.open();
    try {
      const replies = await Promise.all(Array.from({ length: BUCKETS }, (_, b) => admin.hget(buildBucketKeys(fixture.spec.namespace, b).proj, "live")));
      expect(replies.every((r) => r === null)).toBe(true);
      await upgraded.project();
      const live = await Promise.all(Array.from({ length: BUCKETS }, (_, b) => admin.hget(buildBucketKeys(fixture.spec.namespace, b).proj, "live")));
      expect(live).toEqual(Array.from({ length: BUCKETS }, () => LIVE_INDEX_DONE));
    } finally {
      await upgraded.close();
    }
    expect(await liveIndexSnapshot(admin, fixture.spec.namespace)).toEqual(before);
  });
});

describe("Redis owner list round trips (on a server of its own)", () => {
  // A redis-server of its own, so MONITOR sees this read's commands and nobody else's traffic.
  let server: ThrowawayServer;
  let ownFixture: StoreFixture<"redis">;
  let own: RedisLeaseStore;
  let admin: Redis;
  let namespace: string;

  beforeAll(async () => {
    server = await startRedis();
    ownFixture = await createStoreFixture("redis", { url: server.url, name: "redis-live-own", options: { buckets: BUCKETS } });
    own = ownFixture.store;
    namespace = ownFixture.spec.namespace;
    admin = new Redis(server.url);
    // 400 live leases, 5 of them the rare owner's; 100 more acquired and released.
    await Promise.all(Array.from({ length: 500 }, (_, i) => mustAcquire(own, `jobs:${i}`, i % 100 === 7 ? "rare" : "busy", `t-${i % 3}`)))
      .then((leases) => Promise.all(leases.filter((_, i) => i % 5 === 4).map((l) => own.release({ resource: l.resource, leaseId: l.leaseId }))));
  }, 60_000);

  afterAll(async () => {
    admin.disconnect();
    await ownFixture.cleanup();
    await stopAllServers();
  });

  it("an owner list reads that owner's zsets and the page's lease hashes, never the acq / idx walk", async () => {
    await own.project();
    const monitor = await admin.monitor();
    const seen: string[][] = [];
    monitor.on("monitor", (_time: string, args: string[]) => seen.push(args));
    const pages = await Promise.all(SORTS.map((sort) => own.list({ owner: "rare", sort, limit: 10 })));
    // MONITOR reports commands in the order the server ran them: once the marker is in, the reads' are.
    await admin.echo("end-of-read");
    await vi.waitFor(() => expect(seen.some(([name, arg]) => name?.toLowerCase() === "echo" && arg === "end-of-read")).toBe(true));
    monitor.disconnect();
    const commands = seen.filter((args) => args.some((a) => a.startsWith(`${namespace}:`)));
    for (const page of pages) expect(page.items.map((l) => l.owner)).toEqual(["rare", "rare", "rare", "rare", "rare"]);
    // Of the walk's zsets only the sizes (ZCARD: the expiry sort's cost model) are read.
    const walkReads = commands.filter(([name, key]) => name?.toLowerCase() !== "zcard" && /\}:(acq|idx|names)$/.test(key!));
    expect(walkReads).toEqual([]);
    const hashReads = commands.filter(([name]) => name?.toLowerCase() === "hgetall");
    // Five leases per sort, each read once.
    expect(hashReads.length).toBe(3 * 5);
    const zsetReads = commands.filter(([name]) => /^z(range|rangebyscore|revrangebyscore)$/i.test(name ?? ""));
    expect(zsetReads.length).toBeGreaterThan(0);
    expect(zsetReads.every(([, key]) => /\}:lo:rare$/.test(key!))).toBe(true);
  });
});

describe("Redis owner / task lists while the live-lease index is being built", () => {
  const fresh = freshRedisNamespace(TEST_REDIS_URL);
  let admin: Redis;

  beforeAll(async () => {
    admin = new Redis(fresh.url);
  });

  afterAll(async () => {
    admin.disconnect();
    await fresh.drop();
  });

  it("walks the sort order meanwhile, and a walk out of budget says the index is building", async () => {
    // 6000 live leases in one bucket written as an older store left them: listed (acq, names), no
    // owner / task zsets. A read catches the projection up a few passes only (1000 each).
    const nowMs = Date.now();
    const leases = Array.from({ length: 6_000 }, (_, i) => ({
      resource: `old:${String(i).padStart(5, "0")}`,
      leaseId: randomUUID(),
      owner: i === 5_990 ? "rare" : "common",
      task: "t",
      fencingToken: String(nowMs * 1000 + i),
      acquiredAt: nowMs - 60_000 + i,
      expiresAt: nowMs + 3_600_000 + i,
      ttlMs: 3_600_000,
      renewedAt: nowMs - 60_000 + i,
      renewals: 0,
    }));
    await writeRedisLeases({ client: admin, namespace: fresh.namespace, buckets: 1, eventsMaxLen: 10_000, evidsMaxLen: 64 }, leases, nowMs);
    const store = new RedisLeaseStore({ name: "redis-upgraded", url: fresh.url, namespace: fresh.namespace, buckets: 1, readKeyBudget: 500 });
    try {
      const building = await store.list({ owner: "rare", sort: "held_longest" });
      expect(await admin.hget(buildBucketKeys(fresh.namespace, 0).proj, "live")).not.toBe(LIVE_INDEX_DONE);
      expect(building.items).toEqual([]);
      expect(building.partial?.reason).toBe("index_building");
      // A common owner's page is found by the walk within the budget: exact, no partial.
      const common = await store.list({ owner: "common", sort: "held_longest", limit: 5 });
      expect(common.partial).toBeUndefined();
      expect(common.items.map((l) => l.resource)).toEqual(["old:00000", "old:00001", "old:00002", "old:00003", "old:00004"]);
      for (let i = 0; i < 10 && (await admin.hget(buildBucketKeys(fresh.namespace, 0).proj, "live")) !== LIVE_INDEX_DONE; i++) await store.project();
      const built = await store.list({ owner: "rare", sort: "held_longest" });
      expect(built.partial).toBeUndefined();
      expect(built.items.map((l) => l.resource)).toEqual(["old:05990"]);
    } finally {
      await store.close();
    }
  }, 60_000);
});
