import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { LeaseError } from "../errors";
import { holdBucketIndex } from "../histogram";
import { createStoreFixture, type StoreFixture, type StoreOptions } from "@/test/support/stores";
import { freshRedisNamespace, sleep, TEST_REDIS_URL, untilDayHasLeft } from "../testing/isolation";
import { compareFencingTokens } from "../validation";
import { compareBytes } from "./codec";
import { bucketOf, buildBucketKeys, buildStoreWideStatsHashKey, buildStoreWideStatsKey, buildStatsKey } from "./keys";
import { PROJECT_BATCH } from "./projector";
import { DAY_TTL_S, HOUR_TTL_S, LEASE_SCRIPTS } from "./scripts";
import { RedisLeaseStore, type TRedisLeaseStoreOptions } from "./store";

/** Redis-specific behaviour on the shared Redis, each test in its own namespace. */

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000 as const;
const opened: StoreFixture<"redis">[] = [];

/** A store in a namespace of its own; `fixture.open()` gives another on the same namespace. */
async function openStore(options: StoreOptions<"redis"> = {}) {
  const fixture = await createStoreFixture("redis", { options });
  opened.push(fixture);
  return { store: fixture.store, spec: fixture.spec, fixture };
}

afterEach(async () => {
  for (const fixture of opened.splice(0)) await fixture.cleanup();
});

async function scanKeys(client: Redis, namespace: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, batch] = await client.scan(cursor, "MATCH", `${namespace}:*`, "COUNT", 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== "0");
  return keys;
}

async function mustAcquire(store: RedisLeaseStore, resource: string, ttlMs = 60_000, owner = "owner-a") {
  const result = await store.acquire({ resource, owner, task: "task-1", ttlMs });
  if (!result.acquired) throw new Error(`expected to acquire ${resource}`);
  return result.lease;
}

describe("RedisLeaseStore options", () => {
  const bad: Array<[string, unknown]> = [
    ["unknown option", { name: "r", url: "redis://127.0.0.1:6379", bogus: 1 }],
    ["neither url nor client", { name: "r" }],
    ["url and client", { name: "r", url: "redis://127.0.0.1:6379", client: { evalsha() {}, pipeline() {}, quit() {} } }],
    ["non-redis url", { name: "r", url: "http://127.0.0.1:6379" }],
    ["namespace with a colon", { name: "r", url: "redis://127.0.0.1:6379", namespace: "a:b" }],
    ["namespace too long", { name: "r", url: "redis://127.0.0.1:6379", namespace: "n".repeat(33) }],
    ["zero buckets", { name: "r", url: "redis://127.0.0.1:6379", buckets: 0 }],
    ["too many buckets", { name: "r", url: "redis://127.0.0.1:6379", buckets: 1025 }],
    ["zero eventsMaxLen", { name: "r", url: "redis://127.0.0.1:6379", eventsMaxLen: 0 }],
    ["bad store name", { name: "Bad Name", url: "redis://127.0.0.1:6379" }],
    ["client that is not a client", { name: "r", client: {} }],
  ];
  for (const [what, options] of bad) {
    it(`refuses ${what} with a LeaseError`, () => {
      expect(() => new RedisLeaseStore(options as TRedisLeaseStoreOptions)).toThrow(LeaseError);
    });
  }

  it("uses a caller's client and leaves it open on close()", async () => {
    const fresh = freshRedisNamespace(TEST_REDIS_URL);
    const client = new Redis(TEST_REDIS_URL);
    try {
      const store = new RedisLeaseStore({ name: "shared-client", client, namespace: fresh.namespace });
      await mustAcquire(store, "r:1");
      await store.close();
      expect(await client.ping()).toBe("PONG");
    } finally {
      await fresh.drop();
      await client.quit();
    }
  });
});

