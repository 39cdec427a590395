import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { postgresStoreFixtures } from "@/test/support/postgres-tests";
import { buildLeaseStatements } from "./sql";

/**
 * An acquire with a lease id the caller chose asks whether that id was ever granted, and a
 * release that finds no lease asks whether a release already ended it: both look up the lease
 * id's events. Postgres must read them along the lease id index even where it has no statistics
 * yet (a new installation, a day's partition before it is first analyzed); there it once read the
 * kind index instead, every event of that kind for every call. The plans are the ones the
 * functions run, as auto_explain reports them to this session.
 */
describe("look-ups by lease id read the lease id index on partitions never analyzed", () => {
  const { raw, fresh } = postgresStoreFixtures();

  it("an acquire with a chosen id, and a release of a lease that is gone, read only lease_events' lease id index", async () => {
    const { store, spec } = await fresh();
    const s = `"${spec.schema}"`;
    // Events of the kinds the look-ups test, written as the store writes them.
    for (let i = 0; i < 20; i++) {
      const got = await store.acquire({ resource: `lookup:${i}`, owner: "o", task: "t", ttlMs: 30_000 });
      if (!got.acquired) throw new Error("expected a grant");
      await store.release({ resource: `lookup:${i}`, leaseId: got.lease.leaseId });
    }
    const analyzed = await raw.query(
      `SELECT count(*)::int AS n FROM pg_stat_user_tables WHERE schemaname = $1 AND relname LIKE 'lease_events%' AND (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL)`,
      [spec.schema],
    );
    expect(analyzed.rows[0].n).toBe(0);

    const client = await raw.connect();
    const plans: string[] = [];
    const onNotice = (notice: { message?: string }) => plans.push(notice.message ?? "");
    client.on("notice", onNotice);
    try {
      await client.query("LOAD 'auto_explain'");
      await client.query("SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice");
      await client.query(`SELECT * FROM ${s}.lease_acquire_once('lookup:new', 'o', 't', 30000, $1::uuid)`, [randomUUID()]);
      await client.query(`SELECT * FROM ${s}.lease_release('lookup:0', $1, false)`, [randomUUID()]);
    } finally {
      client.off("notice", onNotice);
      await client.query("RESET ALL");
      client.release(true);
    }
    const lookups = plans.filter((plan) => /FROM \S+\.lease_events [ex]\s+WHERE \w\.lease_id = /.test(plan));
    expect(lookups, plans.join("\n---\n")).toHaveLength(2);
    for (const plan of lookups) {
      expect(plan).toMatch(/lease_id_idx/);
      expect(plan).not.toMatch(/_kind_id_idx|_resource_id_idx|_pkey|Seq Scan/);
    }
  });

  it("grouped acquires with chosen ids of free resources ask the same, of every partition, along the lease id index only", async () => {
    const { store, spec } = await fresh();
    for (let i = 0; i < 20; i++) {
      const got = await store.acquire({ resource: `lookup:${i}`, owner: "o", task: "t", ttlMs: 30_000, leaseId: randomUUID() });
      if (!got.acquired) throw new Error("expected a grant");
      await store.release({ resource: `lookup:${i}`, leaseId: got.lease.leaseId });
    }
    const client = await raw.connect();
    const plans: string[] = [];
    const onNotice = (notice: { message?: string }) => plans.push(notice.message ?? "");
    client.on("notice", onNotice);
    const resources = Array.from({ length: 8 }, (_, i) => `lookup:grouped:${i}`);
    try {
      await client.query("LOAD 'auto_explain'");
      await client.query("SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice");
      const none = resources.map(() => null);
      const { rows } = await client.query(buildLeaseStatements(spec.schema).leaseCallsMany, [
        resources,
        resources.map(() => "acquire_once"),
        resources.map(() => "o"),
        resources.map(() => "t"),
        resources.map(() => 30_000),
        resources.map(() => randomUUID()),
        none,
      ]);
      expect(rows.map((r) => r.outcome)).toEqual(resources.map(() => "acquired"));
    } finally {
      client.off("notice", onNotice);
      await client.query("RESET ALL");
      client.release(true);
    }
    // The set-based acquire's look-up: one probe of each partition's lease id index per call.
    const lookup = plans.filter((plan) => /FROM \S+\.lease_events e WHERE e\.lease_id = a\.lease_id/.test(plan));
    expect(lookup, plans.join("\n---\n")).toHaveLength(1);
    const eventScans = lookup[0]!.split("\n").filter((line) => /Scan.* on lease_events/.test(line));
    expect(eventScans.length, lookup[0]).toBeGreaterThan(0);
    for (const line of eventScans) expect(line, lookup[0]).toMatch(/Index (Only )?Scan using lease_events_\w*lease_id_idx on lease_events/);
  });
});
