import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { TEST_DATABASE_URL } from "../testing/isolation";
import { postgresStoreFixtures, stallInsertsBy } from "@/test/support/postgres-tests";
import { CallBatch } from "./call-batch";
import { buildLeaseStatements } from "./sql";

describe("calls made together go to Postgres as one statement", () => {
  const { raw, fresh } = postgresStoreFixtures();

  /** How many transactions wrote `schema`'s event rows for `resources` (rows a transaction inserted share its xmin). */
  async function countWritingTransactions(schema: string, resources: string[]): Promise<number> {
    const { rows } = await raw.query(`SELECT count(DISTINCT xmin::text)::int AS n FROM "${schema}".lease_events WHERE resource = ANY($1::text[])`, [resources]);
    return rows[0].n as number;
  }

  it("grants acquires of distinct resources made in one turn together: each its own lease and token, one commit", async () => {
    const { store, spec } = await fresh();
    const resources = Array.from({ length: 20 }, (_, i) => `batch:distinct:${i}`);
    const results = await Promise.all(resources.map((resource, i) => store.acquire({ resource, owner: `worker-${i}`, task: "t", ttlMs: 30_000 })));
    const leases = results.map((r) => (r.acquired ? r.lease : null));
    expect(leases.every((l) => l !== null)).toBe(true);
    expect(leases.map((l) => l!.resource)).toEqual(resources);
    expect(leases.map((l) => l!.owner)).toEqual(resources.map((_, i) => `worker-${i}`));
    expect(new Set(leases.map((l) => l!.fencingToken)).size).toBe(20);
    expect(await countWritingTransactions(spec.schema, resources)).toBe(1);

    const released = await Promise.all(leases.map((l) => store.release({ resource: l!.resource, leaseId: l!.leaseId })));
    expect(released.every((r) => r.released)).toBe(true);
    expect(await store.list({ prefix: "batch:distinct:" })).toMatchObject({ items: [] });
    const { rows } = await raw.query(`SELECT kind, count(*)::int AS n FROM "${spec.schema}".lease_events GROUP BY kind ORDER BY kind`);
    expect(rows).toEqual([
      { kind: "acquired", n: 20 },
      { kind: "released", n: 20 },
    ]);
    // The releases too committed together, and nothing else ran: no refusal was counted.
    expect(await countWritingTransactions(spec.schema, resources)).toBe(2);
    const refusals = await raw.query(`SELECT reason, n FROM "${spec.schema}".lease_release_failures`);
    expect(refusals.rows).toEqual([]);
  });

  it("groups acquires with lease ids the callers chose too: one commit, and a copy of a call in the same turn answers the same lease", async () => {
    const { store, spec } = await fresh();
    const resources = Array.from({ length: 8 }, (_, i) => `batch:chosen:${i}`);
    const ids = resources.map(() => randomUUID());
    const calls = resources.map((resource, i) => ({ resource, owner: `worker-${i}`, task: "t", ttlMs: 30_000, leaseId: ids[i]! }));
    // The first call twice, as a client retrying after a lost reply might send it.
    const results = await Promise.all([...calls, calls[0]!].map((call) => store.acquire(call)));
    const leases = results.map((r) => (r.acquired ? r.lease : null));
    expect(leases.map((l) => l?.leaseId)).toEqual([...ids, ids[0]]);
    expect(leases.at(-1)).toEqual(leases[0]);
    expect(await countWritingTransactions(spec.schema, resources)).toBe(1);
    const { rows } = await raw.query(`SELECT count(*)::int AS n FROM "${spec.schema}".lease_events WHERE kind = 'acquired'`);
    expect(rows[0].n).toBe(8);
    // Once ended, a chosen id is never granted again, grouped or not.
    await store.release({ resource: resources[1]!, leaseId: ids[1]! });
    const again = await Promise.allSettled([store.acquire(calls[1]!), store.acquire(calls[2]!)]);
    expect(again[0]).toMatchObject({ status: "rejected", reason: { code: "lease_ended" } });
    expect(again[1]).toMatchObject({ status: "fulfilled", value: { acquired: true, lease: { leaseId: ids[2] } } });
  });

  it("answers acquires and releases made in one turn each as alone, in one statement and one commit", async () => {
    const { store, spec } = await fresh();
    const held = await store.acquire({ resource: "batch:mixed:held", owner: "w", task: "t", ttlMs: 30_000 });
    if (!held.acquired) throw new Error("expected a grant");
    const [granted, contended, released, refused] = await Promise.all([
      store.acquire({ resource: "batch:mixed:free", owner: "w2", task: "t", ttlMs: 30_000 }),
      store.acquire({ resource: "batch:mixed:held", owner: "w3", task: "t", ttlMs: 30_000 }),
      store.release({ resource: "batch:mixed:held", leaseId: held.lease.leaseId }),
      store.release({ resource: "batch:mixed:other", leaseId: "not-a-uuid" }),
    ]);
    expect(granted).toMatchObject({ acquired: true, lease: { owner: "w2" } });
    expect(released).toMatchObject({ released: true, event: { kind: "released", owner: "w" } });
    expect(refused).toEqual({ released: false, reason: "not_owner" });
    // Calls of one turn have no order between them: the acquire of the held resource ran
    // before the release (contended by w) or after it (granted to w3), and says which.
    if (contended.acquired) expect(contended.lease.owner).toBe("w3");
    else expect(contended.holder).toMatchObject({ owner: "w", leaseId: held.lease.leaseId });
    const { rows } = await raw.query(
      `SELECT count(DISTINCT xmin::text)::int AS n FROM "${spec.schema}".lease_events WHERE NOT (kind = 'acquired' AND owner = 'w')`,
    );
    expect(rows[0].n).toBe(1);
    const refusals = await raw.query(`SELECT reason, n::int FROM "${spec.schema}".lease_release_failures`);
    expect(refusals.rows).toEqual([{ reason: "not_owner", n: 1 }]);
  });

  it("calls one lease function once for every call in a shared statement, in the plan Postgres makes for it", async () => {
    const { spec } = await fresh();
    const statements = buildLeaseStatements(spec.schema);
    const client = await raw.connect();
    const prepare = () => client.query(`PREPARE lease_calls(text[], text[], text[], text[], int[], text[], boolean[]) AS ${statements.leaseCallsMany}`);
    const execute = (resources: string[], calls: string[]) => {
      const ids = resources.map(() => `'${randomUUID()}'`);
      const list = (values: string[]) => `ARRAY[${values.join(",")}]`;
      return client.query(
        `EXECUTE lease_calls(${list(resources.map((r) => `'${r}'`))}, ${list(calls.map((c) => `'${c}'`))}, ${list(resources.map(() => "'o'"))}, ` +
          `${list(resources.map(() => "'t'"))}, ${list(resources.map(() => "1000"))}, ${list(ids)}::text[], ${list(resources.map(() => "false"))})`,
      );
    };
    try {
      await prepare();
      for (const mode of ["force_generic_plan", "force_custom_plan"]) {
        await client.query(`SET plan_cache_mode = ${mode}`);
        const explain = await client.query(
          "EXPLAIN (COSTS OFF) EXECUTE lease_calls(ARRAY['a','a','b'], ARRAY['acquire','acquire_once','release'], ARRAY['o','o',NULL], " +
            "ARRAY['t','t',NULL], ARRAY[1000,1000,NULL], ARRAY[gen_random_uuid()::text, gen_random_uuid()::text, 'x'], ARRAY[NULL,NULL,false]::boolean[])",
        );
        const plan = explain.rows.map((r) => String(r["QUERY PLAN"]).trim());
        // A nested loop over the calls; under it each function straight below a one-time filter
        // on the call, checked before calling: no cache of one call's answer for an identical
        // call (Memoize), no filter after the call.
        expect(plan[0]).toBe("Nested Loop");
        expect(plan.some((line) => /Memoize|Materialize|Hash/.test(line) || line.startsWith("Filter:"))).toBe(false);
        const scans = plan.flatMap((line, i) => (line.startsWith("->  Function Scan on lease_") ? [i] : []));
        expect(scans.map((i) => plan[i]!.replace(/^->  Function Scan on (\w+).*$/, "$1"))).toEqual(["lease_acquire", "lease_acquire_once", "lease_release"]);
        expect(scans.map((i) => plan[i - 1])).toEqual([
          "One-Time Filter: (u.call = 'acquire'::text)",
          "One-Time Filter: (u.call = 'acquire_once'::text)",
          "One-Time Filter: (u.call = 'release'::text)",
        ]);
      }
      // As the store runs it (plan_cache_mode auto), statements of a few calls each: after the
      // first five, Postgres keeps one generic plan rather than planning every statement afresh.
      await client.query("RESET plan_cache_mode");
      await client.query("DEALLOCATE ALL");
      await prepare();
      for (let i = 0; i < 8; i++) await execute([`gp:${i}:a`, `gp:${i}:b`, `gp:${i}:c`], ["acquire", "acquire_once", "release"]);
      const prepared = await client.query<{ generic_plans: string; custom_plans: string }>("SELECT generic_plans, custom_plans FROM pg_prepared_statements");
      expect(prepared.rows.map((r) => ({ generic: Number(r.generic_plans), custom: Number(r.custom_plans) }))).toEqual([{ generic: 3, custom: 5 }]);
      // Each call ran its own function only: two grants and one refused release a statement.
      const { rows } = await raw.query(`SELECT kind, count(*)::int AS n FROM "${spec.schema}".lease_events GROUP BY kind`);
      expect(rows).toEqual([{ kind: "acquired", n: 16 }]);
      const refusals = await raw.query(`SELECT reason, n::int FROM "${spec.schema}".lease_release_failures`);
      expect(refusals.rows).toEqual([{ reason: "not_owner", n: 8 }]);
    } finally {
      await client.query("DEALLOCATE ALL").catch(() => undefined);
      await client.query("RESET plan_cache_mode").catch(() => undefined);
      client.release();
    }
  });

  it("with groupCommit: false, sends every call alone: its own statement and commit", async () => {
    const { open, spec } = await fresh();
    const store = open({ options: { groupCommit: false } });
    const resources = Array.from({ length: 6 }, (_, i) => `batch:alone:${i}`);
    const results = await Promise.all(resources.map((resource) => store.acquire({ resource, owner: "w", task: "t", ttlMs: 30_000 })));
    expect(results.every((r) => r.acquired)).toBe(true);
    expect(await countWritingTransactions(spec.schema, resources)).toBe(6);
  });

  it("answers acquires of one resource made in one turn in the order they were made: the first holds, the rest hear contention from it", async () => {
    const { store, spec } = await fresh();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => store.acquire({ resource: "batch:same", owner: `worker-${i}`, task: "t", ttlMs: 30_000 })));
    const first = results[0]!;
    if (!first.acquired) throw new Error("the first acquire made should hold the lease");
    expect(first.lease.owner).toBe("worker-0");
    for (const r of results.slice(1)) expect(r).toMatchObject({ acquired: false, holder: { owner: "worker-0", leaseId: first.lease.leaseId } });
    const { rows } = await raw.query(`SELECT kind, owner FROM "${spec.schema}".lease_events ORDER BY id`);
    expect(rows).toEqual([{ kind: "acquired", owner: "worker-0" }, ...Array.from({ length: 9 }, (_, i) => ({ kind: "contended", owner: `worker-${i + 1}` }))]);
  });

  it("a release sent twice in one turn (a retry after a lost reply) ends the lease once and answers both with its one event", async () => {
    const { store, spec } = await fresh();
    const granted = await store.acquire({ resource: "batch:retry", owner: "w", task: "t", ttlMs: 30_000 });
    if (!granted.acquired) throw new Error("expected a grant");
    const [a, b] = await Promise.all([0, 1].map(() => store.release({ resource: "batch:retry", leaseId: granted.lease.leaseId })));
    if (!a!.released || !b!.released) throw new Error("both releases should answer released");
    expect(b!.event.id).toBe(a!.event.id);
    const { rows } = await raw.query(`SELECT count(*)::int AS n FROM "${spec.schema}".lease_events WHERE kind = 'released'`);
    expect(rows[0].n).toBe(1);
  });

  it("when the session running a shared statement is killed mid-statement, every call in it fails, nothing of it is granted, and a retry succeeds", async () => {
    const { store, spec } = await fresh();
    const stall = await stallInsertsBy(raw, spec.schema, "stalled", 0x4c57_0017);
    const resources = Array.from({ length: 5 }, (_, i) => `batch:killed:${i}`);
    const attempts = Promise.allSettled(resources.map((resource) => store.acquire({ resource, owner: "stalled", task: "t", ttlMs: 30_000 })));
    let pid: number | undefined;
    for (let i = 0; i < 1_000 && pid === undefined; i++) {
      const { rows } = await raw.query(
        `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() AND position('WITH ORDINALITY' IN query) > 0 AND position($1 IN query) > 0`,
        [`"${spec.schema}".`],
      );
      pid = rows[0]?.pid as number | undefined;
      if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(pid, "the five acquires should wait inside one shared statement").toBeDefined();
    await raw.query("SELECT pg_terminate_backend($1)", [pid]);
    const outcomes = await attempts;
    expect(outcomes.map((o) => o.status)).toEqual(resources.map(() => "rejected"));
    for (const o of outcomes) expect(o).toMatchObject({ reason: { code: "57P01" } });
    // Rolled back whole: no lease, no event.
    expect((await store.list({ prefix: "batch:killed:" })).items).toEqual([]);
    expect((await raw.query(`SELECT count(*)::int AS n FROM "${spec.schema}".lease_events`)).rows[0].n).toBe(0);

    await stall.open();
    const retried = await Promise.all(resources.map((resource) => store.acquire({ resource, owner: "stalled", task: "t", ttlMs: 30_000 })));
    expect(retried.every((r) => r.acquired)).toBe(true);
    expect((await store.list({ prefix: "batch:killed:" })).items.map((l) => l.resource).sort()).toEqual(resources);
    expect((await raw.query(`SELECT count(*)::int AS n FROM "${spec.schema}".lease_events WHERE kind = 'acquired'`)).rows[0].n).toBe(5);
  });

  it("two processes' batches of the same resources, made in opposite orders, never wait on each other in a cycle", async () => {
    const { store, open, spec } = await fresh();
    const other = open({ name: "pg-test" });
    for (let round = 0; round < 15; round++) {
      const resources = ["a", "b", "c", "d"].map((r) => `batch:order:${round}:${r}`);
      const acquireAll = (s: typeof store, order: string[], owner: string) => Promise.all(order.map((resource) => s.acquire({ resource, owner, task: "t", ttlMs: 30_000 })));
      const [mine, theirs] = await Promise.all([acquireAll(store, resources, "one"), acquireAll(other, [...resources].reverse(), "two")]);
      // Every resource went to exactly one of them.
      const granted = [...mine, ...theirs].filter((r) => r.acquired).map((r) => (r.acquired ? r.lease.resource : ""));
      expect(granted.sort()).toEqual(resources);
      // Each side's four calls committed as its one statement: a deadlock would have had one
      // statement rolled back and its calls run again one by one (more transactions).
      expect(await countWritingTransactions(spec.schema, resources)).toBe(2);
    }
  });
});

