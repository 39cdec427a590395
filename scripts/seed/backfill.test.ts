import { randomUUID } from "node:crypto";
import { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareFencingTokens, LEASE_EVENT_KINDS, type LeaseEvent, type LeaseEventKind, type LeaseStore } from "@leasewatch/lease";
import { findHistoryViolations } from "@leasewatch/lease/testing";
import type { TStoreConfig } from "@/lib/server/store-config";
import { collectEvents, countKinds, createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { backfillHistory, type BackfillResult } from "./backfill";
import type { SyntheticEvent } from "./history";
import { writePostgresEvents } from "./pg-seed";

describe.each(["postgres", "redis"] as const)("backfillHistory into a real %s store", (kind) => {
  let fixture: StoreFixture | undefined;
  let store: LeaseStore;
  let config: TStoreConfig;
  let first: BackfillResult;
  let events: LeaseEvent[];
  const startedAt = Date.now();

  beforeAll(async () => {
    fixture = await createStoreFixture(kind);
    store = fixture.store;
    config = fixture.spec;
    first = await backfillHistory({ store, config, hours: 1, seed: 11, eventsPerSecond: 2 });
    events = await collectEvents(store);
  }, 60_000);

  afterAll(async () => {
    await fixture?.cleanup();
  });

  it("writes about an hour of history, all of it in the past", () => {
    expect(first.skipped).toBeUndefined();
    // Fewer at night (UTC): the history follows a daily rhythm.
    expect(first.events).toBeGreaterThan(2_000);
    expect(events.length).toBe(first.events);
    const times = events.map((e) => e.at.getTime());
    expect(Math.min(...times)).toBeGreaterThanOrEqual(startedAt - 3_600_000 - 60_000);
    expect(Math.max(...times)).toBeLessThanOrEqual(Date.now());
  });

  it("obeys every invariant the live store keeps, read back from the store", async () => {
    // Store order (ids), as the console and the fault tests read it: no overlapping holders, tokens
    // increasing per resource, one end per acquire with a consistent holdMs, conservation, and
    // fencing rejections citing this store's own tokens.
    const stored = await collectEvents(store);
    expect(stored.length).toBe(first.events);
    expect(findHistoryViolations(stored)).toEqual([]);
  });

  it("tells the same stories as the live workload, and every hold ended", () => {
    const kinds = countKinds(events);
    for (const k of ["acquired", "released", "expired", "contended", "renew_failed", "lost", "fencing_rejected"] as const) {
      expect(kinds[k], k).toBeGreaterThan(0);
    }
    expect(kinds.acquired).toBe(kinds.released + kinds.expired + kinds.force_released);
  });

  it("the store's own stats (rollups) agree with its events", async () => {
    const buckets = await store.stats({ from: new Date(startedAt - 3_700_000), to: new Date(Date.now() + 60_000), bucketMs: 60_000, prefixDepth: 2 });
    const kinds = countKinds(events);
    const total = (k: LeaseEventKind) => buckets.reduce((sum, b) => sum + b.counts[k], 0);
    for (const k of LEASE_EVENT_KINDS) expect(total(k), k).toBe(kinds[k]);
    const histogram = buckets.reduce((sum, b) => sum + b.holdHistogram.reduce((a, n) => a + n, 0), 0);
    expect(histogram).toBe(kinds.released + kinds.expired + kinds.force_released);
    const prefixes = new Set(buckets.flatMap((b) => Object.keys(b.contendedByPrefix)));
    expect([...prefixes].some((p) => p.startsWith("queue:emails") || p === "cron:nightly-report" || p === "migrations:schema-v42")).toBe(true);
  });

  it("a second run adds nothing (history is only appended after what the store has)", async () => {
    const again = await backfillHistory({ store, config, hours: 1, seed: 12, eventsPerSecond: 2 });
    expect(again.events).toBe(0);
    expect(again.skipped).toMatch(/recent history/);
    expect((await collectEvents(store)).length).toBe(events.length);
  });

  it("live leases after the backfill get higher fencing tokens than any backfilled hold of that resource", async () => {
    const resource = "cron:nightly-report";
    const past = events.filter((e) => e.resource === resource && e.kind === "acquired");
    expect(past.length).toBeGreaterThan(0);
    const result = await store.acquire({ resource, owner: "worker-1@test-0000", task: "run-1", ttlMs: 5_000 });
    expect(result.acquired).toBe(true);
    if (!result.acquired) return;
    for (const e of past) expect(compareFencingTokens(result.lease.fencingToken, e.fencingToken!)).toBe(1);
    await store.release({ resource, leaseId: result.lease.leaseId });
  });
});

describe("the Postgres writer refuses an impossible history", () => {
  it("writes nothing when two holds of one resource overlap", async () => {
    const { spec, store, cleanup } = await createStoreFixture("postgres");
    if (spec.kind !== "postgres") throw new Error("expected a postgres spec");
    const pool = new Pool({ connectionString: spec.url, max: 1 });
    pool.on("error", () => {});
    try {
      const at = Date.now() - 60_000;
      const hold = (owner: string, start: number, holdMs: number, index: number): SyntheticEvent[] => {
        const base = { resource: "reindex:search:cluster-2", leaseId: randomUUID(), owner, task: "run-1", fencingToken: String(index) };
        return [
          { ...base, at: start, kind: "acquired" },
          { ...base, at: start + holdMs, kind: "released", holdMs },
        ];
      };
      // worker-19 takes the resource 21 s into worker-8's 4.5-minute hold: the history the demo once showed.
      const [a1, r1] = hold("worker-8@mailer-8621", at - 273_000, 273_000, 0);
      const [a2, r2] = hold("worker-19@scheduler-ca1b", at - 252_000, 167_000, 1);
      const overlapped = [a1!, a2!, r2!, r1!];
      await expect(writePostgresEvents(pool, spec.schema, overlapped, { validate: true })).rejects.toThrow(/overlapping worker-19@scheduler-ca1b/);
      expect((await store.events({ limit: 10 })).items).toEqual([]);
      // The same two holds one after the other are written.
      const sequential = [...hold("worker-8@mailer-8621", at - 273_000, 100_000, 0), ...hold("worker-19@scheduler-ca1b", at - 150_000, 100_000, 1)];
      expect(await writePostgresEvents(pool, spec.schema, sequential, { validate: true })).toBe(4);
      expect(findHistoryViolations(await collectEvents(store))).toEqual([]);
    } finally {
      await pool.end();
      await cleanup();
    }
  });
});
