import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ReadAbortedError } from "../errors";
import { startRedis, stopAllServers, type ThrowawayServer } from "@/test/support/servers";
import { setUpStoreFixture } from "@/test/support/store-suite";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";
import type { EventQuery, LeaseEvent, StatsBucket } from "../types";
import { findUnservableRedisEventFilter } from "./event-filters";
import { bucketOf, buildBucketKeys, buildStatsKey } from "./keys";
import type { RedisLeaseStore } from "./store";

/**
 * Bounded Redis reads, on the shared Redis in a namespace of their own: the indexes the
 * projector keeps answer exactly what a full read of the streams would, a read with a small
 * key budget answers in part and says so, and (on a server of its own) an aborted read stops
 * issuing commands.
 */

const BUCKETS = 4;
const fixture = setUpStoreFixture("redis", { name: "redis-bounded", options: { buckets: BUCKETS } });
let store: RedisLeaseStore;
const from = new Date(Date.now() - 3_600_000);

const OWNERS = ["worker-1", "worker-2", "worker-3", "nightly"];
const TASKS = ["run-a", "run-b", "run-c"];

/** Every event of the namespace by paging a read with no filter: the full scan the indexes are compared with. */
async function readAll(query: EventQuery, target = store): Promise<LeaseEvent[]> {
  const all: LeaseEvent[] = [];
  let cursor: string | undefined;
  do {
    const page = await target.events({ ...query, limit: 37, ...(cursor ? { cursor } : {}) });
    expect(page.partial).toBeUndefined();
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

beforeAll(async () => {
  store = fixture.store;
  // 600 grants over 60 resources, each released or refused once by someone else: every kind of
  // filter has several matches spread over the buckets.
  for (let round = 0; round < 10; round++) {
    await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const n = round * 60 + i;
        const resource = `tenant_${i % 6}:job:${i}`;
        const got = await store.acquire({ resource, owner: OWNERS[n % 4]!, task: TASKS[n % 3]!, ttlMs: 60_000 });
        if (!got.acquired) throw new Error("seed: expected to acquire");
        if (n % 7 === 0) await store.acquire({ resource, owner: "intruder", task: "probe", ttlMs: 1_000 });
        if (n % 11 === 0) {
          await store.reportFencingRejection({ resource, fencingToken: got.lease.fencingToken, seenToken: "1", by: "ledger", leaseId: got.lease.leaseId });
        }
        await store.release({ resource, leaseId: got.lease.leaseId });
      }),
    );
  }
  await store.project();
}, 120_000);

describe("Redis event filters served by indexes", () => {
  it("owner, task, lease id, token, kind and resource filters return what a full read of the streams returns", async () => {
    const everything = await readAll({ from });
    expect(everything.length).toBeGreaterThan(1_200);
    const grant = everything.find((e) => e.kind === "fencing_rejected")!;
    const filters: Array<[string, EventQuery, (e: LeaseEvent) => boolean]> = [
      ["owner", { owner: "worker-2" }, (e) => e.owner === "worker-2"],
      ["owner (none)", { owner: "nobody" }, (e) => e.owner === "nobody"],
      ["task", { task: "run-c" }, (e) => e.task === "run-c"],
      ["owner and kind", { owner: "intruder", kinds: ["contended"] }, (e) => e.owner === "intruder" && e.kind === "contended"],
      ["kind contended", { kinds: ["contended"] }, (e) => e.kind === "contended"],
      ["kind fencing_rejected", { kinds: ["fencing_rejected"] }, (e) => e.kind === "fencing_rejected"],
      ["lease id", { leaseId: grant.leaseId! }, (e) => e.leaseId === grant.leaseId],
      ["token", { fencingToken: grant.fencingToken! }, (e) => e.fencingToken === grant.fencingToken],
      ["resource", { resource: "tenant_3:job:9" }, (e) => e.resource === "tenant_3:job:9"],
    ];
    for (const [name, filter, keep] of filters) {
      const expected = everything.filter(keep).map((e) => e.id);
      for (const order of ["desc", "asc"] as const) {
        const got = (await readAll({ ...filter, from, order })).map((e) => e.id);
        expect(got, `${name} ${order}`).toEqual(order === "desc" ? expected : [...expected].reverse());
      }
    }
    // The lease id filter found the grant's acquire, release and the rejection of its token.
    expect(everything.filter((e) => e.leaseId === grant.leaseId).map((e) => e.kind).sort()).toEqual(["acquired", "fencing_rejected", "released"]);
  });

});

