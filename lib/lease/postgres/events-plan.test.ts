import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setUpStoreFixture } from "@/test/support/store-suite";
import { TEST_DATABASE_URL } from "../testing/isolation";
import { buildEventsQuery, type EventsSqlInput } from "./sql";

/**
 * Every event filter the console offers must be answered from an index, never by
 * reading the table. Seeded directly (30 days, 100k events, many owners, tasks and
 * resources) so the planner sees a table where a scan would cost; the store's own
 * query builder makes each query, with the 24 h window every console read has.
 * lease_events is partitioned by day: the seeded history lands in the DEFAULT partition
 * and partition upkeep moves it into daily partitions, of which a 24 h window reads two.
 *
 * The history ends at yesterday's noon (UTC), not at the wall clock: the window then covers
 * half of each of its two day partitions whatever the hour the suite runs at. Ending it at
 * the wall clock made the plan depend on the hour (a window holding a few hours of one day
 * is planned differently from one holding half of it).
 */
const EVENTS = 100_000;
const DAY_MS = 86_400_000;

type PlanNode = { "Node Type": string; "Relation Name"?: string; "Index Name"?: string; "Index Cond"?: string; Plans?: PlanNode[] };

/** The node and every node below it. */
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/** Scans of the table or of any of its partitions (lease_events_p…, lease_events_default). */
function scansOf(node: PlanNode, table: string): PlanNode[] {
  const name = node["Relation Name"];
  const own = name !== undefined && (name === table || name.startsWith(`${table}_`)) ? [node] : [];
  return [...own, ...(node.Plans ?? []).flatMap((p) => scansOf(p, table))];
}

