import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LeaseStore, PostgresLeaseStore, RedisLeaseStore } from "@leasewatch/lease";
import { buildBucketKeys } from "@leasewatch/lease/internal";
import { TEST_DATABASE_URL, writePastEvents } from "@leasewatch/lease/testing";
import { setUpStoreFixture } from "@/test/support/store-suite";
import { getOverview, overviewReadKey, readTotalsOnly } from "./get-overview";
import { parseOverviewParams } from "@/lib/console/shared/params";

/**
 * A custom overview range past 7 days is read in day buckets, so it is widened to the whole
 * UTC days it touches: its totals are exactly the events of those days — those between the
 * asked edges and the midnights around them included, and said so — never a part of a day.
 */
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
// Asked: from 10:30 twelve days ago to 09:15 three days ago; counted: those whole days.
const asked = { from: new Date(today - 12 * DAY_MS + 10.5 * HOUR_MS), to: new Date(today - 3 * DAY_MS + 9.25 * HOUR_MS) };
const counted = { from: today - 12 * DAY_MS, to: today - 2 * DAY_MS };
const previous = { from: counted.from - (counted.to - counted.from), to: counted.from };

async function readCustom(store: LeaseStore) {
  const nowMs = Date.now();
  const parsed = parseOverviewParams({ window: "custom", from: asked.from.toISOString(), to: asked.to.toISOString() }, nowMs);
  if (!parsed.ok) throw new Error(parsed.problem.message);
  const result = await getOverview(parsed.params, { entries: [{ store }], nowMs, reuseClosedBuckets: false });
  if (!result.ok) throw new Error(result.problem.message);
  return result.view;
}

function expectWholeDays(view: Awaited<ReturnType<typeof readCustom>>) {
  expect(view.bucketMs).toBe(DAY_MS);
  expect({ from: view.from, to: view.to }).toEqual({ from: new Date(counted.from).toISOString(), to: new Date(counted.to).toISOString() });
  expect(view.requested).toEqual({ from: asked.from.toISOString(), to: asked.to.toISOString() });
  expect(view.points.map((p) => p.t)).toEqual(Array.from({ length: 10 }, (_, i) => counted.from + i * DAY_MS));
}

describe("overview of a custom range past 7 days on Postgres", () => {
  const fixture = setUpStoreFixture("postgres", { name: "pg-days" });
  const raw = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
  raw.on("error", () => {});
  let store: PostgresLeaseStore;

  beforeAll(async () => {
    store = fixture.store;
    // Thirty days of history, an acquire, a failed acquire and an end every 45 minutes (so the
    // asked edges fall between events), on two prefixes; then the store's own rollup refresh.
    await raw.query(
      `INSERT INTO "${fixture.spec.schema}".lease_events (at, kind, resource, lease_id, owner, task, fencing_token, hold_ms)
       SELECT $1::timestamptz + i * interval '45 minutes' + k.off * interval '1 second', k.kind,
              (CASE WHEN i % 3 = 0 THEN 'billing:close:' ELSE 'etl:load:' END) || (i % 7), md5(i::text)::uuid, 'w', 't', i,
              CASE WHEN k.kind IN ('released', 'expired') THEN 1000 * (i % 50 + 1) END
       FROM generate_series(0, 30 * 32 - 1) AS i
       CROSS JOIN LATERAL (VALUES ('acquired', 0), ('contended', 1), (CASE WHEN i % 4 = 0 THEN 'expired' ELSE 'released' END, 2)) AS k(kind, off)`,
      [new Date(today - 30 * DAY_MS)],
    );
    await store.maintainPartitions();
    await store.refreshRollups({ since: new Date(today - 31 * DAY_MS) });
  }, 60_000);

  afterAll(async () => {
    await raw.end();
  });

  async function countEvents(fromMs: number, toMs: number, where = "true"): Promise<Record<string, number>> {
    const { rows } = await raw.query<{ kind: string; n: string }>(
      `SELECT kind, count(*) AS n FROM "${fixture.spec.schema}".lease_events WHERE at >= $1 AND at < $2 AND ${where} GROUP BY kind`,
      [new Date(fromMs), new Date(toMs)],
    );
    return Object.fromEntries(rows.map((r) => [r.kind, Number(r.n)]));
  }

  it("counts exactly the events of the whole UTC days the range touches, and compares with as many days before", async () => {
    const view = await readCustom(store);
    expectWholeDays(view);
    const events = await countEvents(counted.from, counted.to);
    const asAsked = await countEvents(asked.from.getTime(), asked.to.getTime());
    // The widening is visible in the numbers: the asked range alone has fewer.
    expect(asAsked.acquired).toBeLessThan(events.acquired!);
    expect(view.total).toMatchObject({ acquired: events.acquired, contended: events.contended, released: events.released, expired: events.expired });
    expect(view.points.reduce((sum, p) => sum + p.acquired, 0)).toBe(events.acquired);
    expect(view.histogram.reduce((sum, b) => sum + b.count, 0)).toBe(events.released! + events.expired!);
    // The previous window: the ten whole days before, per prefix.
    for (const row of view.topPrefixes) {
      const before = await countEvents(previous.from, previous.to, `kind = 'contended' AND (resource = '${row.prefix}' OR resource LIKE '${row.prefix}:%')`);
      const now = await countEvents(counted.from, counted.to, `kind = 'contended' AND (resource = '${row.prefix}' OR resource LIKE '${row.prefix}:%')`);
      expect({ prefix: row.prefix, contended: row.contended, previous: row.trend.previous }).toEqual({ prefix: row.prefix, contended: now.contended, previous: before.contended });
    }
    expect(view.topPrefixes.map((r) => r.prefix).sort()).toEqual(["billing:close", "etl:load"]);
  });

  it("compares a 7-day window with the week before it, read as whole days and its edge hours", async () => {
    const nowMs = Date.now();
    const parsed = parseOverviewParams({ window: "7d" }, nowMs);
    if (!parsed.ok) throw new Error(parsed.problem.message);
    const result = await getOverview(parsed.params, { entries: [{ store }], nowMs, reuseClosedBuckets: false });
    if (!result.ok) throw new Error(result.problem.message);
    const axis0 = result.view.points[0]!.t;
    const span = result.view.points.length * HOUR_MS;
    const like = (prefix: string) => `kind = 'contended' AND (resource = '${prefix}' OR resource LIKE '${prefix}:%')`;
    for (const row of result.view.topPrefixes) {
      const before = await countEvents(axis0 - span, axis0, like(row.prefix));
      expect({ prefix: row.prefix, previous: row.trend.previous }).toEqual({ prefix: row.prefix, previous: before.contended });
    }
    for (const row of result.view.topResources) {
      const before = await countEvents(axis0 - span, axis0, `kind = 'contended' AND resource = '${row.resource}'`);
      expect({ resource: row.resource, previous: row.trend.previous }).toEqual({ resource: row.resource, previous: before.contended ?? 0 });
    }
    expect(result.view.topResources.length).toBeGreaterThan(0);
  });
});

