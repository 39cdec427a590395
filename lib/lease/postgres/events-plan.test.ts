import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPgSchema } from "../testing/isolation";
import { buildEventsQuery, type EventsSqlInput } from "./sql";
import { PostgresLeaseStore } from "./store";

/**
 * Every event filter the console offers must be answered from an index, never by
 * reading the table. Seeded directly (30 days, 100k events, many owners, tasks and
 * resources) so the planner sees a table where a scan would cost; the store's own
 * query builder makes each query, with the 24 h window every console read has.
 * lease_events is partitioned by day: the seeded history lands in the DEFAULT partition
 * and partition upkeep moves it into daily partitions, of which a 24 h window reads two.
 */
const EVENTS = 100_000;
const DAY_MS = 86_400_000;

type PlanNode = { "Node Type": string; "Relation Name"?: string; "Index Name"?: string; "Index Cond"?: string; Plans?: PlanNode[] };

/** Scans of the table or of any of its partitions (lease_events_p…, lease_events_default). */
function scansOf(node: PlanNode, table: string): PlanNode[] {
  const name = node["Relation Name"];
  const own = name !== undefined && (name === table || name.startsWith(`${table}_`)) ? [node] : [];
  return [...own, ...(node.Plans ?? []).flatMap((p) => scansOf(p, table))];
}

describe("event filters answer from an index", () => {
  const fresh = freshPgSchema();
  const pool = new pg.Pool({ connectionString: fresh.connectionString, max: 2 });
  pool.on("error", () => {});
  let store: PostgresLeaseStore;
  const leaseId = randomUUID();
  const now = new Date();

  beforeAll(async () => {
    store = new PostgresLeaseStore({ name: "pg-plan", connectionString: fresh.connectionString, schema: fresh.schema });
    await store.migrate();
    const s = `"${fresh.schema}"`;
    await pool.query(
      `INSERT INTO ${s}.lease_events (at, kind, resource, lease_id, owner, task, fencing_token, hold_ms)
       SELECT $1::timestamptz - (($3 - g) * ($2::float8 / $3)) * interval '1 millisecond', -- ids grow with time, as the store writes them
              (ARRAY['acquired','released','expired','contended','force_released'])[1 + g % 5],
              'jobs:' || (g % 997) || ':' || (g % 13),
              CASE WHEN g = 7 THEN $4::uuid ELSE md5(g::text)::uuid END,
              'worker-' || (g % 499), 'task-' || (g % 1499), g, g % 10000
       FROM generate_series(1, $3) AS g`,
      [now, 30 * DAY_MS, EVENTS, leaseId],
    );
    const upkeep = await store.maintainPartitions();
    // 31 UTC days from 30 days ago to today, plus the days prepared ahead; some were made by migrate().
    expect(upkeep.created.length).toBeGreaterThanOrEqual(25);
    expect(Number((await pool.query(`SELECT count(*) AS n FROM ${s}.lease_events_default`)).rows[0].n)).toBe(0);
    expect(Number((await pool.query(`SELECT count(*) AS n FROM ${s}.lease_events`)).rows[0].n)).toBe(EVENTS);
    await pool.query(`ANALYZE ${s}.lease_events`);
  }, 120_000);

  /** A 24 h window spans at most two UTC days: only those partitions are read, never DEFAULT. */
  function expectPruned(scans: PlanNode[]): void {
    const read = new Set(scans.map((scan) => scan["Relation Name"]));
    expect(read.size, [...read].join(", ")).toBeLessThanOrEqual(2);
    expect([...read].every((name) => /^lease_events_p\d{8}$/.test(name ?? "")), [...read].join(", ")).toBe(true);
  }

  afterAll(async () => {
    await store.close();
    await pool.end();
    await fresh.drop();
  });

  const window = { from: new Date(now.getTime() - DAY_MS), to: new Date(now.getTime() + 1) };
  const FILTERS: Record<string, Partial<EventsSqlInput>> = {
    owner: { owner: "nobody" },
    "owner (existing)": { owner: "worker-17" },
    task: { task: "task-3" },
    kind: { kinds: ["force_released"] },
    prefix: { prefix: { value: "jobs:12:", upper: "jobs:12;" } },
    resource: { resource: "jobs:5:5" },
    token: { fencingToken: "4242" },
    "lease id": { leaseId },
  };

  for (const [name, filter] of Object.entries(FILTERS)) {
    it(`${name}: an index scan with an index condition, no sequential scan`, async () => {
      const { text, values } = buildEventsQuery(fresh.schema, { ...window, ...filter, order: "desc", limit: 101 });
      const { rows } = await pool.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${text}`, values);
      const scans = scansOf(rows[0]!["QUERY PLAN"][0]!.Plan, "lease_events");
      expect(scans.length).toBeGreaterThan(0);
      expectPruned(scans);
      for (const scan of scans) {
        expect(scan["Node Type"], JSON.stringify(scan)).not.toBe("Seq Scan");
        // A walk of the primary key filtering every row is a scan in disguise: the index used must bound the rows.
        expect(scan["Index Cond"] ?? (scan.Plans ?? []).map((p) => p["Index Cond"]).join(" "), JSON.stringify(scan)).not.toBe("");
      }
    });
  }

  it("no filter: no sequential scan (newest first along the primary key, stopped by the page limit)", async () => {
    const { text, values } = buildEventsQuery(fresh.schema, { ...window, order: "desc", limit: 101 });
    const { rows } = await pool.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${text}`, values);
    const scans = scansOf(rows[0]!["QUERY PLAN"][0]!.Plan, "lease_events");
    expect(scans.length).toBeGreaterThan(0);
    expectPruned(scans);
    for (const scan of scans) expect(scan["Node Type"], JSON.stringify(scan)).not.toBe("Seq Scan");
  });
});