describe("RedisLeaseStore namespace", () => {
  it("refuses a store whose buckets differ from the namespace's, before it writes anything", async () => {
    const { store, fixture } = await openStore({ buckets: 16 });
    const other = fixture.open({ options: { buckets: 8 } });
    // Resources whose bucket differs between 16 and 8 buckets: their locks would be two keys.
    const resources = Array.from({ length: 40 }, (_, i) => `split:${i}`).filter((r) => bucketOf(r, 16) !== bucketOf(r, 8));
    expect(resources.length).toBeGreaterThan(0);
    for (const r of resources) await mustAcquire(store, r);

    for (const r of resources) {
      const refused = await other.acquire({ resource: r, owner: "b", task: "t", ttlMs: 60_000 }).then(
        (result) => result,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(LeaseError);
      expect((refused as LeaseError).code).toBe("misconfigured");
      expect((refused as LeaseError).message).toMatch(/uses 16 buckets \(recorded in \S+\), this store was given 8/);
    }
    await expect(other.list()).rejects.toThrow(/uses 16 buckets/);
    await expect(other.sweep()).rejects.toThrow(/uses 16 buckets/);
    // Nothing of the refused store reached Redis: every lease is still the first store's.
    expect((await store.events({ kinds: ["contended"] })).items).toEqual([]);
    for (const r of resources) expect((await store.get(r))?.owner).toBe("owner-a");
    // The same bucket count is welcome.
    const same = fixture.open();
    expect((await same.acquire({ resource: resources[0]!, owner: "c", task: "t", ttlMs: 1_000 })).acquired).toBe(false);
  });
});

describe("RedisLeaseStore keys", () => {
  it("puts every key of a resource under the hash tag of its bucket", async () => {
    const { store, spec } = await openStore({ buckets: 8 });
    const resources = Array.from({ length: 12 }, (_, i) => `tenant_${i % 3}:job:${i}`);
    for (const [i, r] of resources.entries()) {
      const lease = await mustAcquire(store, r, i % 2 === 0 ? 150 : 60_000);
      await store.acquire({ resource: r, owner: "other", task: "t", ttlMs: 1_000 });
      await store.renew({ resource: r, leaseId: lease.leaseId, ttlMs: i % 2 === 0 ? 150 : 60_000 });
      if (i % 3 === 0) await store.release({ resource: r, leaseId: lease.leaseId });
    }
    await sleep(300);
    await store.sweep();
    await store.reportLost({ resource: resources[1]!, leaseId: randomUUID(), owner: "o", task: "t", fencingToken: "1", reason: "expired" });

    const keys = await scanKeys(store.client as Redis, spec.namespace);
    expect(keys.length).toBeGreaterThan(0);
    // A lease id's note: note:<lease id (a UUID)>:<resource>.
    const perResource = /^(lock|lease|note:[0-9a-f-]{36}|fence|evids):(.+)$/;
    const perBucket = /^(idx|acq|names|events|events:(expired|lost|renew_failed|force_released|fencing_rejected|contended)|stats:(m|h|hc|d):\d+|slack:\d+|totals|groups|proj|holds:(open|classes|c\d+)|id[ot]:.+|l[ot]:.+|grants:\d+|buckets)$/;
    const kinds = new Set<string>();
    // Outside the buckets: the namespace's bucket count, and closed hours and days summed over the buckets.
    expect(keys).toContain(`${spec.namespace}:buckets`);
    const storeWide = new RegExp(`^${spec.namespace}:stats:[hd]s:\\d+$`);
    for (const key of keys.filter((k) => k !== `${spec.namespace}:buckets` && !storeWide.test(k))) {
      const match = new RegExp(`^${spec.namespace}:\\{b(\\d+)\\}:(.+)$`).exec(key);
      expect(match, key).not.toBeNull();
      const bucket = Number(match![1]);
      expect(bucket).toBeLessThan(8);
      const rest = match![2]!;
      const resourceKey = perResource.exec(rest);
      if (resourceKey) {
        kinds.add(resourceKey[1]!.split(":")[0]!);
        expect(resources).toContain(resourceKey[2]);
        expect(bucket, key).toBe(bucketOf(resourceKey[2]!, 8));
      } else {
        expect(rest, key).toMatch(perBucket);
        kinds.add(rest.startsWith("events:") ? "events:<kind>" : rest.split(":")[0]!);
      }
    }
    // Every kind of key was produced, so each was checked above.
    expect([...kinds].sort()).toEqual(["acq", "buckets", "events", "events:<kind>", "evids", "fence", "grants", "groups", "holds", "ido", "idt", "idx", "lease", "lo", "lock", "lt", "names", "note", "proj", "slack", "stats", "totals"]);
  });
});

describe("RedisLeaseStore fencing", () => {
  it("issues higher tokens after every key of the namespace is gone (as after FLUSHALL)", async () => {
    const { store, spec } = await openStore();
    const r = "tenant_1:ledger";
    let highest = "0";
    for (let i = 0; i < 3; i++) {
      const lease = await mustAcquire(store, r);
      expect(compareFencingTokens(lease.fencingToken, highest)).toBe(1);
      highest = lease.fencingToken;
      await store.release({ resource: r, leaseId: lease.leaseId });
    }
    const keys = await scanKeys(store.client as Redis, spec.namespace);
    await store.client.unlink(...keys);
    expect(await scanKeys(store.client as Redis, spec.namespace)).toEqual([]);
    expect(await store.get(r)).toBeNull();

    const after = await mustAcquire(store, r);
    expect(compareFencingTokens(after.fencingToken, highest), `${after.fencingToken} > ${highest}`).toBe(1);
    expect(after.fencingToken).toMatch(/^[1-9][0-9]*$/);
  });
});

describe("RedisLeaseStore expiry", () => {
  it("lists and gets a lapsed lease until it is recorded, and a late release records it exactly once", async () => {
    const { store } = await openStore();
    const lease = await mustAcquire(store, "t:lapse", 150);
    await sleep(400);
    const got = await store.get("t:lapse");
    expect(got).toMatchObject({ leaseId: lease.leaseId });
    const lapsed = await store.list({ state: "lapsed" });
    expect(lapsed.items.map((l) => l.leaseId)).toEqual([lease.leaseId]);
    expect(await store.countActive()).toBe(1);

    expect(await store.release({ resource: "t:lapse", leaseId: lease.leaseId })).toEqual({ released: false, reason: "expired" });
    expect(await store.sweep()).toEqual({ expired: 0 });
    expect(await store.release({ resource: "t:lapse", leaseId: lease.leaseId })).toEqual({ released: false, reason: "expired" });
    const expired = (await store.events({ kinds: ["expired"] })).items;
    expect(expired).toHaveLength(1);
    expect(expired[0]).toMatchObject({ leaseId: lease.leaseId, holdMs: 150 });
    expect(await store.get("t:lapse")).toBeNull();
    expect(await store.countActive()).toBe(0);
  });

  it("an acquire over a lapsed, renewed lease records its expiry once, indexes the new lease alone and starts its record afresh", async () => {
    const { store, spec } = await openStore({ buckets: 1 });
    const idx = `${spec.namespace}:{b0}:idx`;
    const old = await mustAcquire(store, "t:over", 150);
    await store.renew({ resource: "t:over", leaseId: old.leaseId, ttlMs: 150 });
    await sleep(400);
    const next = await store.acquire({ resource: "t:over", owner: "owner-b", task: "task-2", ttlMs: 60_000 });
    expect(next).toMatchObject({ acquired: true, tookOverExpired: true });
    if (!next.acquired) return;
    // Nothing of the old lease is left in the new one's record (its renewal count included).
    expect(await store.get("t:over")).toEqual(next.lease);
    expect(next.lease.renewals).toBe(0);
    // One index entry, under the new lease's expiry: a sweep finds nothing due, and list shows it held.
    expect(await store.client.zrange(idx, "0", "-1", "WITHSCORES")).toEqual(["t:over", String(next.lease.expiresAt.getTime())]);
    expect(await store.sweep()).toEqual({ expired: 0 });
    expect((await store.list({ state: "lapsed" })).items).toEqual([]);
    expect((await store.list()).items.map((l) => l.leaseId)).toEqual([next.lease.leaseId]);
    const expired = (await store.events({ kinds: ["expired"] })).items;
    expect(expired).toHaveLength(1);
    expect(expired[0]).toMatchObject({ leaseId: old.leaseId, owner: "owner-a" });
    expect(await store.lifetimeCounts()).toEqual({ acquired: 2, released: 0, expired: 1, force_released: 0, held: 1 });

    // An index entry left behind without its lease hash: the acquire records no expiry for it.
    expect((await store.release({ resource: "t:over", leaseId: next.lease.leaseId })).released).toBe(true);
    await store.client.zadd(idx, 1, "t:left");
    const left = await store.acquire({ resource: "t:left", owner: "owner-c", task: "task-3", ttlMs: 60_000 });
    expect(left.acquired && left.tookOverExpired).toBeFalsy();
    expect(await store.client.zscore(idx, "t:left")).toBe(left.acquired ? String(left.lease.expiresAt.getTime()) : null);
    expect((await store.events({ kinds: ["expired"] })).items).toHaveLength(1);
  });

  it("refuses a renew of its own lapsed lease as expired, and as not_owner once someone else holds it", async () => {
    const { store } = await openStore();
    const lease = await mustAcquire(store, "t:renew", 150);
    await sleep(400);
    expect(await store.renew({ resource: "t:renew", leaseId: lease.leaseId, ttlMs: 1_000 })).toEqual({ renewed: false, reason: "expired" });
    // Recorded by that renew; a second renew still knows why.
    expect(await store.renew({ resource: "t:renew", leaseId: lease.leaseId, ttlMs: 1_000 })).toEqual({ renewed: false, reason: "expired" });
    await mustAcquire(store, "t:renew", 60_000, "owner-b");
    expect(await store.renew({ resource: "t:renew", leaseId: lease.leaseId, ttlMs: 1_000 })).toEqual({ renewed: false, reason: "not_owner" });

    const events = (await store.events({ resource: "t:renew", order: "asc" })).items;
    expect(events.map((e) => `${e.kind}${e.reason ? `:${e.reason}` : ""}`)).toEqual([
      "acquired",
      "expired",
      "renew_failed:expired",
      "renew_failed:expired",
      "acquired",
      "renew_failed:not_owner",
    ]);
    // The failed renews name the lease's owner and token, from what the store remembers of it.
    expect(events[2]).toMatchObject({ owner: "owner-a", fencingToken: lease.fencingToken });
  });

  it("buckets hold durations in Lua exactly like holdBucketIndex, bounds inclusive", async () => {
    const { store } = await openStore({ buckets: 2 });
    // An expired lease is held for exactly its ttl: 1000 sits on a bound, 150 between bounds.
    await mustAcquire(store, "h:1000", 1_000);
    await mustAcquire(store, "h:150", 150);
    await sleep(1_300);
    expect(await store.sweep()).toEqual({ expired: 2 });

    const now = Date.now();
    const buckets = await store.stats({ from: new Date(now - 3_600_000), to: new Date(now + 3_600_000), bucketMs: 3_600_000 });
    const histogram = buckets.reduce<number[]>((sum, b) => sum.map((n, i) => n + (b.holdHistogram[i] ?? 0)), new Array(18).fill(0));
    const expected = new Array<number>(18).fill(0);
    expected[holdBucketIndex(1_000)]! += 1;
    expected[holdBucketIndex(150)]! += 1;
    expect(histogram).toEqual(expected);
    expect(buckets.reduce((n, b) => n + b.holdMsSum, 0)).toBe(1_150);
  });
});

describe("RedisLeaseStore lifetime counts", () => {
  it("conserve acquired = released + expired + force_released + held after the streams are trimmed and the stats expire", async () => {
    const { store, spec } = await openStore({ buckets: 4 });
    for (let i = 0; i < 6; i++) {
      const lease = await mustAcquire(store, `life:released:${i}`);
      await store.release({ resource: `life:released:${i}`, leaseId: lease.leaseId });
    }
    for (let i = 0; i < 3; i++) {
      const lease = await mustAcquire(store, `life:forced:${i}`);
      await store.forceRelease({ resource: `life:forced:${i}`, leaseId: lease.leaseId, actor: "ops", reason: "test" });
    }
    for (let i = 0; i < 4; i++) await mustAcquire(store, `life:expired:${i}`, 150);
    for (let i = 0; i < 2; i++) await mustAcquire(store, `life:held:${i}`);
    await sleep(400);
    expect(await store.sweep()).toEqual({ expired: 4 });
    // Lapsed, not recorded yet: still "held" until a sweep or the next acquire records it.
    await mustAcquire(store, "life:lapsed", 150);
    await sleep(300);

    const expected = { acquired: 16, released: 6, expired: 4, force_released: 3, held: 3 };
    expect(await store.lifetimeCounts()).toEqual(expected);

    // Retention does its work: every stream trimmed to nothing, every stats hash and history list gone.
    const keys = await scanKeys(store.client as Redis, spec.namespace);
    const streams = keys.filter((k) => /:events(:[a-z_]+)?$/.test(k));
    expect(streams.length).toBeGreaterThan(0);
    for (const stream of streams) await store.client.xtrim(stream, "MAXLEN", 0);
    const dropped = keys.filter((k) => /:(stats:|evids:)/.test(k));
    expect(dropped.length).toBeGreaterThan(0);
    await store.client.unlink(...dropped);
    expect((await store.events({ limit: 10 })).items).toEqual([]);

    expect(await store.lifetimeCounts()).toEqual(expected);
    // The lapsed lease is recorded later, from the counters' point of view as from the events'.
    expect(await store.sweep()).toEqual({ expired: 1 });
    const after = await store.lifetimeCounts();
    expect(after).toEqual({ ...expected, expired: 5, held: 2 });
    expect(after.acquired).toBe(after.released + after.expired + after.force_released + after.held);
  });
});

describe("RedisLeaseStore events", () => {
  it("caps the bucket streams approximately at eventsMaxLen and still pages the newest first", async () => {
    const { store, spec } = await openStore({ buckets: 1, eventsMaxLen: 100 });
    const holder = await mustAcquire(store, "hot:1");
    const total = 800;
    for (let i = 0; i < total; i += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, j) => store.acquire({ resource: "hot:1", owner: `w${i + j}`, task: "t", ttlMs: 1_000 })));
      // Only projected events are trimmed (projection-gap.test.ts has the backlog).
      await store.project();
    }
    await store.acquire({ resource: "hot:1", owner: "w-last", task: "t", ttlMs: 1_000 });
    const length = await store.client.xlen(`${spec.namespace}:{b0}:events`);
    // The trim removes whole stream nodes (at most 100 entries each by default), so a little more than the cap may remain.
    expect(length).toBeGreaterThanOrEqual(100);
    expect(length).toBeLessThanOrEqual(300);
    // The resource's history (a read model) keeps eventsMaxLen ids too.
    await store.project();
    expect(await store.client.llen(`${spec.namespace}:{b0}:evids:hot:1`)).toBe(100);
    // So do the task's id stream (every event here is task t's) and the contended events' own
    // stream, each capped once a projected batch.
    for (const key of ["idt:t", "events:contended"]) {
      const kept = await store.client.xlen(`${spec.namespace}:{b0}:${key}`);
      expect(kept, key).toBeGreaterThanOrEqual(100);
      expect(kept, key).toBeLessThanOrEqual(300);
    }

    const newest = await store.events({ limit: 5 });
    expect(newest.items).toHaveLength(5);
    expect(newest.items.every((e) => e.kind === "contended" && e.leaseId === holder.leaseId)).toBe(true);
    const all: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.events({ limit: 50, ...(cursor ? { cursor } : {}) });
      all.push(...page.items.map((e) => e.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(all.length).toBe(length);
    expect(new Set(all).size).toBe(all.length);
  });

  it("returns from acquire, release and force-release exactly the lease and events it stored", async () => {
    const { store } = await openStore({ buckets: 2 });
    const lease = await mustAcquire(store, "same:1", 60_000, "owner-é");
    expect(await store.get("same:1")).toEqual(lease);
    const held = await store.acquire({ resource: "same:1", owner: "other", task: "t", ttlMs: 1_000 });
    expect(held).toEqual({
      acquired: false,
      holder: { owner: lease.owner, task: lease.task, leaseId: lease.leaseId, fencingToken: lease.fencingToken, expiresAt: lease.expiresAt },
    });
    const released = await store.release({ resource: "same:1", leaseId: lease.leaseId });
    if (!released.released) throw new Error("expected a release");
    const forced = await mustAcquire(store, "same:2");
    const force = await store.forceRelease({ resource: "same:2", leaseId: forced.leaseId, actor: "ops", reason: "stuck" });
    if (!force.released) throw new Error("expected a force-release");
    expect(force.lease).toEqual(forced);

    const stored = [...(await store.events({ resource: "same:1" })).items, ...(await store.events({ resource: "same:2" })).items];
    expect(stored).toContainEqual(released.event);
    expect(stored).toContainEqual(force.event);
    expect(released.event).toMatchObject({ kind: "released", owner: lease.owner, task: lease.task, fencingToken: lease.fencingToken, holdMs: released.holdMs });
    expect(force.event).toMatchObject({ kind: "force_released", actor: "ops", reason: "stuck", holdMs: force.holdMs });
  });

  it("filters by resource even when many resources share the bucket", async () => {
    const { store } = await openStore({ buckets: 1 });
    for (let i = 0; i < 20; i++) await mustAcquire(store, `share:${i}`);
    await store.acquire({ resource: "share:7", owner: "x", task: "t", ttlMs: 1_000 });
    const events = (await store.events({ resource: "share:7" })).items;
    expect(events.map((e) => e.kind)).toEqual(["contended", "acquired"]);
    expect(events.every((e) => e.resource === "share:7")).toBe(true);
  });

  it("orders resources byte-wise like Redis across pages, including characters outside the BMP", async () => {
    const { store } = await openStore({ buckets: 4 });
    const names = ["u:\u{1F600}", "u:\uFFFD", "u:a", "u:\u00e9", "u:\u{10000}x", "u:z"];
    for (const n of names) await mustAcquire(store, n);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.list({ prefix: "u:", sort: "expires", limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((l) => l.resource));
      cursor = page.nextCursor;
    } while (cursor);
    expect([...seen].sort()).toEqual([...names].sort());
    expect(new Set(seen).size).toBe(names.length);
  });
});

