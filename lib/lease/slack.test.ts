import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { LeaseClient } from "./client";
import { LeaseError } from "./errors";
import { adviseTtl, emptyTally, roundUpToSetting, slackBucketIndex, summariseSlack } from "./slack";
import { sleep } from "./testing/isolation";
import { SLACK_BUCKET_COUNT, type LeaseStore, type RenewalSlackRow, type StoreKind } from "./types";

const HOUR_MS = 3_600_000;
const KINDS: readonly StoreKind[] = ["postgres", "redis"];

function histogramWith(entries: Record<number, number>): number[] {
  const h = new Array<number>(SLACK_BUCKET_COUNT).fill(0);
  for (const [i, n] of Object.entries(entries)) h[Number(i)] = n;
  return h;
}

describe("renewal slack: the shared rule", () => {
  it("buckets slack in twentieths of the TTL, clamped to the histogram", () => {
    expect(slackBucketIndex(10_000, 10_000)).toBe(19);
    expect(slackBucketIndex(6_666, 10_000)).toBe(13);
    expect(slackBucketIndex(1_999, 10_000)).toBe(3);
    expect(slackBucketIndex(500, 10_000)).toBe(1);
    expect(slackBucketIndex(-5, 10_000)).toBe(0);
  });

  it("counts close calls below 20 % left", () => {
    const s = summariseSlack([{ group: "a:b", ttlMs: 1_000, histogram: histogramWith({ 0: 1, 3: 2, 4: 5, 13: 10 }) }]);
    expect(s).toMatchObject({ renewals: 18, closeCalls: 3 });
  });

  it("keeps the TTL of on-time renewers and lengthens it for late ones, never shortens", () => {
    const good: RenewalSlackRow[] = [{ group: "a:good", ttlMs: 3_000, histogram: histogramWith({ 12: 40, 13: 60 }) }];
    const keep = adviseTtl("a:good", good, emptyTally());
    expect(keep).toMatchObject({ change: "keep", ttlMs: 3_000, suggestedTtlMs: 3_000, suggestedRenewMs: 1_000, closeCalls: 0 });
    expect(keep.reason).toMatch(/^Keep the TTL/);

    // Renewing at 0.9 × ttl: 10 % left, 1.7 s after ttl/3 → ttl ≥ 1.7 / (1 - 1/3 - 0.2) s.
    const late: RenewalSlackRow[] = [{ group: "a:late", ttlMs: 3_000, histogram: histogramWith({ 2: 50 }) }];
    const lengthen = adviseTtl("a:late", late, emptyTally());
    expect(lengthen.change).toBe("lengthen");
    expect(lengthen.p99LatenessMs).toBe(1_700);
    expect(lengthen.suggestedTtlMs).toBe(roundUpToSetting(1_700 / (1 - 1 / 3 - 0.2)));
    expect(lengthen.suggestedTtlMs!).toBeGreaterThan(3_000);
    expect(lengthen.suggestedRenewMs).toBe(Math.floor(lengthen.suggestedTtlMs! / 3));

    // On-time successes but many refused renewals: the p99 renewal came after expiry.
    const lost = adviseTtl("a:good", good, { ...emptyTally(), renewFailed: 5 });
    expect(lost.change).toBe("lengthen");
    expect(lost.suggestedTtlMs!).toBeGreaterThan(3_000);

    expect(adviseTtl("a:none", [], emptyTally())).toMatchObject({ change: "unknown", suggestedTtlMs: null, ttlMs: null });
  });

  it("rounds suggestions up to two significant digits", () => {
    expect(roundUpToSetting(3_643)).toBe(3_700);
    expect(roundUpToSetting(12_001)).toBe(13_000);
    expect(roundUpToSetting(450)).toBe(450);
  });
});

