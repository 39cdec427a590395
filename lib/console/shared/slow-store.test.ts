import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LeaseStore } from "@leasewatch/lease";
import { sleep, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { getOverview } from "@/lib/console/overview/get-overview";
import { listEvents } from "@/lib/console/events/list-events";
import { parseEventsParams, parseOverviewParams } from "./params";

/**
 * Eight stores (4 Postgres schemas, 4 Redis namespaces); one Postgres store is made
 * slow by the test holding an exclusive lock on all its tables, so every read of it
 * waits on the server. The page still answers from the other seven, names the slow
 * one, and the slow store's waiting statements are cancelled, not left running.
 */
/** Far above a healthy read here (a busy shared machine included), far below the slow store's wait. */
const TIMEOUT_MS = 2_500;

describe("a slow store among eight", () => {
  const raw = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 3 });
  raw.on("error", () => {});
  const fixtures: StoreFixture[] = [];
  const stores: LeaseStore[] = [];
  let slowSchema = "";

  beforeAll(async () => {
    for (let i = 0; i < 4; i++) {
      const fixture = await createStoreFixture("postgres", {
        name: `pg-${i}`,
        // Longer than the console's timeout: the console's own deadline must be what stops the slow read.
        options: { statementTimeoutMs: 30_000 },
      });
      fixtures.push(fixture);
      if (i === 0) slowSchema = fixture.spec.schema;
    }
    for (let i = 0; i < 4; i++) fixtures.push(await createStoreFixture("redis", { name: `redis-${i}` }));
    stores.push(...fixtures.map((f) => f.store));
    for (const store of stores) await store.acquire({ resource: `jobs:${store.name}`, owner: "w1", task: "t1", ttlMs: 60_000 });
  }, 60_000);

  afterAll(async () => {
    for (const f of fixtures) await f.cleanup();
    await raw.end();
  });

  async function lockSlowStore(): Promise<() => Promise<void>> {
    const client = await raw.connect();
    await client.query("BEGIN");
    const { rows } = await client.query<{ t: string }>("SELECT format('%I.%I', schemaname, tablename) AS t FROM pg_tables WHERE schemaname = $1", [slowSchema]);
    await client.query(`LOCK TABLE ${rows.map((r) => r.t).join(", ")} IN ACCESS EXCLUSIVE MODE`);
    return async () => {
      await client.query("ROLLBACK");
      client.release();
    };
  }

  /** Statements of this database still waiting on a lock in the slow schema (polled briefly: cancels land asynchronously). */
  async function waitersLeft(): Promise<number> {
    let n = -1;
    for (let i = 0; i < 50; i++) {
      const { rows } = await raw.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND position($1 IN query) > 0",
        [`"${slowSchema}".`],
      );
      n = rows[0]!.n;
      if (n === 0) return 0;
      await sleep(20);
    }
    return n;
  }

  it("events: seven stores answer, the slow one is named, its statements are cancelled", async () => {
    const unlock = await lockSlowStore();
    try {
      const parsed = parseEventsParams({});
      if (!parsed.ok) throw new Error(parsed.problem.message);
      const result = await listEvents(parsed.params, { entries: stores.map((store) => ({ store })), timeoutMs: TIMEOUT_MS });
      if (!result.ok) throw new Error(result.problem.message);
      const failed = result.view.stores.filter((s) => !s.ok);
      expect(failed.map((s) => s.store)).toEqual(["pg-0"]);
      expect(failed[0]).toMatchObject({ error: expect.stringMatching(/no answer within 2500 ms/) });
      expect(new Set(result.view.items.map((e) => e.store))).toEqual(new Set(stores.slice(1).map((s) => s.name)));
      expect(await waitersLeft()).toBe(0);
    } finally {
      await unlock();
    }
  });

  it("overview: the slow store is named, the others' totals are there", async () => {
    const unlock = await lockSlowStore();
    try {
      const parsed = parseOverviewParams({ window: "1h" });
      if (!parsed.ok) throw new Error(parsed.problem.message);
      const result = await getOverview(parsed.params, { entries: stores.map((store) => ({ store })), timeoutMs: TIMEOUT_MS, reuseClosedBuckets: false });
      if (!result.ok) throw new Error(result.problem.message);
      expect(result.view.stores.filter((s) => !s.ok).map((s) => s.store)).toEqual(["pg-0"]);
      expect(result.view.stores.filter((s) => s.ok)).toHaveLength(7);
      expect(await waitersLeft()).toBe(0);
    } finally {
      await unlock();
    }
  });
});