describe("RedisLeaseStore event sources", () => {
  /** Every page of a query, following cursors. */
  async function pageAll(store: RedisLeaseStore, query: Parameters<RedisLeaseStore["events"]>[0], limit: number) {
    const items: Awaited<ReturnType<RedisLeaseStore["events"]>>["items"] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 500; page++) {
      const result = await store.events({ ...query, limit, ...(cursor ? { cursor } : {}) });
      items.push(...result.items);
      cursor = result.nextCursor;
      if (!cursor) return items;
    }
    throw new Error("never stopped paging");
  }

  it("answers rare-kind filters from the per-kind streams with the same events, ids and order as a full scan", async () => {
    const { store } = await openStore({ buckets: 4 });
    for (let i = 0; i < 12; i++) {
      const r = `k:${i}`;
      const lease = await mustAcquire(store, r, i % 3 === 0 ? 150 : 60_000);
      await store.acquire({ resource: r, owner: "x", task: "t", ttlMs: 1_000 });
      if (i % 3 === 1) await store.forceRelease({ resource: r, leaseId: lease.leaseId, actor: "ops", reason: "test" });
      if (i % 4 === 0) await store.reportLost({ resource: r, leaseId: lease.leaseId, owner: "owner-a", task: "task-1", fencingToken: lease.fencingToken, reason: "expired" });
      if (i % 5 === 0) await store.reportFencingRejection({ resource: r, fencingToken: "1", seenToken: lease.fencingToken, by: "db" });
    }
    await sleep(400);
    await store.sweep();

    const rare = ["expired", "force_released", "lost", "fencing_rejected"] as const;
    for (const order of ["desc", "asc"] as const) {
      // A dense kind in the filter forces the bucket-stream scan; drop it afterwards to compare.
      const scanned = (await pageAll(store, { order, kinds: [...rare, "acquired"] }, 1000)).filter((e) => e.kind !== "acquired");
      const indexed = await pageAll(store, { order, kinds: [...rare] }, 3);
      expect(indexed.map((e) => e.id), order).toEqual(scanned.map((e) => e.id));
      expect(indexed, order).toEqual(scanned);
    }
    const counts = (await pageAll(store, { kinds: [...rare] }, 100)).reduce<Record<string, number>>((acc, e) => ({ ...acc, [e.kind]: (acc[e.kind] ?? 0) + 1 }), {});
    expect(counts).toEqual({ expired: 4, force_released: 4, lost: 3, fencing_rejected: 3 });
  });

  it("pages one resource's history from its id list, both ways and inside a time window", async () => {
    const { store } = await openStore({ buckets: 2 });
    for (let i = 0; i < 9; i++) {
      const lease = await mustAcquire(store, "hist:1", 60_000, `owner-${i}`);
      await mustAcquire(store, `hist:other:${i}`);
      await store.release({ resource: "hist:1", leaseId: lease.leaseId });
    }
    const desc = await pageAll(store, { resource: "hist:1" }, 4);
    expect(desc).toHaveLength(18);
    expect(desc.every((e) => e.resource === "hist:1")).toBe(true);
    const asc = await pageAll(store, { resource: "hist:1", order: "asc" }, 5);
    expect(asc.map((e) => e.id)).toEqual([...desc].reverse().map((e) => e.id));
    // Same events as a prefix scan of the bucket streams.
    const scanned = (await pageAll(store, { prefix: "hist:1" }, 1000)).filter((e) => e.resource === "hist:1");
    expect(desc).toEqual(scanned);

    const middle = asc[8]!;
    const fromMiddle = await pageAll(store, { resource: "hist:1", from: middle.at }, 3);
    const beforeMiddle = await pageAll(store, { resource: "hist:1", to: middle.at }, 3);
    expect(fromMiddle.map((e) => e.id)).toContain(middle.id);
    expect(fromMiddle.every((e) => e.at.getTime() >= middle.at.getTime())).toBe(true);
    expect(beforeMiddle.every((e) => e.at.getTime() < middle.at.getTime())).toBe(true);
    expect(fromMiddle.length + beforeMiddle.length).toBe(18);
    expect(await pageAll(store, { resource: "hist:1", owner: "owner-3", kinds: ["released"] }, 10)).toHaveLength(1);
  });
});

