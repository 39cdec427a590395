import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { freshPgSchema, type FreshPgSchema } from "../testing/isolation";
import { LEASE_EVENT_KINDS, type StatsBucket } from "../types";
import { MIGRATIONS, runMigrations } from "./migrations";
import { ensureEventPartitions, partitionName } from "./partitions";
import { PARTITION_DAYS_AHEAD } from "./sql";
import { PostgresLeaseStore } from "./store";

/**
 * lease_events partitioned by UTC day (migration 8): the upgrade keeps every event and id,
 * partitions are prepared ahead, and retention drops whole old days — never a DELETE, and
 * only once the rollups hold them — while every chart total stays what it was.
 */
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

const raw = new pg.Pool({ connectionString: freshPgSchema().connectionString, max: 4 });
raw.on("error", () => {});
const schemas: FreshPgSchema[] = [];
const stores: PostgresLeaseStore[] = [];

afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await raw.end();
  await Promise.all(schemas.map((f) => f.drop()));
});

function open(f: FreshPgSchema, options: { eventRetentionDays?: number } = {}): PostgresLeaseStore {
  const store = new PostgresLeaseStore({ name: "pg-parts", connectionString: f.connectionString, schema: f.schema, ...options });
  stores.push(store);
  return store;
}

function fresh(): FreshPgSchema {
  const f = freshPgSchema();
  schemas.push(f);
  return f;
}

const today = () => Math.floor(Date.now() / DAY_MS) * DAY_MS;
const exists = async (schema: string, table: string) =>
  (await raw.query<{ r: string | null }>(`SELECT to_regclass($1) AS r`, [`"${schema}".${table}`])).rows[0]!.r !== null;

/**
 * A day of history as the store writes it, at noon UTC of `day`: per resource an acquire, a
 * contended acquire and a release 1.5 s later (with renewals), over prefixes a:x and b:y.
 */
async function seedDay(schema: string, day: number, resources = 20): Promise<void> {
  await raw.query(
    `INSERT INTO "${schema}".lease_events (at, kind, resource, lease_id, owner, task, fencing_token, hold_ms, detail)
     SELECT $1::timestamptz + g * interval '1 second' + k.off * interval '1 millisecond', k.kind,
            (CASE WHEN g % 2 = 0 THEN 'a:x:' ELSE 'b:y:' END) || g, md5($1::text || g)::uuid, 'w-' || g, 't', g,
            CASE WHEN k.kind = 'released' THEN 1500 END,
            CASE WHEN k.kind = 'released' THEN jsonb_build_object('renewals', 2) END
     FROM generate_series(1, $2::int) AS g,
          (VALUES ('acquired', 0), ('contended', 10), ('released', 1500)) AS k(kind, off)`,
    [new Date(day + 12 * HOUR_MS), resources],
  );
}

const totals = (buckets: StatsBucket[]) => {
  const sum: Record<string, number> = {};
  const prefixes: Record<string, number> = {};
  for (const b of buckets) {
    for (const [k, v] of Object.entries(b.counts)) sum[k] = (sum[k] ?? 0) + v;
    sum.holdMsSum = (sum.holdMsSum ?? 0) + b.holdMsSum;
    for (const [p, v] of Object.entries(b.contendedByPrefix)) prefixes[p] = (prefixes[p] ?? 0) + v;
  }
  return { sum, prefixes };
};

