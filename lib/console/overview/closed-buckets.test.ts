/**
 * Reusing closed stats buckets, against a real Redis store in its own namespace.
 * The console clock (`nowMs`) is pinned so "closed" is decided without waiting.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RedisLeaseStore, StatsBucket } from "@leasewatch/lease";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { createClosedBucketCache } from "./closed-buckets";

const MINUTE = 60_000;
/**
 * Ten minutes back from `now` up to the end of the next minute: the acquires come after
 * `now` was read, and a minute boundary may pass in between; they must still be inside.
 */
const windowAround = (now: number) => ({
  from: new Date(now - 10 * MINUTE),
  to: new Date((Math.floor(now / MINUTE) + 2) * MINUTE),
  bucketMs: MINUTE,
  prefixDepth: 3,
});
const acquiredIn = (buckets: StatsBucket[]) => buckets.reduce((n, b) => n + b.counts.acquired, 0);

let fixture: StoreFixture<"redis">;
let store: RedisLeaseStore;

beforeEach(async () => {
  fixture = await createStoreFixture("redis", { name: "redis-cb" });
  store = fixture.store;
});

afterEach(async () => {
  await fixture.cleanup();
});

async function acquireSome(n: number, tag: string): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await store.acquire({ resource: `cb:${tag}:${i}`, owner: "w", task: "t", ttlMs: 60_000 });
    if (!r.acquired) throw new Error("expected to acquire");
  }
}

describe("createClosedBucketCache", () => {
  it("answers like stats(), and re-reads buckets that are still open", async () => {
    const cache = createClosedBucketCache({ settleMs: 2 * MINUTE, ttlMs: 10 * MINUTE });
    const now = Date.now();
    const query = windowAround(now);
    await acquireSome(2, "a");
    const first = await cache.readStats(store, query, now);
    expect(first.map((b) => b.start.getTime())).toEqual((await store.stats(query)).map((b) => b.start.getTime()));
    expect(acquiredIn(first)).toBe(2);

    // The current minute is open: new acquires show on the next read.
    await acquireSome(3, "b");
    expect(acquiredIn(await cache.readStats(store, query, now))).toBe(5);
  });

  it("serves closed buckets from memory until they expire, per store object", async () => {
    const cache = createClosedBucketCache({ settleMs: 2 * MINUTE, ttlMs: 10 * MINUTE });
    const now = Date.now();
    const query = windowAround(now);
    // A console clock an hour ahead: every bucket of the window counts as closed.
    const later = now + 60 * MINUTE;
    await acquireSome(2, "a");
    expect(acquiredIn(await cache.readStats(store, query, later))).toBe(2);

    await acquireSome(3, "b");
    // Remembered: the store is not asked again for closed buckets.
    expect(acquiredIn(await cache.readStats(store, query, later))).toBe(2);
    // Another store object (same name, same data) has its own memory.
    const twin = fixture.open();
    try {
      expect(acquiredIn(await cache.readStats(twin, query, later))).toBe(5);
    } finally {
      await twin.close();
    }
    // Past the ttl, the buckets are read again.
    expect(acquiredIn(await cache.readStats(store, query, later + 11 * MINUTE))).toBe(5);
  });

  it("keeps depths apart and joins remembered and fresh buckets without gaps", async () => {
    const cache = createClosedBucketCache({ settleMs: 2 * MINUTE, ttlMs: 10 * MINUTE });
    const now = Date.now();
    await acquireSome(1, "x");
    const early = { from: new Date(now - 30 * MINUTE), to: new Date(now - 5 * MINUTE), bucketMs: MINUTE, prefixDepth: 3 };
    await cache.readStats(store, early, now);
    const whole = { ...early, to: windowAround(now).to };
    const joined = await cache.readStats(store, whole, now);
    const direct = await store.stats(whole);
    expect(joined.map((b) => b.start.getTime())).toEqual(direct.map((b) => b.start.getTime()));
    expect(acquiredIn(direct)).toBe(1);
    expect(acquiredIn(joined)).toBe(1);

    const shallow = await cache.readStats(store, { ...whole, prefixDepth: 1 }, now);
    expect(shallow.flatMap((b) => Object.keys(b.contendedByPrefix)).every((p) => !p.includes(":"))).toBe(true);
  });
});