describe("RedisLeaseStore list strategies", () => {
  it("gives the same pages for a prefix whether it gathers matches or scans the sort order", async () => {
    const { store } = await openStore({ buckets: 4 });
    for (let i = 0; i < 30; i++) await mustAcquire(store, `${i % 5 === 0 ? "narrow" : "broad"}:${i}`, 60_000 + ((i * 7) % 11) * 1_000);
    for (const sort of ["expires", "held_longest", "newest"] as const) {
      for (const prefix of ["broad:", "narrow:"]) {
        // limit 1000 reads every match (gather); limit 2 makes scanning cheaper for the broad prefix.
        const whole = (await store.list({ prefix, sort, limit: 1000 })).items.map((l) => l.resource);
        const paged: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await store.list({ prefix, sort, limit: 2, ...(cursor ? { cursor } : {}) });
          paged.push(...page.items.map((l) => l.resource));
          cursor = page.nextCursor;
        } while (cursor);
        expect(paged, `${sort} ${prefix}`).toEqual(whole);
        expect(whole.length).toBe(prefix === "narrow:" ? 6 : 24);
      }
    }
  });
});

describe("compareBytes", () => {
  it("orders strings like Redis does (UTF-8 bytes), also around surrogates and U+E000..U+FFFF", () => {
    const parts = ["", "a", "z", "aa", "\u00e9", "\uD7FF", "\uE000", "\uFFFD", "\u{10000}", "\u{1F600}"];
    for (const x of parts) {
      for (const y of parts) {
        for (const z of parts) {
          const a = x + z;
          const b = y + x;
          expect(Math.sign(compareBytes(a, b)), JSON.stringify([a, b])).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
        }
      }
    }
  });
});