describe("Redis read key budget", () => {
  it("a read that runs out of its budget answers the first matches only, marked partial, with no next page", async () => {
    const small = fixture.open({ name: "redis-small", options: { readKeyBudget: 300 } });
    try {
      const full = await readAll({ prefix: "tenant_5:", from });
      const page = await small.events({ prefix: "tenant_5:", from, limit: 200 });
      expect(page.partial).toEqual({ reason: "read_budget", examined: expect.any(Number) });
      expect(page.partial!.examined).toBeGreaterThanOrEqual(300);
      expect(page.nextCursor).toBeUndefined();
      expect(page.items.length).toBeLessThan(200);
      // What it did return is exactly the start of the full answer, in order.
      expect(page.items.map((e) => e.id)).toEqual(full.slice(0, page.items.length).map((e) => e.id));

      const leases = await small.list({ owner: "nobody", limit: 10 });
      expect(leases.items).toEqual([]);
      // (No lease is held after the seed: the list had nothing to examine, so it is complete.)
      expect(leases.partial).toBeUndefined();
    } finally {
      await small.close();
    }
  });

  it("the same read within the default budget is complete", async () => {
    const page = await store.events({ prefix: "tenant_5:", from, limit: 200 });
    expect(page.partial).toBeUndefined();
    expect(page.items.length).toBe(200);
    expect(page.nextCursor).toBeDefined();
  });
});

