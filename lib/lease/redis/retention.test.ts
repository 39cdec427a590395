import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createStoreFixture, type StoreFixture, type StoreOptions } from "@/test/support/stores";
import { TEST_REDIS_URL } from "../testing/isolation";
import { writePastEvents } from "../testing/redis-past-events";
import { streamEntryToRaw } from "./codec";
import { buildBucketKeys, buildKindStreamKey } from "./keys";
import { KIND_STREAM_KINDS } from "./projector";
import { trimEventStreams } from "./retention";
import type { RedisLeaseStore } from "./store";

/**
 * Retention of the Redis event streams, on the shared Redis, each test in a namespace of its own
 * with one bucket (so "the stream" is one key), with events from the past (redis-past-events.ts).
 */

const DAY_MS = 86_400_000;
const opened: StoreFixture<"redis">[] = [];
let redis: Redis;

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL);
});

afterAll(async () => {
  await redis.quit();
});

afterEach(async () => {
  for (const fixture of opened.splice(0)) await fixture.cleanup();
});

async function openStore(options: StoreOptions<"redis"> = {}) {
  const fixture = await createStoreFixture("redis", { name: "redis-retention", options: { buckets: 1, ...options } });
  opened.push(fixture);
  return { store: fixture.store, stream: buildBucketKeys(fixture.spec.namespace, 0).events, spec: fixture.spec };
}

async function grantAndRelease(store: RedisLeaseStore, count: number, prefix = "now"): Promise<void> {
  for (let i = 0; i < count; i++) {
    const result = await store.acquire({ resource: `${prefix}:${i}`, owner: "owner-b", task: "task-2", ttlMs: 60_000 });
    if (!result.acquired) throw new Error(`expected to acquire ${prefix}:${i}`);
    await store.release({ resource: `${prefix}:${i}`, leaseId: result.lease.leaseId });
  }
}

async function trimUntilDone(store: RedisLeaseStore): Promise<number> {
  let trimmed = 0;
  for (let run = 0; run < 100; run++) {
    const result = await store.trimEvents();
    trimmed += result.trimmed;
    if (result.isDone) return trimmed;
  }
  throw new Error("retention did not finish in 100 runs");
}

/** Exact memory of the streams (every node counted, not sampled). */
async function streamBytes(keys: string[]): Promise<number> {
  let total = 0;
  for (const key of keys) total += Number((await redis.call("MEMORY", "USAGE", key, "SAMPLES", "0")) ?? 0);
  return total;
}

describe("Redis event retention in days", () => {
  it("trims the events older than the configured days from the bucket and per-kind streams, and nothing newer", async () => {
    const { store, stream, spec } = await openStore({ eventRetentionDays: 3 });
    const now = Date.now();
    // 150 old pairs (10 to 4 days back, more than one stream node), 40 pairs 2 days back.
    const old = Array.from({ length: 150 }, (_, i) => now - 10 * DAY_MS + i * 3_600_000);
    const recent = Array.from({ length: 40 }, (_, i) => now - 2 * DAY_MS + i * 60_000);
    await writePastEvents(redis, stream, [...old, ...recent], "expired");
    await grantAndRelease(store, 10);
    const expiredStream = buildKindStreamKey(buildBucketKeys(spec.namespace, 0), "expired");

    expect(await store.eventRetention()).toEqual({ retentionDays: 3, retainedFrom: null });
    const totalsBefore = await store.lifetimeTotals();
    expect(await redis.xlen(expiredStream)).toBe(190);

    expect(await trimUntilDone(store)).toBe(2 * 150 + 150);

    const kept = await redis.xrange(stream, "-", "+");
    expect(kept.length).toBe(2 * 40 + 2 * 10);
    expect(kept.every(([id]) => Number(id.split("-")[0]) >= now - 3 * DAY_MS)).toBe(true);
    expect(await redis.xlen(expiredStream)).toBe(40);
    // Trimmed events had been counted: the lifetime totals do not move.
    expect(await store.lifetimeTotals()).toEqual(totalsBefore);
    // The console's notice: the stream is complete from its oldest retained event on; those are still read.
    const retention = await store.eventRetention();
    expect(retention.retentionDays).toBe(3);
    expect(retention.retainedFrom?.getTime()).toBe(recent[0]);
    const page = await store.events({ from: new Date(now - 5 * DAY_MS), limit: 500 });
    expect(page.items.length).toBe(2 * 40 + 2 * 10);
  });

  it("leaves the streams alone without a retention configured", async () => {
    const { store, stream } = await openStore();
    const now = Date.now();
    await writePastEvents(redis, stream, Array.from({ length: 20 }, (_, i) => now - 400 * DAY_MS + i));
    await grantAndRelease(store, 5);
    expect(await store.trimEvents()).toEqual({ trimmed: 0, isDone: true });
    expect(await redis.xlen(stream)).toBe(50);
    expect(await store.eventRetention()).toEqual({ retentionDays: null, retainedFrom: null });
  });
});