describe("RedisLeaseStore stats", () => {
  it("groups contention by the requested prefix depth (default 2) and refuses oversized ranges", async () => {
    const { store } = await openStore();
    await mustAcquire(store, "tenant_1:billing:2026-04");
    await store.acquire({ resource: "tenant_1:billing:2026-04", owner: "b", task: "t", ttlMs: 1_000 });
    await store.acquire({ resource: "tenant_1:billing:2026-04", owner: "c", task: "t", ttlMs: 1_000 });
    const now = Date.now();
    const range = { from: new Date(now - 60_000), to: new Date(now + 60_000), bucketMs: 60_000 };
    const sum = (buckets: Awaited<ReturnType<RedisLeaseStore["stats"]>>) =>
      buckets.reduce<Record<string, number>>((acc, b) => {
        for (const [p, n] of Object.entries(b.contendedByPrefix)) acc[p] = (acc[p] ?? 0) + n;
        return acc;
      }, {});
    expect(sum(await store.stats(range))).toEqual({ "tenant_1:billing": 2 });
    expect(sum(await store.stats({ ...range, prefixDepth: 1 }))).toEqual({ tenant_1: 2 });
    expect(sum(await store.stats({ ...range, prefixDepth: 3 }))).toEqual({ "tenant_1:billing:2026-04": 2 });

    await expect(store.stats({ from: new Date(0), to: new Date(now), bucketMs: 60_000 })).rejects.toThrow(LeaseError);
    const week = await store.stats({ from: new Date(now - 7 * 24 * 3_600_000), to: new Date(now), bucketMs: 3_600_000 });
    expect(week.length).toBeGreaterThanOrEqual(168);
  });
});

