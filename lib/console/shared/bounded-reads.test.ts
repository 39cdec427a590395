import { describe, expect, it } from "vitest";
import { LeaseError, ReadAbortedError } from "@leasewatch/lease";
import { readBounded } from "@leasewatch/lease/internal";
import { sleep } from "@leasewatch/lease/testing";
import { postgresStoreFixtures } from "@/test/support/postgres-tests";
import { fanOutStores } from "@/lib/console/shared/fan-out";
import { captureLogs } from "@/lib/log/testing";

/**
 * Console reads must stop their Postgres work, not only stop waiting for it. The
 * slow read is made by the test itself: it holds an ACCESS EXCLUSIVE lock on the
 * store's event table, so the store's read waits on the server until released.
 */
describe("bounded Postgres reads", () => {
  const { raw, fresh } = postgresStoreFixtures();

  async function open(statementTimeoutMs?: number) {
    const fixture = await fresh({ name: "pg-bounded", options: statementTimeoutMs !== undefined ? { statementTimeoutMs } : {} });
    await fixture.store.acquire({ resource: "jobs:a", owner: "w1", task: "t1", ttlMs: 60_000 });
    return { store: fixture.store, schema: fixture.spec.schema };
  }

  /** Holds an exclusive lock on the schema's event table until the returned function is called. */
  async function lockEvents(schema: string): Promise<() => Promise<void>> {
    const client = await raw.connect();
    await client.query("BEGIN");
    await client.query(`LOCK TABLE "${schema}".lease_events IN ACCESS EXCLUSIVE MODE`);
    return async () => {
      await client.query("ROLLBACK");
      client.release();
    };
  }

  /** Backends of this database blocked on a lock in a statement on `schema`'s event table. */
  async function lockedReaders(schema: string): Promise<number[]> {
    const { rows } = await raw.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock' AND position($1 IN query) > 0`,
      [`"${schema}".lease_events`],
    );
    return rows.map((r) => r.pid);
  }

  async function waitForReader(schema: string): Promise<number> {
    for (let i = 0; i < 500; i++) {
      const [pid] = await lockedReaders(schema);
      if (pid !== undefined) return pid;
      await sleep(20);
    }
    throw new Error("the read never reached the server");
  }

  /** Polls for up to 1 s for the backend to have left pg_stat_activity. */
  async function isGoneWithinOneSecond(pid: number): Promise<boolean> {
    const deadline = Date.now() + 1_000;
    for (;;) {
      const { rows } = await raw.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid]);
      if (rows.length === 0) return true;
      if (Date.now() > deadline) return false;
      await sleep(20);
    }
  }

  it("cancels the backend when the caller's signal aborts mid-query", async () => {
    const { store, schema } = await open();
    const unlock = await lockEvents(schema);
    try {
      const controller = new AbortController();
      const reading = store.events({ resource: "jobs:a", signal: controller.signal });
      const settled = reading.then(
        () => null,
        (error: unknown) => error,
      );
      const pid = await waitForReader(schema);
      controller.abort();
      expect(await settled).toBeInstanceOf(ReadAbortedError);
      expect(await isGoneWithinOneSecond(pid)).toBe(true);
      expect(await lockedReaders(schema)).toEqual([]);
    } finally {
      await unlock();
    }
    // The pool is still usable: the aborted connection was closed, not handed on.
    expect((await store.events({ resource: "jobs:a" })).items.map((e) => e.kind)).toEqual(["acquired"]);
  });

  it("cancels the backend when the console's per-store timeout fires", async () => {
    const { store, schema } = await open();
    const unlock = await lockEvents(schema);
    try {
      const outcomesPromise = fanOutStores([{ store }], (s, signal) => s.events({ resource: "jobs:a", signal }), 300);
      const pid = await waitForReader(schema);
      const [outcome] = await outcomesPromise;
      expect(outcome?.ok).toBe(false);
      expect(await isGoneWithinOneSecond(pid)).toBe(true);
    } finally {
      await unlock();
    }
  });

  it("a read whose request went away is cancelled, and is neither logged as a store failure nor followed by a health read", async () => {
    const { store, schema } = await open();
    let healthReads = 0;
    // The real store, with its health reads counted.
    const counted = new Proxy(store, {
      get(target, key) {
        if (key === "health") {
          return () => {
            healthReads++;
            return target.health();
          };
        }
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const log = captureLogs();
    const unlock = await lockEvents(schema);
    try {
      const request = new AbortController();
      const outcomesPromise = fanOutStores([{ store: counted }], (s, signal) => s.events({ resource: "jobs:a", signal }), 10_000, request.signal);
      const pid = await waitForReader(schema);
      request.abort();
      const [outcome] = await outcomesPromise;
      expect(outcome).toMatchObject({ ok: false, error: "read cancelled" });
      expect(await isGoneWithinOneSecond(pid)).toBe(true);
      expect(healthReads).toBe(0);
      expect(log.lines.filter((line) => line.level === "error")).toEqual([]);
    } finally {
      log.restore();
      await unlock();
    }
  });

  it("a read that outlives statement_timeout is stopped by Postgres with a clear error", async () => {
    const { store, schema } = await open(200);
    const unlock = await lockEvents(schema);
    try {
      const error = await store.events({ resource: "jobs:a" }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LeaseError);
      expect((error as LeaseError).code).toBe("statement_timeout");
      expect((error as LeaseError).message).toMatch(/statement timeout/);
      expect(await lockedReaders(schema)).toEqual([]);
    } finally {
      await unlock();
    }
  });

  it("the past view and TTL advice reads are bounded too: statement_timeout, and cancelled by the per-store timeout", async () => {
    const { store, schema } = await open(200);
    const unlock = await lockEvents(schema);
    try {
      const now = new Date();
      const window = { from: new Date(now.getTime() - 3_600_000), to: now };
      for (const read of [() => store.heldAt({ at: now }), () => store.ttlAdvice(window)]) {
        const error = await read().then(
          () => null,
          (e: unknown) => e,
        );
        expect((error as LeaseError).code).toBe("statement_timeout");
      }
    } finally {
      await unlock();
    }
    const patient = await open();
    const unlockPatient = await lockEvents(patient.schema);
    try {
      const outcomesPromise = fanOutStores([{ store: patient.store }], (s, signal) => s.heldAt({ at: new Date(), signal }), 300);
      const pid = await waitForReader(patient.schema);
      const [outcome] = await outcomesPromise;
      expect(outcome?.ok).toBe(false);
      expect(await isGoneWithinOneSecond(pid)).toBe(true);
    } finally {
      await unlockPatient();
    }
  });

  it("an already aborted signal starts no query", async () => {
    const { store } = await open();
    await expect(store.list({ signal: AbortSignal.abort() })).rejects.toBeInstanceOf(ReadAbortedError);
  });

  it("reads run in a read-only transaction with the configured statement_timeout", async () => {
    const seen = await readBounded(raw, { statementTimeoutMs: 1234, what: "test" }, async (client) => {
      const { rows } = await client.query<{ ro: string; timeout: string }>(
        "SELECT current_setting('transaction_read_only') AS ro, current_setting('statement_timeout') AS timeout",
      );
      return rows[0];
    });
    expect(seen).toEqual({ ro: "on", timeout: "1234ms" });
    const write = readBounded(raw, { statementTimeoutMs: 1_000, what: "test" }, (client) => client.query("CREATE TEMP TABLE must_not_exist (i int)"));
    await expect(write).rejects.toMatchObject({ code: "25006" });
  });
});