describe("reading a window only summed", () => {
  it("reads its whole UTC days as day buckets and only its edge hours in hours", async () => {
    const asked: Array<[string, string, number]> = [];
    const read = async (q: { from: Date; to: Date; bucketMs: number }) => {
      asked.push([q.from.toISOString(), q.to.toISOString(), q.bucketMs]);
      return [];
    };
    await readTotalsOnly(read, { from: new Date("2026-03-10T05:00Z"), to: new Date("2026-03-17T06:00Z"), bucketMs: HOUR_MS, prefixDepth: 3 });
    expect(asked).toEqual([
      ["2026-03-10T05:00:00.000Z", "2026-03-11T00:00:00.000Z", HOUR_MS],
      ["2026-03-11T00:00:00.000Z", "2026-03-17T00:00:00.000Z", DAY_MS],
      ["2026-03-17T00:00:00.000Z", "2026-03-17T06:00:00.000Z", HOUR_MS],
    ]);
    // Too short to hold two whole days, or already in days: read as asked.
    asked.length = 0;
    await readTotalsOnly(read, { from: new Date("2026-03-10T05:00Z"), to: new Date("2026-03-12T06:00Z"), bucketMs: HOUR_MS, prefixDepth: 3 });
    await readTotalsOnly(read, { from: new Date("2026-03-01T00:00Z"), to: new Date("2026-03-17T00:00Z"), bucketMs: DAY_MS, prefixDepth: 3 });
    expect(asked.map((a) => a[2])).toEqual([HOUR_MS, DAY_MS]);
  });
});

describe("overview of a custom range past 7 days on Redis", () => {
  const fixture = setUpStoreFixture("redis", { name: "redis-days", options: { buckets: 1 } });
  let store: RedisLeaseStore;
  // An acquire and a release every 45 minutes over thirty days, as real events of the store.
  const instants = Array.from({ length: 30 * 32 }, (_, i) => today - 30 * DAY_MS + i * 45 * 60_000);

  beforeAll(async () => {
    store = fixture.store;
    await writePastEvents(store.client, buildBucketKeys(fixture.spec.namespace, 0).events, instants);
    // The store's projector derives the hour counters from the stream; closed days become day hashes.
    while (!(await store.project()).isCaughtUp);
    for (let calls = 0; calls < 20 && (await store.compactDayStats()).pending > 0; calls++);
  }, 60_000);

  it("counts exactly the events of the whole UTC days the range touches", async () => {
    const view = await readCustom(store);
    expectWholeDays(view);
    const inDays = instants.filter((t) => t >= counted.from && t < counted.to).length;
    const asAsked = instants.filter((t) => t >= asked.from.getTime() && t < asked.to.getTime()).length;
    expect(asAsked).toBeLessThan(inDays);
    expect(view.total).toMatchObject({ acquired: inDays, released: inDays, expired: 0 });
    expect(view.points.map((p) => p.acquired)).toEqual(view.points.map((p) => instants.filter((t) => t >= p.t && t < p.t + DAY_MS).length));
  });
});

describe("sharing overview reads of widened ranges", () => {
  it("never shares one answer between two ranges asked differently, even when they count the same days", () => {
    const nowMs = Date.now();
    const key = (from: string, to: string) => {
      const parsed = parseOverviewParams({ window: "custom", from, to }, nowMs);
      if (!parsed.ok) throw new Error(parsed.problem.message);
      return { key: overviewReadKey(parsed.params, { kind: "all" }), range: parsed.params.range };
    };
    const a = key("2026-03-01T10:00Z", "2026-03-11T09:00Z");
    const b = key("2026-03-01T11:00Z", "2026-03-11T09:00Z");
    expect([a.range.from, a.range.to]).toEqual([b.range.from, b.range.to]);
    expect(a.key).not.toBe(b.key);
    expect(key("2026-03-01T10:00Z", "2026-03-11T09:00Z").key).toBe(a.key);
  });
});