describe("lease_events partitioned by day", () => {
  it("upgrades a version-6 table with events over several days: every event and id is kept, ids keep increasing", async () => {
    const f = fresh();
    const pool = new pg.Pool({ connectionString: f.connectionString, max: 1 });
    pool.on("error", () => {});
    try {
      await runMigrations(pool, f.schema, MIGRATIONS.filter((m) => m.version <= 6));
    } finally {
      await pool.end();
    }
    const t0 = today();
    for (const d of [-9, -3, 0]) await seedDay(f.schema, t0 + d * DAY_MS, 5);
    const before = (await raw.query(`SELECT id, at, kind, resource, lease_id, owner, hold_ms, detail FROM "${f.schema}".lease_events ORDER BY id`)).rows;
    expect(before).toHaveLength(45);

    const store = open(f);
    expect((await store.migrate()).applied).toContain(7);

    const relkind = await raw.query(`SELECT relkind FROM pg_class WHERE oid = $1::regclass`, [`"${f.schema}".lease_events`]);
    expect(relkind.rows[0].relkind).toBe("p");
    const after = (await raw.query(`SELECT id, at, kind, resource, lease_id, owner, hold_ms, detail FROM "${f.schema}".lease_events ORDER BY id`)).rows;
    expect(after).toEqual(before);
    // Each old day has its own partition; nothing was left in DEFAULT.
    for (const d of [-9, -3, 0]) expect(await exists(f.schema, partitionName(new Date(t0 + d * DAY_MS))), `day ${d}`).toBe(true);
    expect((await raw.query(`SELECT count(*)::int AS n FROM "${f.schema}".lease_events_default`)).rows[0].n).toBe(0);
    // Every B-tree index of migrations 1, 4 and 13 is there, on the partitioned table; hold spans
    // have their own read model (migration 9), so no GiST index weighs on event writes.
    const indexes = await raw.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'lease_events' ORDER BY 1`, [f.schema]);
    expect(indexes.rows.map((r) => r.indexname)).toEqual([
      "lease_events_at_idx",
      "lease_events_fencing_token_idx",
      "lease_events_kind_id_idx",
      "lease_events_lease_id_idx",
      "lease_events_owner_id_idx",
      "lease_events_pkey",
      "lease_events_resource_id_idx",
      "lease_events_task_id_idx",
    ]);

    const maxOld = Math.max(...before.map((r) => Number(r.id)));
    const got = await store.acquire({ resource: "after:upgrade", owner: "o", task: "t", ttlMs: 5_000 });
    if (!got.acquired) throw new Error("expected to acquire");
    const released = await store.release({ resource: "after:upgrade", leaseId: got.lease.leaseId });
    if (!released.released) throw new Error("expected to release");
    expect(Number(released.event.id)).toBeGreaterThan(maxOld);
    // Cursor pages over old and new events together, newest first.
    const page = await store.events({ from: new Date(t0 - 10 * DAY_MS), limit: 200 });
    expect(page.items.map((e) => Number(e.id))).toEqual([...page.items.map((e) => Number(e.id))].sort((a, b) => b - a));
    expect(page.items).toHaveLength(47);
  });

  it("prepares today's partition and the days ahead on migrate, and sends rows outside them to DEFAULT, then into their day", async () => {
    const f = fresh();
    const store = open(f);
    await store.migrate();
    const t0 = today();
    for (let d = 0; d <= PARTITION_DAYS_AHEAD; d++) expect(await exists(f.schema, partitionName(new Date(t0 + d * DAY_MS))), `today + ${d}`).toBe(true);
    expect(await exists(f.schema, partitionName(new Date(t0 + (PARTITION_DAYS_AHEAD + 1) * DAY_MS)))).toBe(false);
    // A write with no day prepared for it still succeeds (DEFAULT), and upkeep moves it out.
    await seedDay(f.schema, t0 - 20 * DAY_MS, 2);
    expect((await raw.query(`SELECT count(*)::int AS n FROM "${f.schema}".lease_events_default`)).rows[0].n).toBe(6);
    const upkeep = await store.maintainPartitions();
    expect(upkeep.created).toEqual([partitionName(new Date(t0 - 20 * DAY_MS))]);
    expect((await raw.query(`SELECT count(*)::int AS n FROM "${f.schema}".lease_events_default`)).rows[0].n).toBe(0);
    expect((await raw.query(`SELECT count(*)::int AS n FROM "${f.schema}"."${partitionName(new Date(t0 - 20 * DAY_MS))}"`)).rows[0].n).toBe(6);
    // Keeping everything: nothing is dropped however old.
    expect(upkeep.dropped).toEqual([]);
    // Before a bulk load of history, its days can be prepared so rows skip DEFAULT.
    expect(await ensureEventPartitions(raw, f.schema, new Date(t0 - 10 * DAY_MS + 5 * HOUR_MS), new Date(t0 - 8 * DAY_MS))).toBe(3);
    for (const d of [-10, -9, -8]) expect(await exists(f.schema, partitionName(new Date(t0 + d * DAY_MS))), `day ${d}`).toBe(true);
    expect(await ensureEventPartitions(raw, f.schema, new Date(t0 - 10 * DAY_MS), new Date(t0 - 8 * DAY_MS))).toBe(0);
    expect(await store.eventRetention()).toEqual({ retentionDays: null, retainedFrom: null });
  });

  it("refuses an event of an unknown kind in every partition, those created after the upgrade too, and takes every known kind", async () => {
    const f = fresh();
    const pool = new pg.Pool({ connectionString: f.connectionString, max: 1 });
    pool.on("error", () => {});
    try {
      await runMigrations(pool, f.schema, MIGRATIONS.filter((m) => m.version < 17));
    } finally {
      await pool.end();
    }
    await seedDay(f.schema, today(), 2);
    const store = open(f);
    expect((await store.migrate()).applied).toContain(17);
    const insert = (kind: string, at: number) =>
      raw.query(`INSERT INTO "${f.schema}".lease_events (at, kind, resource) VALUES ($1, $2, 'k:1')`, [new Date(at), kind]);
    // Today, a day prepared afterwards, and one only DEFAULT takes.
    await ensureEventPartitions(raw, f.schema, new Date(today() - 12 * DAY_MS), new Date(today() - 12 * DAY_MS));
    for (const at of [Date.now(), today() - 12 * DAY_MS + HOUR_MS, today() - 40 * DAY_MS]) {
      await expect(insert("acquird", at), new Date(at).toISOString()).rejects.toMatchObject({ code: "23514" });
      for (const kind of LEASE_EVENT_KINDS) await insert(kind, at);
    }
    // One kind check on the table, not the old one beside the new.
    const checks = await raw.query<{ def: string }>(
      `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'c'`,
      [`"${f.schema}".lease_events`],
    );
    expect(checks.rows.map((r) => r.def)).toEqual([expect.stringContaining("lease_event_kind_is_known(kind)")]);
  });

  it("drops only partitions past retention, with no DELETE, once the rollups hold them; every chart total stays the same", async () => {
    const f = fresh();
    const keeper = open(f);
    await keeper.migrate();
    const t0 = today();
    for (const d of [-5, -4, -3, -2, -1]) await seedDay(f.schema, t0 + d * DAY_MS);
    // Recent history, from real operations: some in the last hour.
    for (let i = 0; i < 5; i++) {
      const got = await keeper.acquire({ resource: `a:x:live${i}`, owner: "o", task: "t", ttlMs: 60_000 });
      if (!got.acquired) throw new Error("expected to acquire");
      await keeper.acquire({ resource: `a:x:live${i}`, owner: "other", task: "t", ttlMs: 60_000 });
      if (i % 2 === 0) await keeper.release({ resource: `a:x:live${i}`, leaseId: got.lease.leaseId });
    }
    await keeper.maintainPartitions(); // old days out of DEFAULT into their partitions

    const retaining = open(f, { eventRetentionDays: 2 });
    // Rollups never refreshed: nothing may go, and the result says why.
    const early = await retaining.maintainPartitions();
    expect(early.dropped).toEqual([]);
    expect(early.kept.map((k) => k.partition)).toEqual([-5, -4, -3].map((d) => partitionName(new Date(t0 + d * DAY_MS))));
    expect(early.kept[0]!.reason).toMatch(/rollups have not been refreshed/);

    await keeper.refreshRollups({ since: new Date(t0 - 6 * DAY_MS) });

    // [span, bucket size]: the overview reads 30 days in UTC-day buckets (the day rollups), from whole days.
    const windows: Record<string, [span: number, bucketMs: number]> = {
      "1h": [HOUR_MS, 60_000],
      "24h": [DAY_MS, 60_000],
      "7d": [7 * DAY_MS, HOUR_MS],
      "30d": [30 * DAY_MS, HOUR_MS],
      "30d by day": [29 * DAY_MS, DAY_MS],
    };
    const now = Date.now();
    const readAll = async () => {
      const out: Record<string, ReturnType<typeof totals>> = {};
      for (const [name, [span, bucketMs]] of Object.entries(windows)) {
        const from = bucketMs === DAY_MS ? t0 - span : now - span;
        out[name] = totals(await retaining.stats({ from: new Date(from), to: new Date(now + 1), bucketMs, prefixDepth: 2 }));
      }
      return { windows: out, lifetime: await retaining.lifetimeTotals() };
    };
    const before = await readAll();
    expect(before.windows["7d"]!.sum.acquired).toBe(5 * 20 + 5); // five seeded days and the live ones
    expect(before.windows["30d"]!.prefixes).toMatchObject({ "a:x": 5 * 10 + 5, "b:y": 50 });
    // The day rollups count what the hours count.
    expect(before.windows["30d by day"]).toEqual(before.windows["30d"]);

    // Any DELETE on the events would fail from here on: retention must not issue one.
    await raw.query(`CREATE FUNCTION "${f.schema}".refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'DELETE on lease_events'; END $$`);
    await raw.query(`CREATE TRIGGER refuse_delete BEFORE DELETE ON "${f.schema}".lease_events FOR EACH ROW EXECUTE FUNCTION "${f.schema}".refuse_delete()`);
    const deletesBefore = await raw.query(`SELECT coalesce(sum(n_tup_del), 0)::int AS n FROM pg_stat_user_tables WHERE schemaname = $1 AND relname LIKE 'lease_events%'`, [f.schema]);

    const done = await retaining.maintainPartitions();
    const dropped = [-5, -4, -3].map((d) => partitionName(new Date(t0 + d * DAY_MS)));
    expect(done.dropped).toEqual(dropped);
    expect(done.kept).toEqual([]);
    for (const name of dropped) expect(await exists(f.schema, name), name).toBe(false);
    for (const d of [-2, -1, 0, 1]) expect(await exists(f.schema, partitionName(new Date(t0 + d * DAY_MS))), `day ${d}`).toBe(true);
    const children = await raw.query(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = $1::regclass`, [`"${f.schema}".lease_events`]);
    expect(children.rows[0].n).toBe(2 + 1 + PARTITION_DAYS_AHEAD + 1); // days −2 and −1, today and ahead, DEFAULT
    const deletesAfter = await raw.query(`SELECT coalesce(sum(n_tup_del), 0)::int AS n FROM pg_stat_user_tables WHERE schemaname = $1 AND relname LIKE 'lease_events%'`, [f.schema]);
    expect(deletesAfter.rows[0].n).toBe(deletesBefore.rows[0].n);
    expect(done.droppedUntil).toEqual(new Date(t0 - 2 * DAY_MS));

    // The raw events of those days are gone; the charts still count them, from the rollups.
    expect((await retaining.events({ from: new Date(t0 - 6 * DAY_MS), to: new Date(t0 - 2 * DAY_MS) })).items).toEqual([]);
    expect(await readAll()).toEqual(before);
    // A refresh asked to start before the retained events must not rebuild those days from nothing.
    await retaining.refreshRollups({ since: new Date(t0 - 6 * DAY_MS) });
    expect(await readAll()).toEqual(before);

    // Past views say where retained history starts.
    expect(await retaining.eventRetention()).toEqual({ retentionDays: 2, retainedFrom: new Date(t0 - 2 * DAY_MS) });
    const gone = await retaining.heldAt({ at: new Date(t0 - 3 * DAY_MS + 12 * HOUR_MS) });
    expect(gone).toMatchObject({ covered: false, reason: "before_history", historyStartsAt: new Date(t0 - 2 * DAY_MS) });
    const kept = await retaining.heldAt({ at: new Date(t0 - 2 * DAY_MS + 12 * HOUR_MS + 1_000) });
    expect(kept.covered).toBe(true);
    if (kept.covered) expect(kept.items.map((h) => h.resource)).toContain("b:y:1");
  });

  it("keeps a day past retention whose raw events the rollups have not all counted, and every day after it", async () => {
    const f = fresh();
    const keeper = open(f);
    await keeper.migrate();
    const t0 = today();
    for (const d of [-4, -3, -2]) await seedDay(f.schema, t0 + d * DAY_MS);
    await keeper.maintainPartitions();
    await keeper.refreshRollups({ since: new Date(t0 - 5 * DAY_MS) });
    // Written into day −3 after the refresh (a late bulk load): the rollups do not count it yet.
    await raw.query(`INSERT INTO "${f.schema}".lease_events (at, kind, resource) VALUES ($1, 'contended', 'late:one')`, [new Date(t0 - 3 * DAY_MS + HOUR_MS)]);

    const retaining = open(f, { eventRetentionDays: 1 });
    const first = await retaining.maintainPartitions();
    expect(first.dropped).toEqual([partitionName(new Date(t0 - 4 * DAY_MS))]);
    expect(first.kept).toEqual([
      { partition: partitionName(new Date(t0 - 3 * DAY_MS)), reason: expect.stringMatching(/count 60 events in this day but it holds 61/) },
      { partition: partitionName(new Date(t0 - 2 * DAY_MS)), reason: expect.stringMatching(/an older day is kept/) },
    ]);
    expect(first.droppedUntil).toEqual(new Date(t0 - 3 * DAY_MS));
    expect(await exists(f.schema, partitionName(new Date(t0 - 3 * DAY_MS)))).toBe(true);

    // Refreshing over it (from where retained history starts) lets it go.
    await retaining.refreshRollups({ since: new Date(t0 - 5 * DAY_MS) });
    const second = await retaining.maintainPartitions();
    expect(second.dropped).toEqual([-3, -2].map((d) => partitionName(new Date(t0 + d * DAY_MS))));
    const contended = await retaining.stats({ from: new Date(t0 - 5 * DAY_MS), to: new Date(t0), bucketMs: HOUR_MS, prefixDepth: 2 });
    expect(totals(contended).prefixes).toEqual({ "a:x": 30, "b:y": 30, "late:one": 1 });
  });
});
