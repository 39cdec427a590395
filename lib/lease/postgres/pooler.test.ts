import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeaseClient } from "../client";
import { createFencedTable, fencedWrite, readFencedHistory } from "../fencing";
import { describeLeaseStoreContract } from "../testing/contract";
import { freshPgSchema, sleep, TEST_DATABASE_URL } from "../testing/isolation";
import { startPgBouncer, stopAllServers, type ThrowawayPooler } from "@/test/support/servers";
import { createStoreFixture } from "@/test/support/stores";
import { ReadAbortedError } from "./bounded-read";
import { PostgresLeaseStore } from "./store";

/**
 * The store behind PgBouncer in transaction pooling mode: consecutive statements of one
 * client run on whichever server session is free, and sessions are shared between clients.
 */

let shared: Promise<ThrowawayPooler> | null = null;
const sharedPooler = () => (shared ??= startPgBouncer(TEST_DATABASE_URL, { poolSize: 3 }));

afterAll(async () => {
  await stopAllServers();
});

describeLeaseStoreContract("postgres through PgBouncer (transaction pooling)", async () =>
  createStoreFixture("postgres", { url: (await sharedPooler()).url, name: "pg-pooled", options: { pooler: "transaction" } }),
);

describe("PostgresLeaseStore behind a transaction pooler", () => {
  it("refuses a pooler value it does not know", () => {
    expect(() => new PostgresLeaseStore({ name: "pg", connectionString: TEST_DATABASE_URL, pooler: "session" as "transaction" })).toThrow(/pooler must be "transaction"/);
  });

  describe("two stores sharing one server session", () => {
    let single: ThrowawayPooler;
    beforeAll(async () => {
      // One server session: every client's statements meet there, as they eventually do under load.
      single = await startPgBouncer(TEST_DATABASE_URL, { poolSize: 1 });
    });

    async function acquireWithTwoStores(options: { pooler?: "transaction" }): Promise<string[]> {
      const fresh = freshPgSchema();
      const stores = ["pg-a", "pg-b"].map((name) => new PostgresLeaseStore({ name, connectionString: single.url, schema: fresh.schema, ...options }));
      try {
        await stores[0]!.migrate();
        const outcomes: string[] = [];
        for (const [i, store] of stores.entries()) {
          const result = await store.acquire({ resource: `job:${i}`, owner: `w${i}`, task: "t", ttlMs: 10_000 }).catch((error: Error) => error);
          outcomes.push(result instanceof Error ? result.message : result.acquired ? "acquired" : "not acquired");
        }
        return outcomes;
      } finally {
        await Promise.all(stores.map((s) => s.close()));
        await fresh.drop();
      }
    }

    it("fails without the option: the second store's statement name is already taken on the shared session", async () => {
      const [first, second] = await acquireWithTwoStores({});
      expect(first).toBe("acquired");
      expect(second).toMatch(/prepared statement "lw_acquire_[0-9a-f]+" already exists/);
    });

    it("works with pooler: \"transaction\"", async () => {
      expect(await acquireWithTwoStores({ pooler: "transaction" })).toEqual(["acquired", "acquired"]);
    });
  });

  it("serves several concurrent clients: one holder at a time, fenced writes in token order, sweep and history", async () => {
    const pooler = await sharedPooler();
    const fresh = freshPgSchema();
    const WORKERS = 4;
    const ROUNDS = 5;
    const stores = Array.from({ length: WORKERS }, () => new PostgresLeaseStore({ name: "pg-pooled", connectionString: pooler.url, schema: fresh.schema, pooler: "transaction" }));
    const downstream = new pg.Pool({ connectionString: pooler.url, max: 4 });
    downstream.on("error", () => {});
    const table = `${fresh.schema}.invoices_state`;
    try {
      await stores[0]!.migrate();
      await createFencedTable({ pool: downstream, table, history: true });
      let holders = 0;
      let overlaps = 0;
      await Promise.all(
        stores.map(async (store, w) => {
          const client = new LeaseClient(store, { owner: `worker-${w}` });
          for (let round = 0; round < ROUNDS; round++) {
            await client.withLease(
              "billing:invoices",
              async ({ fencingToken, lease }) => {
                holders++;
                if (holders > 1) overlaps++;
                await sleep(5);
                const write = await fencedWrite({ pool: downstream, table, history: true, key: "tenant-1", value: { w, round }, fencingToken, resource: lease.resource, store, by: "invoices-db" });
                expect(write.accepted).toBe(true);
                holders--;
              },
              { task: "invoice-run", ttlMs: 10_000, waitMs: 30_000 },
            );
          }
        }),
      );
      expect(overlaps).toBe(0);

      const history = await readFencedHistory({ pool: downstream, table, store: stores[0]! });
      expect(history).toHaveLength(WORKERS * ROUNDS);
      const tokens = history.map((h) => BigInt(h.fencingToken));
      expect(tokens.every((t, i) => i === 0 || t > tokens[i - 1]!)).toBe(true);

      // A lease left to lapse is swept through the pooler too.
      await stores[1]!.acquire({ resource: "billing:lapsed", owner: "worker-1", task: "t", ttlMs: 100 });
      await sleep(400);
      expect((await stores[2]!.sweep()).expired).toBe(1);

      const events = await stores[3]!.events({ resource: "billing:invoices", limit: 500 });
      const kinds = events.items.map((e) => e.kind);
      expect(kinds.filter((k) => k === "acquired")).toHaveLength(WORKERS * ROUNDS);
      expect(kinds.filter((k) => k === "released")).toHaveLength(WORKERS * ROUNDS);
      const lapsed = await stores[0]!.events({ resource: "billing:lapsed", limit: 10 });
      expect(lapsed.items.map((e) => e.kind)).toContain("expired");
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await downstream.end();
      await fresh.drop();
    }
  });

  it("cancels an aborted read on the server session it runs on, though the pooler hides that session's pid, every time, and the pooler lives on", async () => {
    // A pooler of its own: no other test's clients queue for its server sessions.
    const pooler = await startPgBouncer(TEST_DATABASE_URL, { poolSize: 2 });
    const fresh = freshPgSchema();
    const store = new PostgresLeaseStore({ name: "pg-pooled", connectionString: pooler.url, schema: fresh.schema, pooler: "transaction", statementTimeoutMs: 120_000 });
    const direct = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
    direct.on("error", () => {});
    /** Statements waiting on a lock on this schema's event table, seen on the server itself. */
    const waitingReads = async () =>
      (
        await direct.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND position($1 IN query) > 0",
          [`"${fresh.schema}".lease_events`],
        )
      ).rows[0]!.n;
    const locker = await direct.connect();
    try {
      await store.migrate();
      await store.acquire({ resource: "jobs:a", owner: "w1", task: "t1", ttlMs: 60_000 });
      await locker.query("BEGIN");
      await locker.query(`LOCK TABLE "${fresh.schema}".lease_events IN ACCESS EXCLUSIVE MODE`);
      // Several rounds: a cancel the pooler drops or dies on shows up as a read that runs on.
      for (let round = 0; round < 5; round++) {
        const controller = new AbortController();
        const settled = store.events({ resource: "jobs:a", signal: controller.signal }).then(
          () => null,
          (error: unknown) => error,
        );
        for (let i = 0; i < 500 && (await waitingReads()) === 0; i++) await sleep(20);
        expect(await waitingReads()).toBe(1);
        controller.abort();
        // The lock is still held and statement_timeout is two minutes: only a delivered cancel ends the read this side of it.
        const undelivered = sleep(20_000).then(() => "still running 20 s after the abort: the cancel did not reach the server");
        expect(await Promise.race([settled, undelivered])).toBeInstanceOf(ReadAbortedError);
        let waiting = 1;
        for (let i = 0; i < 50 && waiting > 0; i++) {
          await sleep(20);
          waiting = await waitingReads();
        }
        expect(waiting).toBe(0);
      }
      await locker.query("ROLLBACK");
      expect((await store.events({ resource: "jobs:a" })).items.map((e) => e.kind)).toEqual(["acquired"]);
    } finally {
      await locker.query("ROLLBACK").catch(() => {});
      locker.release();
      await store.close();
      await direct.end();
      await fresh.drop();
      await pooler.stop();
    }
  });
});