describe("Redis read round trips (on a server of its own)", () => {
  // A redis-server of its own, so INFO commandstats counts this read's commands and nobody else's.
  let server: ThrowawayServer;
  let ownFixture: StoreFixture<"redis">;
  let own: RedisLeaseStore;
  let admin: Redis;

  beforeAll(async () => {
    server = await startRedis();
    ownFixture = await createStoreFixture("redis", { url: server.url, name: "redis-cancel", options: { buckets: BUCKETS } });
    own = ownFixture.store;
    admin = new Redis(server.url);
    for (let round = 0; round < 15; round++) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const got = await own.acquire({ resource: `jobs:${i}`, owner: "w", task: "t", ttlMs: 60_000 });
          if (got.acquired) await own.release({ resource: `jobs:${i}`, leaseId: got.lease.leaseId });
        }),
      );
    }
  }, 60_000);

  afterAll(async () => {
    admin.disconnect();
    await ownFixture.cleanup();
    await stopAllServers();
  });

  const rangeReads = async () => Number(/^cmdstat_xrevrange:calls=(\d+)/m.exec(await admin.info("commandstats"))?.[1] ?? 0);

  /** What `read` answered, and the commands the server ran meanwhile (MONITOR). */
  async function watchCommands<T>(read: () => Promise<T>): Promise<{ result: T; named: (name: string) => string[][] }> {
    const monitor = await admin.monitor();
    const commands: string[][] = [];
    monitor.on("monitor", (_time: string, args: string[]) => commands.push(args));
    const result = await read();
    // MONITOR reports commands in the order the server ran them: once the marker is in, the read's are.
    await admin.echo("end-of-read");
    await vi.waitFor(() => expect(commands.some(([name, arg]) => name?.toLowerCase() === "echo" && arg === "end-of-read")).toBe(true));
    monitor.disconnect();
    return { result, named: (name) => commands.filter(([n]) => n?.toLowerCase() === name) };
  }
  /** Single-entry fetches from a bucket stream (XRANGE id id). */
  const entryFetches = (named: (name: string) => string[][]) => named("xrange").filter(([, key, start, end]) => key!.endsWith(":events") && start === end);

  it("an owner read ranges over its id streams and fetches only the page's entries, however many events the window holds", async () => {
    const { result: page, named } = await watchCommands(() => own.events({ owner: "w", from, limit: 20 }));
    expect(page.items).toHaveLength(20);
    // No bucket stream is ranged over newest first; only the owner's id streams are, one range per bucket.
    expect(named("xrevrange").map(([, key]) => key!.replace(/^.*\}:/, ""))).toEqual(Array.from({ length: BUCKETS }, () => "ido:w"));
    // Entries are fetched one id at a time, only those the page takes (20, and one to tell whether there is more).
    expect(entryFetches(named).length).toBe(21);
  });

  it("a resource's newest event fetches two entries of its history, and a filter that drops the newer ones still finds the oldest", async () => {
    // jobs:0 has 30 events, newest first: released, acquired, released, … acquired.
    const newest = await watchCommands(() => own.events({ resource: "jobs:0", limit: 1 }));
    expect(newest.result.items.map((e) => e.kind)).toEqual(["released"]);
    expect(newest.result.nextCursor).toBeDefined();
    // The page's one entry, and one to tell whether there is more.
    expect(entryFetches(newest.named).length).toBe(2);

    const all = await own.events({ resource: "jobs:0", limit: 100 });
    expect(all.items).toHaveLength(30);
    const oldest = all.items.at(-1)!;
    const byToken = await watchCommands(() => own.events({ resource: "jobs:0", kinds: ["acquired"], fencingToken: oldest.fencingToken!, limit: 1 }));
    expect(byToken.result.items.map((e) => [e.kind, e.id])).toEqual([["acquired", oldest.id]]);
    // Every entry is fetched once as the batches grow (2, 4, 8, 16 …), none twice.
    const fetched = entryFetches(byToken.named).map(([, , id]) => id);
    expect(new Set(fetched).size).toBe(fetched.length);
    expect(fetched.length).toBe(30);
  });

  it("a resource's newest events come from the newest ids of its history list, and a page those cannot fill reads the whole list", async () => {
    const resource = "jobs:long";
    for (let round = 0; round < 25; round++) {
      const got = await own.acquire({ resource, owner: "w", task: "t", ttlMs: 60_000 });
      if (!got.acquired) throw new Error("expected to acquire");
      await own.release({ resource, leaseId: got.lease.leaseId });
    }
    const listReads = (named: (name: string) => string[][]) => named("lrange").filter(([, key]) => key!.endsWith(`:evids:${resource}`)).map(([, , start, stop]) => `${start}..${stop}`);
    const newest = await watchCommands(() => own.events({ resource, limit: 1 }));
    expect(newest.result.items.map((e) => e.kind)).toEqual(["released"]);
    // 50 ids in the list: the newest 32 are read, and two entries fetched.
    expect(listReads(newest.named)).toEqual(["0..31"]);
    expect(entryFetches(newest.named)).toHaveLength(2);

    const all = await own.events({ resource, limit: 100 });
    expect(all.items).toHaveLength(50);
    const oldest = all.items.at(-1)!;
    const deep = await watchCommands(() => own.events({ resource, kinds: ["acquired"], fencingToken: oldest.fencingToken!, limit: 1 }));
    expect(deep.result.items.map((e) => e.id)).toEqual([oldest.id]);
    expect(listReads(deep.named)).toEqual(["0..31", "0..999"]);
  });

  it("an hour's counters are read without its per-group fields, and an hour whose contention hash does not add up is read whole", async () => {
    const resource = "tenant_9:billing:eu";
    const held = await own.acquire({ resource, owner: "w", task: "t", ttlMs: 60_000 });
    if (!held.acquired) throw new Error("expected to acquire");
    for (const owner of ["x", "y"]) expect((await own.acquire({ resource, owner, task: "t", ttlMs: 60_000 })).acquired).toBe(false);
    await own.release({ resource, leaseId: held.lease.leaseId });
    const now = Date.now();
    const hours = { from: new Date(now - 2 * 3_600_000), to: new Date(now + 1), bucketMs: 3_600_000, prefixDepth: 3 };
    const total = (buckets: StatsBucket[]) => ({
      contended: buckets.reduce((n, b) => n + b.counts.contended, 0),
      released: buckets.reduce((n, b) => n + b.counts.released, 0),
      byName: buckets.reduce<Record<string, number>>((acc, b) => {
        for (const [name, n] of Object.entries(b.contendedByPrefix)) acc[name] = (acc[name] ?? 0) + n;
        return acc;
      }, {}),
    });
    const hourKey = buildStatsKey(buildBucketKeys(ownFixture.spec.namespace, bucketOf(resource, BUCKETS)), "h", Math.floor(now / 3_600_000));
    // The hour's hash holds per-group fields, which a read not under a prefix has no use for.
    expect((await admin.hkeys(hourKey)).some((field) => field.startsWith("g|"))).toBe(true);

    const isHourHash = (key: string | undefined) => /:stats:h:\d+$/.test(key ?? "");
    const lean = await watchCommands(() => own.stats(hours));
    expect(total(lean.result)).toMatchObject({ contended: 2, byName: { [resource]: 2 } });
    expect(total(lean.result).released).toBeGreaterThanOrEqual(1);
    expect(lean.named("hgetall").filter(([, key]) => isHourHash(key))).toEqual([]);
    expect(lean.named("hmget").filter(([, key]) => isHourHash(key)).length).toBeGreaterThan(0);

    // An hour counted by a writer that keeps no contention hash beside it (an earlier version): read whole.
    await admin.hincrby(hourKey, "contended", 1);
    await admin.hincrby(hourKey, "cp:legacy:jobs:nightly", 1);
    const whole = await watchCommands(() => own.stats(hours));
    expect(total(whole.result)).toEqual({ ...total(lean.result), contended: 3, byName: { [resource]: 2, "legacy:jobs:nightly": 1 } });
    expect(whole.named("hgetall").filter(([, key]) => key === hourKey)).toHaveLength(1);
  });

  it("an aborted read stops issuing commands: the server sees no stream reads after the abort", async () => {
    const query = { prefix: "no-such-prefix:", from, limit: 10 };
    // A full read of the window for a prefix nothing matches walks every bucket stream.
    const before = await rangeReads();
    expect((await own.events(query)).items).toEqual([]);
    const fullCount = (await rangeReads()) - before;
    expect(fullCount).toBeGreaterThan(4 * BUCKETS);

    const controller = new AbortController();
    const start = await rangeReads();
    const read = own.events({ ...query, signal: controller.signal });
    // The read sends its first round trip without waiting on anything else (the store is set
    // up already); the abort comes right after, before that round trip's replies are handled.
    await new Promise<void>((resolve) => setImmediate(resolve));
    controller.abort();
    await expect(read).rejects.toBeInstanceOf(ReadAbortedError);
    const afterAbort = (await rangeReads()) - start;
    // The round trip in flight when the abort came (one range read per bucket), nothing after it.
    expect(afterAbort).toBeGreaterThan(0);
    expect(afterAbort).toBeLessThanOrEqual(BUCKETS);
    // Nothing more arrives later either.
    await own.health();
    expect((await rangeReads()) - start).toBe(afterAbort);
  });
});