describe("Redis event retention by memory", () => {
  it("brings the event streams under the memory budget, keeping the newest events", async () => {
    const { store, stream, spec } = await openStore({ eventRetentionMaxMb: 1 });
    const keys = buildBucketKeys(spec.namespace, 0);
    const allStreams = [stream, ...KIND_STREAM_KINDS.map((kind) => buildKindStreamKey(keys, kind))];
    const now = Date.now();
    // About 3 MB of events over the last day.
    await writePastEvents(redis, stream, Array.from({ length: 6_000 }, (_, i) => now - DAY_MS + i * 10), "expired");
    await grantAndRelease(store, 5);
    while (!(await store.project()).isCaughtUp);
    const totalsBefore = await store.lifetimeTotals();
    const bytesBefore = await streamBytes(allStreams);
    expect(bytesBefore).toBeGreaterThan(2 * 1024 * 1024);

    await trimUntilDone(store);

    const bytesAfter = await streamBytes(allStreams);
    expect(bytesAfter).toBeLessThanOrEqual(1024 * 1024);
    // Only what the budget asked for went: well over half the budget is still used.
    expect(bytesAfter).toBeGreaterThan(0.5 * 1024 * 1024);
    const newest = await redis.xrevrange(stream, "+", "-", "COUNT", 10);
    expect(newest.map((entry) => streamEntryToRaw(entry).resource)).toEqual(
      ["now:4", "now:4", "now:3", "now:3", "now:2", "now:2", "now:1", "now:1", "now:0", "now:0"],
    );
    expect(await store.lifetimeTotals()).toEqual(totalsBefore);
    expect((await store.eventRetention()).retainedFrom).not.toBeNull();
  });

  it("never trims events the projector has not applied yet", async () => {
    const { store, stream, spec } = await openStore();
    const now = Date.now();
    await writePastEvents(redis, stream, Array.from({ length: 100 }, (_, i) => now - DAY_MS + i));
    while (!(await store.project()).isCaughtUp);
    // Written after the last projection: the cursor is behind them.
    await grantAndRelease(store, 10, "unprojected");
    const keys = buildBucketKeys(spec.namespace, 0);
    const ctx = { client: store.client, storeName: "redis-retention", lastConnectionError: () => undefined };

    // A budget of one byte: everything projected may go, nothing else.
    await trimEventStreams(ctx, [keys], { days: null, maxBytes: 1 });

    const left = await redis.xrange(stream, "-", "+");
    const unprojected = left.filter((entry) => streamEntryToRaw(entry).resource!.startsWith("unprojected:"));
    expect(unprojected.length).toBe(20);
    // Only the cursor's own entry is left of the projected ones.
    expect(left.length).toBe(21);
    const totals = await store.lifetimeTotals();
    expect(totals.holdHistogram.reduce((a, b) => a + b, 0)).toBe(100 + 10);
    expect(totals.counts.acquired).toBe(10);
  });
});