describe("CallBatch on a real Postgres", () => {
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 4 });
  pool.on("error", () => {});
  afterAll(() => pool.end());

  /** 100 / x for one call, and for many in one statement, which fails as a whole when one x is 0. */
  const divideOne = async (values: readonly unknown[]) => (await pool.query<{ q: number }>("SELECT 100 / $1::int AS q", [...values])).rows[0];
  const divideMany = async (xs: unknown[]) =>
    (await pool.query<{ q: number; n: string }>("SELECT n, 100 / x AS q FROM unnest($1::int[]) WITH ORDINALITY AS u(x, n)", [xs])).rows;

  function divisions(sent: string[]) {
    return new CallBatch<{ q: number }>({
      runOne: async (values) => {
        sent.push("one");
        return divideOne(values);
      },
      runMany: async ([xs]) => {
        sent.push("many");
        return divideMany(xs!);
      },
    });
  }

  it("sends a lone call as it is, and the calls of one turn as one statement, each answered with its own row", async () => {
    const sent: string[] = [];
    const batch = divisions(sent);
    expect(await batch.run([4])).toEqual({ q: 25 });
    expect(sent).toEqual(["one"]);
    expect(await Promise.all([5, 2, 10, 1].map((x) => batch.run([x])))).toEqual([{ q: 20 }, { q: 50 }, { q: 10 }, { q: 100 }]);
    expect(sent).toEqual(["one", "many"]);
  });

  /** divisions() whose statements are sent (recorded in `sent`) at once but answered only once `gate` opens. */
  function gatedDivisions(sent: string[][], holdLimitMs: number) {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const batch = new CallBatch<{ q: number }>(
      {
        runOne: async (values) => {
          sent.push(values.map(String));
          await gate;
          return divideOne(values);
        },
        runMany: async ([xs]) => {
          sent.push(xs!.map(String));
          await gate;
          return divideMany(xs!);
        },
      },
      true,
      holdLimitMs,
    );
    return { batch, open };
  }
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  it("holds the calls made in later turns while a statement is out, and sends them together once it answers", async () => {
    const sent: string[][] = [];
    const { batch, open } = gatedDivisions(sent, 60_000);
    const first = batch.run([4]);
    await nextTurn();
    expect(sent).toEqual([["4"]]);
    const later: Promise<{ q: number } | undefined>[] = [];
    for (const x of [5, 2, 10]) {
      later.push(batch.run([x]));
      await nextTurn();
    }
    expect(sent).toEqual([["4"]]);
    open();
    expect(await first).toEqual({ q: 25 });
    expect(await Promise.all(later)).toEqual([{ q: 20 }, { q: 50 }, { q: 10 }]);
    // One statement for the three, in resource (here: text) order.
    expect(sent).toEqual([["4"], ["10", "2", "5"]]);
  });

  it("holds calls behind a statement that does not answer no longer than the hold limit", async () => {
    const sent: string[][] = [];
    const { batch, open } = gatedDivisions(sent, 20);
    const first = batch.run([4]);
    await nextTurn();
    const second = batch.run([5]);
    for (let i = 0; i < 200 && sent.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    // Sent while the first is still out.
    expect(sent).toEqual([["4"], ["5"]]);
    open();
    expect(await Promise.all([first, second])).toEqual([{ q: 25 }, { q: 20 }]);
  });

  it("when the server refuses a statement of many, runs each call again alone, so only the failing call fails", async () => {
    const sent: string[] = [];
    const batch = divisions(sent);
    const results = await Promise.allSettled([5, 0, 20].map((x) => batch.run([x])));
    expect(results[0]).toEqual({ status: "fulfilled", value: { q: 20 } });
    expect(results[1]).toMatchObject({ status: "rejected", reason: { code: "22012" } });
    expect(results[2]).toEqual({ status: "fulfilled", value: { q: 5 } });
    expect(sent).toEqual(["many", "one", "one", "one"]);
  });

  it("runs a call alone again when the server rolled it back to break a deadlock, and answers it", async () => {
    const [first, second] = [Math.floor(Math.random() * 1e9), Math.floor(Math.random() * 1e9) + 1];
    let runs = 0;
    // The call takes `first`, then waits for `second`, which the other session holds.
    const batch = new CallBatch<{ q: number }>({
      runOne: async () => {
        runs++;
        return (await pool.query<{ q: number }>("SELECT 7 AS q FROM (SELECT pg_advisory_xact_lock($1), pg_advisory_xact_lock($2)) AS locks", [first, second])).rows[0];
      },
      runMany: async () => [],
    });
    const other = new pg.Client({ connectionString: TEST_DATABASE_URL });
    other.on("error", () => {});
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT pg_advisory_xact_lock($1)", [second]);
      const answer = batch.run([1]);
      // Once the call waits for `second`, the other session asks for `first`: a cycle. The call
      // has waited longer, so its deadlock check runs first and rolls it back.
      for (let i = 0; i < 500; i++) {
        const { rows } = await pool.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid::text::bigint = $1::bigint", [second]);
        if (rows[0].n > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await other.query("SELECT pg_advisory_xact_lock($1)", [first]);
      await other.query("COMMIT");
      expect(await answer).toEqual({ q: 7 });
      expect(runs).toBe(2);
    } finally {
      await other.end();
    }
  });

  it("gives every call of a statement whose connection failed that error, without sending them again (the statement may have committed)", async () => {
    const sent: string[] = [];
    const lost = new Error("Connection terminated unexpectedly");
    const batch = new CallBatch<{ q: number }>({
      runOne: async () => {
        sent.push("one");
        return { q: 1 };
      },
      runMany: async () => {
        sent.push("many");
        throw lost;
      },
    });
    const results = await Promise.allSettled([1, 2, 3].map((x) => batch.run([x])));
    expect(results.map((r) => (r.status === "rejected" ? r.reason : r.value))).toEqual([lost, lost, lost]);
    expect(sent).toEqual(["many"]);
  });

  it("splits more calls than one statement takes into several, answering each", async () => {
    const sent: string[] = [];
    const batch = divisions(sent);
    const xs = Array.from({ length: 150 }, (_, i) => i + 1);
    const answers = await Promise.all(xs.map((x) => batch.run([x])));
    expect(answers).toEqual(xs.map((x) => ({ q: Math.trunc(100 / x) })));
    expect(sent).toEqual(["many", "many", "many"]);
  });

  it("answers each call with its own row when sorting by the first value reorders them", async () => {
    const ids = Array.from({ length: 5 }, () => randomUUID());
    const batch = new CallBatch<{ id: string }>({
      runOne: async (values) => (await pool.query<{ id: string }>("SELECT $1::uuid::text AS id", [...values])).rows[0],
      runMany: async ([xs]) => (await pool.query<{ id: string; n: string }>("SELECT n, x::text AS id FROM unnest($1::uuid[]) WITH ORDINALITY AS u(x, n)", [xs])).rows,
    });
    expect(await Promise.all(ids.map((id) => batch.run([id])))).toEqual(ids.map((id) => ({ id })));
  });
});