describe("RedisLeaseStore day stats", () => {
  it("sums a closed day's hours into day hashes that outlive them, and reads today from its hours", async () => {
    // The acquires below and the read of "today" must fall on one UTC day.
    await untilDayHasLeft(30_000);
    const { store, spec } = await openStore({ buckets: 2 });
    for (let i = 0; i < 6; i++) {
      const lease = await mustAcquire(store, `day:${i % 3}:r${i}`);
      await store.acquire({ resource: lease.resource, owner: "other", task: "t", ttlMs: 1_000 });
      if (i % 2 === 0) await store.release({ resource: lease.resource, leaseId: lease.leaseId });
    }
    const now = Date.now();
    const today = Math.floor(now / DAY_MS);
    const dayRange = { from: new Date((today - 5) * DAY_MS), to: new Date(now + 1), bucketMs: DAY_MS, prefixDepth: 3 };
    const todayByHours = sumBuckets(await store.stats({ from: new Date(today * DAY_MS), to: new Date(now + 1), bucketMs: 3_600_000, prefixDepth: 3 }));
    expect(todayByHours.counts.acquired).toBe(6);

    // History three days back: today's hour hashes copied into the same hours of that day.
    const client = new Redis(spec.url);
    const pastDay = today - 3;
    try {
      const pastHours = (await copyDayHours(client, spec.namespace, 2, today, pastDay)).map((h) => h.key);
      const days = await store.stats(dayRange);
      expect(days.map((d) => d.start.getTime())).toEqual([5, 4, 3, 2, 1, 0].map((d) => (today - d) * DAY_MS));
      expect(sumBuckets([days[2]!])).toEqual(todayByHours);
      expect(sumBuckets([days[5]!])).toEqual(todayByHours);
      expect(sumBuckets([days[0]!, days[1]!, days[3]!, days[4]!]).counts.acquired).toBe(0);
      // The closed day is now a day hash in each bucket, kept DAY_TTL_S after the day ends; today is not compacted.
      for (let b = 0; b < 2; b++) {
        const keys = buildBucketKeys(spec.namespace, b);
        const ttl = await client.ttl(buildStatsKey(keys, "d", pastDay));
        expect(Math.abs(ttl - ((pastDay + 1) * 86_400 + DAY_TTL_S - Math.floor(now / 1_000)))).toBeLessThan(60);
        expect(await client.exists(buildStatsKey(keys, "d", today))).toBe(0);
      }
      // The hours can go: the day still counts the same.
      await client.del(...pastHours);
      expect(await store.stats(dayRange)).toEqual(days);
      // A bounded number of days per call: the rest of the closed days within the hours' lifetime follow.
      let result = await store.compactDayStats();
      for (let calls = 0; result.pending > 0 && calls < 10; calls++) result = await store.compactDayStats();
      expect(result.pending).toBe(0);
      expect(await store.compactDayStats()).toEqual({ compacted: 0, pending: 0 });
      expect(await store.stats(dayRange)).toEqual(days);
    } finally {
      client.disconnect();
    }
  });

  it("reads each closed hour and day from one store-wide hash once it is summed, and from every bucket's hash until then", async () => {
    await untilDayHasLeft(30_000);
    const { store, spec } = await openStore({ buckets: 3 });
    for (let i = 0; i < 9; i++) {
      const lease = await mustAcquire(store, `hours:${i % 3}:r${i}`);
      await store.acquire({ resource: lease.resource, owner: "other", task: "t", ttlMs: 1_000 });
      if (i % 2 === 0) await store.release({ resource: lease.resource, leaseId: lease.leaseId });
    }
    const today = Math.floor(Date.now() / DAY_MS);
    const hours = (day: number, fromHour = 0, toHour = 24) => ({ from: new Date(day * DAY_MS + fromHour * HOUR_MS), to: new Date(day * DAY_MS + toHour * HOUR_MS), bucketMs: HOUR_MS, prefixDepth: 3 });
    const under = (day: number) => ({ prefix: "hours:1", from: new Date(day * DAY_MS), to: new Date((day + 1) * DAY_MS), bucketMs: HOUR_MS });
    const withoutStart = (buckets: Awaited<ReturnType<RedisLeaseStore["stats"]>>) =>
      buckets.map((b) => ({ counts: b.counts, holdHistogram: b.holdHistogram, holdMsSum: b.holdMsSum, contendedByPrefix: b.contendedByPrefix }));
    const todayHours = withoutStart(await store.stats(hours(today)));
    expect(sumBuckets(await store.stats(hours(today))).counts.acquired).toBe(9);
    const todayUnder = withoutStart((await store.prefixStats(under(today))).buckets);
    expect(sumBuckets((await store.prefixStats(under(today))).buckets).counts.acquired).toBe(3);

    // Four days back gets today's hours, copied bucket by bucket and hour by hour.
    const pastDay = today - 4;
    const client = new Redis(spec.url);
    try {
      const copied = await copyDayHours(client, spec.namespace, 3, today, pastDay);
      const pastHours = copied.map((h) => h.key);
      const busyHours = new Set(copied.map((h) => h.hour));
      for (let h = 0; h < 24; h++) await client.del(buildStoreWideStatsKey(spec.namespace, "h", pastDay * 24 + h));
      // Not summed yet: the buckets' hashes answer.
      expect(withoutStart(await store.stats(hours(pastDay)))).toEqual(todayHours);

      let result = await store.compactDayStats();
      for (let calls = 0; result.pending > 0 && calls < 10; calls++) result = await store.compactDayStats();
      expect(result.pending).toBe(0);
      const [busy] = [...busyHours];
      const storeWide = await readStoreWide(client, buildStoreWideStatsKey(spec.namespace, "h", busy!));
      expect(storeWide.buckets).toBe("3");
      expect(Number(storeWide.acquired)).toBeGreaterThan(0);
      // Only what a read that is not under a prefix uses: the per-group fields stay in the buckets.
      expect(Object.keys(storeWide).filter((f) => f.startsWith("g|") || f.startsWith("gh|"))).toEqual([]);
      const ttl = await client.ttl(buildStoreWideStatsKey(spec.namespace, "h", busy!));
      expect(Math.abs(ttl - ((busy! + 1) * 3_600 + HOUR_TTL_S - Math.floor(Date.now() / 1_000)))).toBeLessThan(60);
      // Today's closed hours are summed too, and read the same.
      expect(withoutStart(await store.stats(hours(today)))).toEqual(todayHours);
      expect(withoutStart((await store.prefixStats(under(pastDay))).buckets)).toEqual(todayUnder);

      const pastDayRange = { from: new Date(pastDay * DAY_MS), to: new Date((pastDay + 1) * DAY_MS), bucketMs: DAY_MS, prefixDepth: 3 };
      const pastDayRead = await store.stats(pastDayRange);
      expect(sumBuckets(pastDayRead)).toEqual(sumBuckets(await store.stats(hours(today))));
      expect((await readStoreWide(client, buildStoreWideStatsKey(spec.namespace, "d", pastDay))).buckets).toBe("3");

      // The buckets' hashes can go: the store-wide ones answer, for the whole day, part of it and across days.
      await client.del(...pastHours, ...[0, 1, 2].map((b) => buildStatsKey(buildBucketKeys(spec.namespace, b), "d", pastDay)));
      expect(await store.stats(pastDayRange)).toEqual(pastDayRead);
      const pastRead = await store.stats(hours(pastDay));
      expect(pastRead.map((b) => b.start.getTime())).toEqual(Array.from({ length: 24 }, (_, h) => pastDay * DAY_MS + h * HOUR_MS));
      expect(withoutStart(pastRead)).toEqual(todayHours);
      const across = withoutStart(await store.stats(hours(pastDay, 5, 24 + 24 + 7)));
      expect(across).toHaveLength(19 + 24 + 7);
      expect(across.slice(0, 19)).toEqual(todayHours.slice(5));
      expect(sumBuckets(await store.stats(hours(pastDay + 1, 0, 24 + 7))).counts.acquired).toBe(0);
      // Summed by an earlier version, as a hash: read the same.
      const busyKey = buildStoreWideStatsKey(spec.namespace, "h", busy!);
      const busyHashKey = buildStoreWideStatsHashKey(spec.namespace, "h", busy!);
      await client.hset(busyHashKey, await readStoreWide(client, busyKey));
      await client.del(busyKey);
      expect(withoutStart(await store.stats(hours(pastDay)))).toEqual(todayHours);
      // Summed by a store with another bucket count, an hour is read from the buckets (gone here) instead.
      await client.hset(busyHashKey, "buckets", "4");
      const recounted = withoutStart(await store.stats(hours(pastDay)));
      expect(recounted[busy! - pastDay * 24]!.counts.acquired).toBe(0);
      expect(recounted.filter((_, h) => h !== busy! - pastDay * 24)).toEqual(todayHours.filter((_, h) => h !== busy! - pastDay * 24));
    } finally {
      client.disconnect();
    }
  });
});