describe("event filters answer from an index", () => {
  const fixture = setUpStoreFixture("postgres", { name: "pg-plan" });
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
  pool.on("error", () => {});
  const leaseId = randomUUID();
  const now = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - DAY_MS / 2);

  beforeAll(async () => {
    const s = `"${fixture.spec.schema}"`;
    await pool.query(
      `INSERT INTO ${s}.lease_events (at, kind, resource, lease_id, owner, task, fencing_token, hold_ms)
       SELECT $1::timestamptz - (($3 - g) * ($2::float8 / $3)) * interval '1 millisecond', -- ids grow with time, as the store writes them
              -- kinds as a store sees them: force releases are rare, acquires and releases common
              CASE WHEN g % 1000 = 0 THEN 'force_released' WHEN g % 1000 = 500 THEN 'lost' WHEN g % 20 = 1 THEN 'contended' WHEN g % 10 = 2 THEN 'expired'
                   WHEN g % 2 = 0 THEN 'acquired' ELSE 'released' END,
              'jobs:' || (g % 997) || ':' || (g % 13),
              CASE WHEN g = 7 THEN $4::uuid ELSE md5(g::text)::uuid END,
              'worker-' || (g % 499), 'task-' || (g % 1499), g, g % 10000
       FROM generate_series(1, $3) AS g`,
      [now, 30 * DAY_MS, EVENTS, leaseId],
    );
    const upkeep = await fixture.store.maintainPartitions();
    // 31 UTC days from 30 days ago to today, plus the days prepared ahead; some were made by migrate().
    expect(upkeep.created.length).toBeGreaterThanOrEqual(25);
    expect(Number((await pool.query(`SELECT count(*) AS n FROM ${s}.lease_events_default`)).rows[0].n)).toBe(0);
    expect(Number((await pool.query(`SELECT count(*) AS n FROM ${s}.lease_events`)).rows[0].n)).toBe(EVENTS);
    await pool.query(`ANALYZE ${s}.lease_events`);
    const { rows } = await pool.query<{ name: string }>(`SELECT DISTINCT tableoid::regclass::text AS name FROM ${s}.lease_events`);
    for (const { name } of rows) withRows.add(name.replace(/^.*\./, "").replaceAll('"', ""));
  }, 120_000);
  /** Partitions holding rows: an empty one (DEFAULT, the days ahead) costs nothing whichever way it is read. */
  const withRows = new Set<string>();

  /** A 24 h window spans at most two UTC days: only those partitions are read, never DEFAULT. */
  function expectPruned(scans: PlanNode[]): void {
    const read = new Set(scans.map((scan) => scan["Relation Name"]));
    expect(read.size, [...read].join(", ")).toBeLessThanOrEqual(2);
    expect([...read].every((name) => /^lease_events_p\d{8}$/.test(name ?? "")), [...read].join(", ")).toBe(true);
  }

  afterAll(async () => {
    await pool.end();
  });

  const window = { from: new Date(now.getTime() - DAY_MS), to: new Date(now.getTime() + 1) };
  /** Each filter, and the index its rows must come from (led by the filtered column). */
  const FILTERS: Record<string, { filter: Partial<EventsSqlInput>; index: RegExp }> = {
    owner: { filter: { owner: "nobody" }, index: /_owner_id_idx$/ },
    "owner (existing)": { filter: { owner: "worker-17" }, index: /_owner_id_idx$/ },
    task: { filter: { task: "task-3" }, index: /_task_id_idx$/ },
    kind: { filter: { kinds: ["force_released"] }, index: /_kind_id_idx$/ },
    "two kinds": { filter: { kinds: ["lost", "force_released"] }, index: /_kind_id_idx$/ },
    prefix: { filter: { prefix: { value: "jobs:12:", upper: "jobs:12;" } }, index: /_resource_id_idx$/ },
    resource: { filter: { resource: "jobs:5:5" }, index: /_resource_id_idx$/ },
    token: { filter: { fencingToken: "4242" }, index: /_fencing_token_idx$/ },
    "lease id": { filter: { leaseId }, index: /_lease_id_idx$/ },
  };

  async function planOf(input: EventsSqlInput): Promise<PlanNode> {
    const { text, values } = buildEventsQuery(fixture.spec.schema, input);
    const { rows } = await pool.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${text}`, values);
    return rows[0]!["QUERY PLAN"][0]!.Plan;
  }

  /**
   * The filter's own index serves the filter: somewhere under the partition's scan (the scan
   * itself, or a bitmap index scan under a BitmapAnd/BitmapOr the planner combined with others)
   * that index is read with an index condition, and nothing under it reads the table whole.
   */
  function expectServedBy(scan: PlanNode, index: RegExp): void {
    const below = nodesOf(scan);
    const detail = JSON.stringify(scan);
    expect(below.map((n) => n["Node Type"]), detail).not.toContain("Seq Scan");
    const own = below.filter((n) => index.test(n["Index Name"] ?? ""));
    expect(own.length, detail).toBeGreaterThan(0);
    expect(own.some((n) => (n["Index Cond"] ?? "") !== ""), detail).toBe(true);
  }

  for (const [name, { filter, index }] of Object.entries(FILTERS)) {
    it(`${name}: an index scan with an index condition, no sequential scan`, async () => {
      const plan = await planOf({ ...window, ...filter, order: "desc", limit: 101 });
      const scans = scansOf(plan, "lease_events");
      expect(scans.length).toBeGreaterThan(0);
      expectPruned(scans);
      // A walk of the primary key filtering every row is a scan in disguise: the filter's index must bound the rows.
      for (const scan of scans) expectServedBy(scan, index);
    });
  }

  it("a common kind: either its own index or the primary key newest first, stopping at the page limit; never a sort of the window", async () => {
    const plan = await planOf({ ...window, kinds: ["acquired"], order: "desc", limit: 101 });
    const scans = scansOf(plan, "lease_events");
    expectPruned(scans);
    for (const scan of scans) expect(scan["Index Name"], JSON.stringify(scan)).toMatch(/_kind_id_idx$|_pkey$/);
    expect(nodesOf(plan).map((n) => n["Node Type"])).not.toContain("Sort");
  });

  // Without a window nothing prunes partitions: each must still be read along the filter's
  // index, or a value with no recent rows reads the whole table (at 10M events, past the timeout).
  // Rare values may be gathered and sorted (few rows); what must never happen is the primary-key walk.
  for (const name of ["owner", "task", "resource", "kind", "two kinds"]) {
    it(`${name}, no window: every partition read along its index, in id order`, async () => {
      const plan = await planOf({ ...FILTERS[name]!.filter, order: "desc", limit: 11 });
      const scans = scansOf(plan, "lease_events").filter((scan) => withRows.has(scan["Relation Name"] ?? ""));
      expect(scans.length).toBeGreaterThanOrEqual(25);
      for (const scan of scans) {
        expect(scan["Node Type"], JSON.stringify(scan)).toMatch(/^(Index|Bitmap Heap) Scan$/);
        expectServedBy(scan, FILTERS[name]!.index);
      }
    });
  }

  it("no filter: no sequential scan (newest first along the primary key, stopped by the page limit)", async () => {
    const scans = scansOf(await planOf({ ...window, order: "desc", limit: 101 }), "lease_events");
    expect(scans.length).toBeGreaterThan(0);
    expectPruned(scans);
    for (const scan of scans) expect(nodesOf(scan).map((n) => n["Node Type"]), JSON.stringify(scan)).not.toContain("Seq Scan");
  });
});