describe("unservable Redis event filters", () => {
  const day = 86_400_000;
  const now = Date.now();
  const window = (ms: number) => ({ from: new Date(now - ms), to: new Date(now + 1) });

  it("refuses a prefix alone over more than 24 h, naming what is indexed", () => {
    const problem = findUnservableRedisEventFilter({ prefix: "tenant_1:", ...window(7 * day) });
    expect(problem?.param).toBe("prefix");
    expect(problem?.message).toMatch(/at most 24 h: use window=24h or shorter, or add an indexed filter beside it: owner, task, resource, lease, token, or kind=/);
    expect(findUnservableRedisEventFilter({ prefix: "tenant_1:" })?.param).toBe("prefix");
    expect(findUnservableRedisEventFilter({ prefix: "tenant_1:", kinds: ["released"], ...window(2 * day) })?.param).toBe("prefix");
  });

  it("serves a prefix within 24 h, or with an indexed filter beside it, and every other filter over any window", () => {
    expect(findUnservableRedisEventFilter({ prefix: "tenant_1:", ...window(day) })).toBeNull();
    for (const indexed of [{ owner: "w" }, { task: "t" }, { resource: "r" }, { leaseId: "x" }, { fencingToken: "1" }, { kinds: ["expired" as const] }]) {
      expect(findUnservableRedisEventFilter({ prefix: "tenant_1:", ...indexed, ...window(14 * day) })).toBeNull();
    }
    expect(findUnservableRedisEventFilter({ kinds: ["acquired"], ...window(14 * day) })).toBeNull();
    expect(findUnservableRedisEventFilter({ ...window(14 * day) })).toBeNull();
  });
});