/** A store-wide sum (a JSON [field, value, …] string) as field → value text, as HGETALL gives a hash. */
async function readStoreWide(client: Redis, key: string): Promise<Record<string, string>> {
  const flat = JSON.parse((await client.get(key)) ?? "[]") as Array<string | number>;
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) fields[String(flat[i])] = String(flat[i + 1]);
  return fields;
}

/** Copies each bucket's non-empty hour hashes of day `from` into the same hours of day `to`; returns the keys written and their hours. */
async function copyDayHours(client: Redis, namespace: string, buckets: number, from: number, to: number): Promise<Array<{ key: string; hour: number }>> {
  const written: Array<{ key: string; hour: number }> = [];
  for (let b = 0; b < buckets; b++) {
    const keys = buildBucketKeys(namespace, b);
    for (let h = 0; h < 24; h++) {
      const hash = await client.hgetall(buildStatsKey(keys, "h", from * 24 + h));
      if (Object.keys(hash).length === 0) continue;
      const key = buildStatsKey(keys, "h", to * 24 + h);
      await client.hset(key, hash);
      written.push({ key, hour: to * 24 + h });
    }
  }
  return written;
}

function sumBuckets(buckets: Awaited<ReturnType<RedisLeaseStore["stats"]>>) {
  const counts: Record<string, number> = {};
  const contendedByPrefix: Record<string, number> = {};
  let holds = 0;
  for (const b of buckets) {
    for (const [k, v] of Object.entries(b.counts)) counts[k] = (counts[k] ?? 0) + v;
    for (const [p, v] of Object.entries(b.contendedByPrefix)) contendedByPrefix[p] = (contendedByPrefix[p] ?? 0) + v;
    holds += b.holdHistogram.reduce((x, y) => x + y, 0);
  }
  return { counts, contendedByPrefix, holds };
}

