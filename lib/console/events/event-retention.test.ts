import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostgresLeaseStore, RedisLeaseStore } from "@leasewatch/lease";
import { buildBucketKeys } from "@leasewatch/lease/internal";
import { TEST_DATABASE_URL, writePastEvents } from "@leasewatch/lease/testing";
import { setUpStoreFixture } from "@/test/support/store-suite";
import { getOverview } from "@/lib/console/overview/get-overview";
import { listEvents } from "./list-events";
import { parseEventsParams, parseOverviewParams } from "@/lib/console/shared/params";

/**
 * Retention on Postgres drops whole days of raw events (partitions); the overview reads the
 * rollups, so every chart and total over windows the rollups cover is the same after a drop.
 * The events page says which stores no longer keep a window's older events.
 */
const DAY_MS = 86_400_000;

describe("event retention in the console", () => {
  const fixture = setUpStoreFixture("postgres", { name: "pg-keep" });
  const raw = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
  raw.on("error", () => {});
  let keeper: PostgresLeaseStore;
  let retaining: PostgresLeaseStore;
  // The history is seeded by whole days before t0; the console is read at nowMs, taken once the seeding is done
  // so the live leases fall inside every window even when the seeding crosses a bucket's end or midnight.
  const t0 = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  let nowMs = 0;
  // Where retention cut the history: two whole days before the day maintenance ran, which is t0's day or,
  // when the run crosses midnight, the next.
  let droppedUntil = 0;

  beforeAll(async () => {
    keeper = fixture.store;
    retaining = fixture.open({ options: { eventRetentionDays: 2 } });
    // Five days of history at 00:30..23:30 UTC, contended across two prefixes, with holds of different lengths.
    await raw.query(
      `INSERT INTO "${fixture.spec.schema}".lease_events (at, kind, resource, lease_id, owner, task, fencing_token, hold_ms, detail)
       SELECT $1::timestamptz + d * interval '1 day' + h * interval '1 hour' + interval '30 minutes' + k.off * interval '1 second', k.kind,
              (CASE WHEN h % 3 = 0 THEN 'billing:close:' ELSE 'etl:load:' END) || h, md5(d || ':' || h)::uuid, 'w', 't', d * 100 + h,
              CASE WHEN k.kind IN ('released', 'expired') THEN 1000 * (h + 1) END,
              CASE WHEN k.kind IN ('released', 'expired') THEN jsonb_build_object('renewals', h % 4) END
       FROM generate_series(-5, -1) AS d, generate_series(0, 23) AS h,
            (VALUES ('acquired', 0), ('contended', 1), (CASE WHEN random() < 0.5 THEN 'released' ELSE 'expired' END, 2)) AS k(kind, off)`,
      [new Date(t0)],
    );
    for (let i = 0; i < 4; i++) {
      const got = await keeper.acquire({ resource: `billing:close:live${i}`, owner: "o", task: "t", ttlMs: 60_000 });
      await keeper.acquire({ resource: `billing:close:live${i}`, owner: "p", task: "t", ttlMs: 60_000 });
      if (got.acquired && i % 2 === 0) await keeper.release({ resource: `billing:close:live${i}`, leaseId: got.lease.leaseId });
    }
    await keeper.maintainPartitions();
    await keeper.refreshRollups({ since: new Date(t0 - 6 * DAY_MS) });
    nowMs = Date.now();
  }, 60_000);

  afterAll(async () => {
    await raw.end();
  });

  async function overviews() {
    const out: Record<string, unknown> = {};
    for (const search of [{ window: "1h" }, { window: "24h" }, { window: "7d" }, { from: new Date(nowMs - 14 * DAY_MS).toISOString(), to: new Date(nowMs).toISOString() }]) {
      const parsed = parseOverviewParams(search, nowMs);
      if (!parsed.ok) throw new Error(parsed.problem.message);
      const result = await getOverview(parsed.params, { entries: [{ store: retaining }], nowMs, reuseClosedBuckets: false });
      if (!result.ok) throw new Error(result.problem.message);
      const { total, points, histogram, topPrefixes, topResources } = result.view;
      // topResources' links are checked against each resource's history, which retention removes: compare the counts.
      out[search.window ?? "14d"] = { total, points, histogram, topPrefixes, topResources: topResources.map((r) => [r.resource, r.contended, r.trend]) };
    }
    return out;
  }

  it("shows the same overview totals, charts and tables for 1h, 24h, 7d and 14d after old days are dropped", async () => {
    const before = await overviews();
    expect((before["7d"] as { total: { acquired: number } }).total.acquired).toBe(5 * 24 + 4);
    const upkeep = await retaining.maintainPartitions();
    droppedUntil = upkeep.droppedUntil?.getTime() ?? 0;
    expect([t0 - 2 * DAY_MS, t0 - DAY_MS]).toContain(droppedUntil);
    // Seeded days start at t0 - 5 days: three are dropped, or four if maintenance ran on the day after t0.
    expect(upkeep.dropped).toHaveLength((droppedUntil - (t0 - 5 * DAY_MS)) / DAY_MS);
    expect(Number((await raw.query(`SELECT count(*) AS n FROM "${fixture.spec.schema}".lease_events WHERE at < $1`, [new Date(droppedUntil)])).rows[0].n)).toBe(0);
    expect(await overviews()).toEqual(before);
  });

  it("says on the events page which store no longer keeps the window's older events, and only when the window reaches them", async () => {
    const old = parseEventsParams({ window: "7d" }, nowMs);
    if (!old.ok) throw new Error(old.problem.message);
    const cut = await listEvents(old.params, { entries: [{ store: retaining }], nowMs });
    if (!cut.ok) throw new Error(cut.problem.message);
    expect(cut.view.retention).toEqual([{ store: "pg-keep", retentionDays: 2, retainedFrom: new Date(droppedUntil).toISOString(), isWindowCut: true }]);
    expect(cut.view.items.length).toBeGreaterThan(0);
    expect(cut.view.items.every((e) => Date.parse(e.at) >= droppedUntil)).toBe(true);

    const recent = parseEventsParams({ window: "24h" }, nowMs);
    if (!recent.ok) throw new Error(recent.problem.message);
    const whole = await listEvents(recent.params, { entries: [{ store: retaining }], nowMs });
    if (!whole.ok) throw new Error(whole.problem.message);
    expect(whole.view.retention).toEqual([{ store: "pg-keep", retentionDays: 2, retainedFrom: new Date(droppedUntil).toISOString(), isWindowCut: false }]);
  });
});