describe.each(KINDS)("renewal slack and TTL advice on %s", (kind) => {
  let fixture: StoreFixture | undefined;
  afterEach(async () => {
    await fixture?.cleanup();
    fixture = undefined;
  });
  async function open(): Promise<LeaseStore> {
    fixture = await createStoreFixture(kind);
    return fixture.store;
  }
  const ns = () => `s${randomUUID().slice(0, 8)}`;
  const around = () => ({ from: new Date(Date.now() - HOUR_MS), to: new Date(Date.now() + HOUR_MS) });

  it("records each successful renewal's slack per prefix group and TTL, and nothing for a refused one", async () => {
    const store = await open();
    const p = ns();
    const a = await store.acquire({ resource: `${p}:jobs:1`, owner: "w1", task: "t", ttlMs: 60_000 });
    const b = await store.acquire({ resource: `${p}:jobs:2`, owner: "w2", task: "t", ttlMs: 60_000 });
    if (!a.acquired || !b.acquired) throw new Error("setup: acquire failed");
    // Renewed at once: (almost) the whole TTL left.
    for (let i = 0; i < 3; i++) expect((await store.renew({ resource: a.lease.resource, leaseId: a.lease.leaseId, ttlMs: 60_000 })).renewed).toBe(true);
    expect((await store.renew({ resource: b.lease.resource, leaseId: b.lease.leaseId, ttlMs: 30_000 })).renewed).toBe(true);
    // Measured against the TTL the lease had before this renewal (30 s now).
    expect((await store.renew({ resource: b.lease.resource, leaseId: b.lease.leaseId, ttlMs: 30_000 })).renewed).toBe(true);
    expect((await store.renew({ resource: b.lease.resource, leaseId: randomUUID(), ttlMs: 60_000 })).renewed).toBe(false);

    const rows = await store.renewalSlack({ prefix: p, ...around() });
    const byTtl = new Map(rows.map((r) => [r.ttlMs, r]));
    expect(rows.every((r) => r.group === `${p}:jobs`)).toBe(true);
    expect(byTtl.get(60_000)?.histogram).toEqual(histogramWith({ 19: 4 }));
    expect(byTtl.get(30_000)?.histogram).toEqual(histogramWith({ 19: 1 }));
    // Another prefix sees none of it.
    expect(await store.renewalSlack({ prefix: `${p}x`, ...around() })).toEqual([]);
  });

  it("measures slack on the store's clock: a renewal halfway through the TTL lands around the middle", async () => {
    const store = await open();
    const resource = `${ns()}:half:1`;
    const ttlMs = 4_000;
    const sent = performance.now();
    const a = await store.acquire({ resource, owner: "w", task: "t", ttlMs });
    if (!a.acquired) throw new Error("setup: acquire failed");
    await sleep(ttlMs / 2);
    const renewed = await store.renew({ resource, leaseId: a.lease.leaseId, ttlMs });
    const elapsed = performance.now() - sent;
    expect(renewed.renewed).toBe(true);
    const [row] = await store.renewalSlack({ prefix: resource, ...around() });
    const index = row!.histogram.findIndex((n) => n > 0);
    // At least half the TTL had passed on any clock; at most everything between sending the acquire and the renew's reply.
    expect(index).toBeLessThanOrEqual(slackBucketIndex(ttlMs / 2, ttlMs));
    expect(index).toBeGreaterThanOrEqual(slackBucketIndex(ttlMs - elapsed, ttlMs));
    expect(row!.histogram.reduce((x, y) => x + y, 0)).toBe(1);
  });

  it("advises a longer TTL for late renewers and no change for holders that renew at ttl/3", async () => {
    const store = await open();
    const p = ns();
    const ttlMs = 3_000;
    const client = new LeaseClient(store, { owner: "good-worker" });
    // Well-behaved: LeaseClient's own heartbeat (ttl/3 with jitter), holding for about six renewals.
    const good = Array.from({ length: 3 }, (_, i) =>
      client.withLease(`${p}:good:${i}`, () => sleep(6_500), { task: `good-${i}`, ttlMs }),
    );
    // Late: renews only when 90 % of the TTL has passed.
    const late = Array.from({ length: 3 }, async (_, i) => {
      const resource = `${p}:late:${i}`;
      const got = await store.acquire({ resource, owner: "late-worker", task: `late-${i}`, ttlMs });
      if (!got.acquired) throw new Error("setup: acquire failed");
      for (let n = 0; n < 3; n++) {
        await sleep(ttlMs * 0.9);
        const r = await store.renew({ resource, leaseId: got.lease.leaseId, ttlMs });
        if (!r.renewed) return;
      }
      await store.release({ resource, leaseId: got.lease.leaseId });
    });
    await Promise.all([...good, ...late]);

    const lateAdvice = await store.ttlAdvice({ prefix: `${p}:late` });
    expect(lateAdvice.overall.change).toBe("lengthen");
    expect(lateAdvice.overall.ttlMs).toBe(ttlMs);
    expect(lateAdvice.overall.suggestedTtlMs!).toBeGreaterThan(ttlMs);
    expect(lateAdvice.overall.suggestedRenewMs).toBe(Math.floor(lateAdvice.overall.suggestedTtlMs! / 3));
    expect(lateAdvice.overall.closeCalls + lateAdvice.overall.renewalsLost).toBeGreaterThan(0);

    const goodAdvice = await store.ttlAdvice({ prefix: `${p}:good` });
    expect(goodAdvice.overall).toMatchObject({ change: "keep", ttlMs, suggestedTtlMs: ttlMs, renewalsLost: 0, released: 3, expired: 0 });
    expect(goodAdvice.overall.renewals).toBeGreaterThanOrEqual(3 * 4);
    expect(goodAdvice.overall.p99HoldMs!).toBeGreaterThan(0);

    // One report for the namespace: a row per group, each with its own advice.
    const all = await store.ttlAdvice({ prefix: p });
    const groups = new Map(all.groups.map((g) => [g.prefix, g.change]));
    expect(groups).toEqual(new Map([[`${p}:good`, "keep"], [`${p}:late`, "lengthen"]]));
    expect(all.isPartial).toBe(false);
  });

  it("refuses a bad advice window before reading", async () => {
    const store = await open();
    await expect(store.ttlAdvice({ from: new Date(0), to: new Date(8 * 24 * HOUR_MS) })).rejects.toThrow(LeaseError);
    await expect(store.ttlAdvice({ prefix: "" })).rejects.toThrow(LeaseError);
    await expect(store.renewalSlack({ from: new Date(10), to: new Date(5) })).rejects.toThrow(/to must be after from/);
  });
});