describe("RedisLeaseStore projection", () => {
  it("derives the read models from the events once: a replayed batch changes nothing, a backlog goes in bounded batches", async () => {
    const { store, spec, fixture } = await openStore({ buckets: 1 });
    const base = `${spec.namespace}:{b0}:`;
    // More events than one batch, left unprojected (nothing here reads a read model until project()).
    const pairs = Math.ceil(PROJECT_BATCH / 2) + 100;
    for (let i = 0; i < pairs; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, pairs - i) }, async (_, j) => {
          const lease = await mustAcquire(store, `p:${(i + j) % 7}:${i + j}`);
          await store.release({ resource: lease.resource, leaseId: lease.leaseId });
        }),
      );
    }
    const held = await mustAcquire(store, "p:held:1");
    await store.acquire({ resource: "p:held:1", owner: "b", task: "t", ttlMs: 1_000 });
    expect(await store.client.exists(`${base}proj`)).toBe(0);
    expect((await store.projectionLag()).lagMs).toBeGreaterThanOrEqual(0);

    const first = await store.project();
    const total = 2 * pairs + 2;
    expect(first).toEqual({ applied: total, isCaughtUp: true });
    expect((await store.projectionLag()).lagMs).toBe(0);
    const snapshot = async () => ({
      acq: await store.client.zrange(`${base}acq`, "0", "-1", "WITHSCORES"),
      names: await store.client.zrange(`${base}names`, "0", "-1"),
      history: await store.client.lrange(`${base}evids:p:held:1`, 0, -1),
      cursor: await store.client.hgetall(`${base}proj`),
      stats: await store.stats({ from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 60_000), bucketMs: 60_000 }),
    });
    const before = await snapshot();
    expect(before.names).toEqual(["p:held:1"]);
    expect(before.history).toHaveLength(2);
    const counted = before.stats.reduce((acc, b) => ({ acquired: acc.acquired + b.counts.acquired, released: acc.released + b.counts.released, contended: acc.contended + b.counts.contended }), { acquired: 0, released: 0, contended: 0 });
    expect(counted).toEqual({ acquired: pairs + 1, released: pairs, contended: 1 });

    // Replaying the first batch (applied after the empty cursor) is refused by the cursor check.
    const firstId = ((await store.client.xrange(`${base}events`, "-", "+", "COUNT", 1)) as [string, string[]][])[0]![0];
    const replayKeys = [`${base}proj`, `${base}totals`, `${base}stats:m:0`, `${base}stats:h:0`, `${base}acq`];
    const replay = await store.client.fcall(LEASE_SCRIPTS.project.functionName, replayKeys.length, ...replayKeys, "", firstId, "", firstId, "3", "ZADD", "5", "1", "p:replayed");
    expect((replay as string[])[0]).toBe("stale");
    // Another projector, and this one again, find nothing left to do.
    const other = fixture.open();
    expect(await other.project()).toEqual({ applied: 0, isCaughtUp: true });
    expect(await store.project()).toEqual({ applied: 0, isCaughtUp: true });
    const after = await snapshot();
    expect({ ...after, cursor: { ...after.cursor, at: "" } }).toEqual({ ...before, cursor: { ...before.cursor, at: "" } });
    await store.release({ resource: "p:held:1", leaseId: held.leaseId });
  });

  it("counts renewals into the rollups from the durable counter, once", async () => {
    const { store } = await openStore({ buckets: 2 });
    const lease = await mustAcquire(store, "renewed:1");
    for (let i = 0; i < 3; i++) await store.renew({ resource: "renewed:1", leaseId: lease.leaseId, ttlMs: 60_000 });
    const range = { from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 3_600_000), bucketMs: 3_600_000 };
    const renewed = async () => (await store.stats(range)).reduce((n, b) => n + b.counts.renewed, 0);
    expect(await renewed()).toBe(3);
    await store.project();
    expect(await renewed()).toBe(3);
    await store.renew({ resource: "renewed:1", leaseId: lease.leaseId, ttlMs: 60_000 });
    expect(await renewed()).toBe(4);
  });
});