describe("Redis event retention in the console", () => {
  const fixture = setUpStoreFixture("redis", { name: "redis-keep", options: { buckets: 1, eventRetentionDays: 2 } });
  let store: RedisLeaseStore;
  const nowMs = Date.now();

  beforeAll(async () => {
    store = fixture.store;
    // Events each hour of the last five days, then the sweep that trims those past two days.
    const hours = Array.from({ length: 5 * 24 }, (_, i) => nowMs - 5 * DAY_MS + i * 3_600_000);
    await writePastEvents(store.client, buildBucketKeys(fixture.spec.namespace, 0).events, hours);
    await store.sweep();
  });

  it("says on the events page that the Redis store no longer keeps the window's older events, and only when the window reaches them", async () => {
    const old = parseEventsParams({ window: "7d" }, nowMs);
    if (!old.ok) throw new Error(old.problem.message);
    const cut = await listEvents(old.params, { entries: [{ store }], nowMs });
    if (!cut.ok) throw new Error(cut.problem.message);
    expect(cut.view.retention).toHaveLength(1);
    const note = cut.view.retention[0]!;
    expect(note).toMatchObject({ store: "redis-keep", retentionDays: 2, isWindowCut: true });
    // The oldest kept event is the first of the hours within the last two days.
    expect(Date.parse(note.retainedFrom!)).toBeGreaterThanOrEqual(nowMs - 2 * DAY_MS);
    expect(Date.parse(note.retainedFrom!)).toBeLessThanOrEqual(nowMs - 2 * DAY_MS + 3_600_000);
    expect(cut.view.items.every((e) => Date.parse(e.at) >= nowMs - 2 * DAY_MS)).toBe(true);

    const recent = parseEventsParams({ window: "24h" }, nowMs);
    if (!recent.ok) throw new Error(recent.problem.message);
    const whole = await listEvents(recent.params, { entries: [{ store }], nowMs });
    if (!whole.ok) throw new Error(whole.problem.message);
    expect(whole.view.retention).toEqual([{ ...note, isWindowCut: false }]);
  });
});
