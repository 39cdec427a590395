import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setUpStoreFixture } from "@/test/support/store-suite";
import { TEST_DATABASE_URL } from "../testing/isolation";
import { buildListQuery, LIST_SORTS, type ListSortKey, type ListSqlInput } from "./sql";

/**
 * The leases list filtered by owner or task must be answered from an index, never by reading the
 * table. Seeded directly (200k live rows, 120 owners, 2 000 tasks, one rare owner and task) so a
 * scan is what the planner would pick without the indexes; the store's own query builder makes
 * each query, first page and a later page (keyset cursor).
 */
const LEASES = 200_000;

type PlanNode = { "Node Type": string; "Relation Name"?: string; "Index Name"?: string; Plans?: PlanNode[] };

function scansOf(node: PlanNode, table: string): PlanNode[] {
  const own = node["Relation Name"] === table ? [node] : [];
  return [...own, ...(node.Plans ?? []).flatMap((p) => scansOf(p, table))];
}

/** Every index the plan reads (a bitmap heap scan names its indexes in its children). */
function indexesOf(node: PlanNode): string[] {
  return [...(node["Index Name"] ? [node["Index Name"]] : []), ...(node.Plans ?? []).flatMap(indexesOf)];
}

describe("lease list filters answer from an index", () => {
  const fixture = setUpStoreFixture("postgres", { name: "pg-plan" });
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
  pool.on("error", () => {});

  beforeAll(async () => {
    const s = `"${fixture.spec.schema}"`;
    await pool.query(
      `INSERT INTO ${s}.leases (resource, lease_id, owner, task, fencing_token, acquired_at, renewed_at, expires_at, ttl_ms)
       SELECT 'jobs:' || (g % 997) || ':' || g,
              md5(g::text)::uuid,
              CASE WHEN g % 50000 = 7 THEN 'rare-owner' ELSE 'worker-' || (g % 120) END, -- few owners, each with many leases: an owner missing from the statistics looks common
              CASE WHEN g % 40000 = 11 THEN 'rare-task' ELSE 'task-' || (g % 2000) END,
              g,
              now() - (g % 86400) * interval '1 second',
              now() - (g % 60) * interval '1 second',
              now() + (g % 3600) * interval '1 second',
              30000
       FROM generate_series(1, $1) AS g`,
      [LEASES],
    );
    await pool.query(`ANALYZE ${s}.leases`);
  }, 120_000);

  afterAll(async () => {
    await pool.end();
  });

  const FILTERS: Record<string, Partial<ListSqlInput>> = {
    "owner (busy)": { owner: "worker-17" },
    "owner (rare)": { owner: "rare-owner" },
    "owner (absent)": { owner: "nobody" },
    "task (busy)": { task: "task-3" },
    "task (rare)": { task: "rare-task" },
    "owner and task": { owner: "worker-17", task: "task-17" },
    "owner, held only": { owner: "worker-17", state: "held" },
  };
  const after = { micros: String(Date.now() * 1000 - 3_600_000_000), resource: "jobs:5:5" };

  for (const sort of Object.keys(LIST_SORTS) as ListSortKey[]) {
    for (const [name, filter] of Object.entries(FILTERS)) {
      for (const page of ["first page", "next page"] as const) {
        it(`${name}, sort=${sort}, ${page}: no sequential scan of leases`, async () => {
          // As the store reads it: sorted by expiry, an owner or task with at most LIST_GATHER_MAX
          // leases (every one here) is gathered along its own index, then sorted.
          const isGathered = sort === "expires" && (filter.owner !== undefined || filter.task !== undefined);
          const input: ListSqlInput = { ...filter, sort, limit: 101, isGathered, ...(page === "next page" ? { after } : {}) };
          const { text, values } = buildListQuery(fixture.spec.schema, input);
          const { rows } = await pool.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${text}`, values);
          const scans = scansOf(rows[0]!["QUERY PLAN"][0]!.Plan, "leases");
          expect(scans.length).toBeGreaterThan(0);
          for (const scan of scans) expect(scan["Node Type"], JSON.stringify(scan)).not.toBe("Seq Scan");
          // A walk of the whole acquired_at or expires_at index filtering every row is a scan in
          // disguise (for an absent owner, all of it): the owner / task index must bound the rows.
          const indexes = indexesOf(rows[0]!["QUERY PLAN"][0]!.Plan);
          expect(indexes.some((n) => /^leases_(owner|task)_acquired_idx$/.test(n)), indexes.join(", ")).toBe(true);
          expect(indexes.filter((n) => /expires_at/.test(n)), indexes.join(", ")).toEqual([]);
        });
      }
    }
  }

  it("sorted by expiry, an owner's leases come gathered and sorted: every one, in order, across pages; none for an absent owner", async () => {
    const s = `"${fixture.spec.schema}"`;
    for (const owner of ["rare-owner", "worker-17", "nobody"]) {
      const expected = (await pool.query<{ resource: string }>(`SELECT resource FROM ${s}.leases WHERE owner = $1 ORDER BY expires_at, resource`, [owner])).rows.map((r) => r.resource);
      const paged: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await fixture.store.list({ owner, sort: "expires", limit: 150, ...(cursor ? { cursor } : {}) });
        paged.push(...page.items.map((l) => l.resource));
        cursor = page.nextCursor;
      } while (cursor);
      expect(paged, owner).toEqual(expected);
    }
  });
});
