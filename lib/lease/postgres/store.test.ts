import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { LeaseError } from "../errors";
import type { Lease } from "../types";
import { describeLeaseStoreContract } from "../testing/contract";
import { freshPgSchema, sleep, TEST_DATABASE_URL } from "../testing/isolation";
import { startPostgres, stopAllServers } from "@/test/support/servers";
import { postgresStoreFixtures, stallInsertsBy as stallInserts } from "@/test/support/postgres-tests";
import { createStoreFixture } from "@/test/support/stores";
import { MIGRATIONS, runMigrations } from "./migrations";
import { PostgresLeaseStore } from "./store";

describeLeaseStoreContract("postgres", () => createStoreFixture("postgres"));

describe("PostgresLeaseStore (Postgres specifics)", () => {
  const fixtures = postgresStoreFixtures();
  const { raw } = fixtures;
  /** A migrated store on its own schema (`raw` looks underneath). */
  async function fresh() {
    const f = await fixtures.fresh();
    return { store: f.store, schema: f.spec.schema };
  }

  /** Sessions waiting for a lock (row, transaction or advisory) in a statement on `schema`'s tables. */
  async function countLockWaiters(schema: string): Promise<number> {
    const { rows } = await raw.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE wait_event_type = 'Lock' AND datname = current_database() AND position($1 IN query) > 0`,
      [`"${schema}".`],
    );
    return Number(rows[0].n);
  }
  /** Polls `predicate` (no fixed sleeps standing in for "long enough"); gives up after ~10 s. */
  async function waitUntil(what: string, predicate: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 1_000; i++) {
      if (await predicate()) return;
      await sleep(10);
    }
    throw new Error(`timed out waiting until ${what}`);
  }

  const stallInsertsBy = (schema: string, owner: string, key: number) => stallInserts(raw, schema, owner, key);

  it("validates options: unknown option, both or neither connection, bad schema, bad name", () => {
    const cases: Array<[string, unknown]> = [
      ["unknown option", { name: "pg", connectionString: TEST_DATABASE_URL, poolSize: 3 }],
      ["neither", { name: "pg" }],
      ["both", { name: "pg", connectionString: TEST_DATABASE_URL, pool: raw }],
      ["schema with a quote", { name: "pg", connectionString: TEST_DATABASE_URL, schema: 'x"; DROP SCHEMA public; --' }],
      ["upper-case schema", { name: "pg", connectionString: TEST_DATABASE_URL, schema: "Leases" }],
      ["bad store name", { name: "PG Main", connectionString: TEST_DATABASE_URL }],
      ["pool that is not a pool", { name: "pg", pool: { query: 1 } }],
    ];
    for (const [what, options] of cases) {
      expect(() => new PostgresLeaseStore(options as never), what).toThrow(LeaseError);
    }
  });

  it("folds per-group hold and slack histograms into lifetime tables on refresh without changing what groupTotals() reads", async () => {
    const { store, schema } = await fresh();
    const q = `"${schema}"`;
    for (let i = 0; i < 6; i++) {
      const r = await store.acquire({ resource: `fold:g${i % 3}:r${i}`, owner: "o", task: "t", ttlMs: 60_000 });
      if (!r.acquired) throw new Error("setup: acquire failed");
      await store.renew({ resource: r.lease.resource, leaseId: r.lease.leaseId, ttlMs: 60_000 });
      await store.release({ resource: r.lease.resource, leaseId: r.lease.leaseId });
    }
    // Two hours ago: past the refresh's final minute and final hour, so a refresh folds them.
    await raw.query(`UPDATE ${q}.lease_events SET at = at - interval '2 hours'`);
    await raw.query(`UPDATE ${q}.lease_renewal_slack SET bucket_start = bucket_start - interval '2 hours'`);
    const late = await store.acquire({ resource: "fold:g0:late", owner: "o", task: "t", ttlMs: 60_000 });
    if (!late.acquired) throw new Error("setup: acquire failed");
    await store.renew({ resource: "fold:g0:late", leaseId: late.lease.leaseId, ttlMs: 60_000 });
    await store.release({ resource: "fold:g0:late", leaseId: late.lease.leaseId });

    const query = { prefixDepth: 2, maxGroups: 10 };
    const before = await store.groupTotals(query);
    expect(before.hold.map((g) => [g.group, g.counts.reduce((a, b) => a + b, 0)])).toEqual([["fold:g0", 3], ["fold:g1", 2], ["fold:g2", 2]]);
    expect((await raw.query(`SELECT count(*)::int AS n FROM ${q}.lease_group_holds`)).rows[0].n).toBe(0);

    await store.refreshRollups();
    const folded = await raw.query(`SELECT sum(holds)::int AS holds FROM ${q}.lease_group_holds`);
    expect(folded.rows[0].holds).toBe(6);
    expect((await raw.query(`SELECT sum(renewals)::int AS n FROM ${q}.lease_group_slack`)).rows[0].n).toBe(6);
    expect(await store.groupTotals(query)).toEqual(before);
    // A second refresh folds nothing twice.
    await store.refreshRollups();
    expect((await raw.query(`SELECT sum(holds)::int AS holds FROM ${q}.lease_group_holds`)).rows[0].holds).toBe(6);
    expect(await store.groupTotals(query)).toEqual(before);
    // A refresh from a back-dated `since` folds the holds again from the first event, not on top.
    await store.refreshRollups({ since: new Date(Date.now() - 3 * 3_600_000) });
    expect((await raw.query(`SELECT sum(holds)::int AS holds FROM ${q}.lease_group_holds`)).rows[0].holds).toBe(6);
    expect(await store.groupTotals(query)).toEqual(before);
  });

  it("migrate() is idempotent and safe to run concurrently", async () => {
    const f = freshPgSchema();
    const stores = Array.from({ length: 5 }, () => new PostgresLeaseStore({ name: "pg-m", connectionString: f.connectionString, schema: f.schema }));
    try {
      const results = await Promise.all(stores.map((s) => s.migrate()));
      const latest = Math.max(...MIGRATIONS.map((m) => m.version));
      // Exactly one call applied everything; the others waited on the lock and found nothing to do.
      expect(results.filter((r) => r.applied.length > 0)).toHaveLength(1);
      expect(results.flatMap((r) => r.applied).sort()).toEqual(MIGRATIONS.map((m) => m.version).sort());
      expect(results.every((r) => r.version === latest)).toBe(true);

      const again = await stores[0]!.migrate();
      expect(again).toEqual({ applied: [], version: latest });
      const ledger = await raw.query(`SELECT version FROM "${f.schema}".schema_migrations ORDER BY version`);
      expect(ledger.rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));

      const tables = await raw.query("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1", [f.schema]);
      expect(tables.rows.map((r) => r.table_name)).toEqual(
        expect.arrayContaining(["leases", "lease_events", "lease_stats_minute", "lease_stats_hour", "schema_migrations"]),
      );
      // The store works after the concurrent migration.
      expect((await stores[1]!.acquire({ resource: "m:1", owner: "o", task: "t", ttlMs: 1_000 })).acquired).toBe(true);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await f.drop();
    }
  });

  it("sends one statement per acquire, renew, release and force-release, whatever the outcome", async () => {
    // Every statement any pooled connection sends, counted where it leaves the client.
    let statements: string[] = [];
    class CountingClient extends pg.Client {
      override query(...args: unknown[]): never {
        const first = args[0];
        statements.push(typeof first === "string" ? first : String((first as { text?: unknown }).text));
        return (super.query as (...a: unknown[]) => never)(...args);
      }
    }
    const f = freshPgSchema();
    const pool = new pg.Pool({ connectionString: f.connectionString, max: 4, Client: CountingClient });
    pool.on("error", () => {});
    const store = new PostgresLeaseStore({ name: "pg-count", pool, schema: f.schema });
    try {
      await store.migrate();
      const countOf = async (what: string, call: () => Promise<unknown>) => {
        statements = [];
        await call();
        expect(statements, `${what}: ${statements.join(" | ").slice(0, 400)}`).toHaveLength(1);
      };
      let lease: Lease | undefined;
      await countOf("acquire of a free resource", async () => {
        const r = await store.acquire({ resource: "rt:1", owner: "a", task: "t", ttlMs: 10_000 });
        if (r.acquired) lease = r.lease;
      });
      if (!lease) throw new Error("expected to acquire");
      const held = lease;
      await countOf("contended acquire", () => store.acquire({ resource: "rt:1", owner: "b", task: "t", ttlMs: 10_000 }));
      await countOf("renew", () => store.renew({ resource: "rt:1", leaseId: held.leaseId, ttlMs: 10_000 }));
      await countOf("renew by a stranger", () => store.renew({ resource: "rt:1", leaseId: randomUUID(), ttlMs: 10_000 }));
      await countOf("release by a stranger", () => store.release({ resource: "rt:1", leaseId: randomUUID() }));
      await countOf("release", () => store.release({ resource: "rt:1", leaseId: held.leaseId }));
      const forced = await store.acquire({ resource: "rt:2", owner: "a", task: "t", ttlMs: 10_000 });
      if (!forced.acquired) throw new Error("expected to acquire");
      await countOf("force-release of a changed lease", () => store.forceRelease({ resource: "rt:2", leaseId: randomUUID(), actor: "oncall", reason: "r" }));
      await countOf("force-release", () => store.forceRelease({ resource: "rt:2", leaseId: forced.lease.leaseId, actor: "oncall", reason: "r" }));
      await store.acquire({ resource: "rt:3", owner: "a", task: "t", ttlMs: 100 });
      await sleep(250);
      await countOf("acquire taking over a lapsed lease", async () => {
        expect(await store.acquire({ resource: "rt:3", owner: "b", task: "t", ttlMs: 10_000 })).toMatchObject({ acquired: true, tookOverExpired: true });
      });
    } finally {
      await store.close();
      await pool.end();
      await f.drop();
    }
  });

  it("upgrades from every older schema version: data written before migrate() survives and works after it", async () => {
    const latest = Math.max(...MIGRATIONS.map((m) => m.version));
    const older = MIGRATIONS.map((m) => m.version).filter((v) => v < latest);
    expect(older.length, "there is an older version to upgrade from").toBeGreaterThan(0);
    for (const from of older) {
      const f = freshPgSchema();
      const store = new PostgresLeaseStore({ name: "pg-up", connectionString: f.connectionString, schema: f.schema });
      const s = `"${f.schema}"`;
      try {
        const pool = new pg.Pool({ connectionString: f.connectionString, max: 2 });
        pool.on("error", () => {});
        try {
          expect(await runMigrations(pool, f.schema, MIGRATIONS.filter((m) => m.version <= from))).toEqual({
            applied: MIGRATIONS.filter((m) => m.version <= from).map((m) => m.version),
            version: from,
          });
        } finally {
          await pool.end();
        }
        // Written with the version-1 columns only, as a store of that version would have:
        // a held lease with its acquired event, a lapsed one not yet swept, and a finished one.
        const written = await raw.query<{ resource: string; lease_id: string; fencing_token: string }>(`
          WITH l AS (
            INSERT INTO ${s}.leases (resource, lease_id, owner, task, fencing_token, acquired_at, renewed_at, expires_at, ttl_ms, renewals)
            SELECT r, gen_random_uuid(), 'old-owner', 'old-task', nextval('${s}.lease_fencing_seq'), now(), now(),
                   now() + CASE WHEN r = 'up:held' THEN interval '1 hour' ELSE interval '-1 second' END, 3600000, 0
            FROM unnest(ARRAY['up:held', 'up:lapsed']) AS r
            RETURNING resource, lease_id, owner, task, fencing_token, acquired_at, ttl_ms
          ), e AS (
            INSERT INTO ${s}.lease_events (at, kind, resource, lease_id, owner, task, fencing_token, detail)
            SELECT acquired_at, 'acquired', resource, lease_id, owner, task, fencing_token, jsonb_build_object('ttlMs', ttl_ms) FROM l
            UNION ALL
            SELECT now() - interval '2 minutes', k, 'up:done', '00000000-0000-4000-8000-000000000001', 'old-owner', 'old-task', 1, NULL
            FROM unnest(ARRAY['acquired', 'released']) AS k
          )
          SELECT resource, lease_id::text, fencing_token::text FROM l`);
        const held = written.rows.find((r) => r.resource === "up:held")!;
        const lapsed = written.rows.find((r) => r.resource === "up:lapsed")!;

        const migrated = await store.migrate();
        expect(migrated, `from version ${from}`).toEqual({ applied: MIGRATIONS.filter((m) => m.version > from).map((m) => m.version), version: latest });

        const at = `from version ${from}`;
        expect(await store.get("up:held"), at).toMatchObject({ leaseId: held.lease_id, owner: "old-owner", fencingToken: held.fencing_token });
        expect(await store.acquire({ resource: "up:held", owner: "new", task: "t", ttlMs: 5_000 }), at).toMatchObject({
          acquired: false,
          holder: { leaseId: held.lease_id },
        });
        expect((await store.renew({ resource: "up:held", leaseId: held.lease_id, ttlMs: 60_000 })).renewed, at).toBe(true);
        expect((await store.release({ resource: "up:held", leaseId: held.lease_id })).released, at).toBe(true);
        expect(await store.sweep(), at).toEqual({ expired: 1 });
        expect((await store.events({ resource: "up:lapsed", kinds: ["expired"] })).items.map((e) => e.leaseId), at).toEqual([lapsed.lease_id]);
        const next = await store.acquire({ resource: "up:lapsed", owner: "new", task: "t", ttlMs: 5_000 });
        if (!next.acquired) throw new Error(`${at}: expected to acquire`);
        expect(BigInt(next.lease.fencingToken) > BigInt(lapsed.fencing_token), at).toBe(true);
        // Stats read the history from before the upgrade too.
        await store.refreshRollups({ since: new Date(Date.now() - 3_600_000) });
        const buckets = await store.stats({ from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 60_000), bucketMs: 3_600_000 });
        const total = (kind: "acquired" | "released" | "expired") => buckets.reduce((n, b) => n + b.counts[kind], 0);
        expect([total("acquired"), total("released"), total("expired")], at).toEqual([4, 2, 1]);
      } finally {
        await store.close();
        await f.drop();
      }
    }
  });

  it("treats SQL in resource, owner and task as plain text", async () => {
    const { store, schema } = await fresh();
    const nasty = [`x'; DROP TABLE "${schema}".leases; --`, `"; DELETE FROM "${schema}".lease_events; --`, "a%_\\' OR '1'='1"];
    for (const resource of nasty) {
      const got = await store.acquire({ resource, owner: `o'); DROP TABLE x; --`, task: "$1", ttlMs: 5_000 });
      expect(got.acquired, resource).toBe(true);
      expect(await store.get(resource)).toMatchObject({ resource, owner: `o'); DROP TABLE x; --`, task: "$1" });
      expect((await store.list({ prefix: resource })).items.map((l) => l.resource)).toEqual([resource]);
      expect((await store.events({ resource })).items).toHaveLength(1);
    }
    // Nothing was dropped or deleted, and a LIKE-style prefix matches nothing.
    expect(await store.countActive()).toBe(3);
    expect((await store.list({ prefix: "a%" })).items.map((l) => l.resource)).toEqual([nasty[2]]);
    expect((await store.list({ prefix: "%" })).items).toEqual([]);
    const events = await raw.query(`SELECT count(*)::int AS n FROM "${schema}".lease_events`);
    expect(events.rows[0].n).toBe(3);
  });

  it("returns from acquire the lease get() reads, and from release the released event the history shows", async () => {
    const { store } = await fresh();
    const got = await store.acquire({ resource: "ret:1", owner: "o", task: "t", ttlMs: 5_000 });
    if (!got.acquired) throw new Error("not acquired");
    expect(got.lease).toEqual(await store.get("ret:1"));
    await store.renew({ resource: "ret:1", leaseId: got.lease.leaseId, ttlMs: 5_000 });
    const done = await store.release({ resource: "ret:1", leaseId: got.lease.leaseId });
    if (!done.released) throw new Error(`not released: ${done.reason}`);
    const [stored] = (await store.events({ resource: "ret:1", kinds: ["released"] })).items;
    expect(done.event).toEqual(stored);
    expect(done.event).toMatchObject({ kind: "released", leaseId: got.lease.leaseId, owner: "o", task: "t", detail: { renewals: 1 } });
    expect(done.holdMs).toBe(stored?.holdMs);
  });

  it("lets exactly one of many concurrent acquires of an absent resource win; the rest see the winner", async () => {
    const { store } = await fresh();
    for (let round = 0; round < 5; round++) {
      const resource = `race:${round}`;
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) => store.acquire({ resource, owner: `w${i}`, task: "t", ttlMs: 10_000 })),
      );
      const winners = results.filter((r) => r.acquired);
      expect(winners).toHaveLength(1);
      const winner = winners[0]!;
      if (!winner.acquired) throw new Error("unreachable");
      for (const r of results) {
        if (!r.acquired) expect(r.holder).toMatchObject({ leaseId: winner.lease.leaseId, owner: winner.lease.owner, fencingToken: winner.lease.fencingToken });
      }
      const events = await store.events({ resource, limit: 100 });
      const kinds = events.items.map((e) => e.kind).sort();
      expect(kinds.filter((k) => k === "acquired")).toHaveLength(1);
      expect(kinds.filter((k) => k === "contended")).toHaveLength(15);
    }
  });

  it("never issues a lower token after a higher one for a resource, even when an acquire stalls between taking its token and inserting", async () => {
    const { store, schema } = await fresh();
    const resource = "order:1";
    // An acquire by owner "slow" stops between taking its token and inserting its row.
    const stall = await stallInsertsBy(schema, "slow", 7_000_001);
    const slow = store.acquire({ resource, owner: "slow", task: "t", ttlMs: 10_000 });
    await waitUntil("the slow acquire is stalled in its insert", async () => (await countLockWaiters(schema)) >= 1);

    // Meanwhile a fast acquire runs to completion (and releases), or, if acquires of one
    // resource are serialised, queues behind the stalled one: either is observable.
    const fast = store.acquire({ resource, owner: "fast", task: "t", ttlMs: 10_000 }).then(async (r) => {
      if (r.acquired) await store.release({ resource, leaseId: r.lease.leaseId });
      return r;
    });
    let isFastDone = false;
    void fast.then(() => (isFastDone = true));
    await waitUntil("the fast acquire finished or queued", async () => isFastDone || (await countLockWaiters(schema)) >= 2);

    await stall.open();
    const [slowResult] = await Promise.all([slow, fast]);
    expect(slowResult.acquired).toBe(true);
    // In the order the grants happened (event ids are assigned as each grant is written),
    // tokens strictly increase.
    const grants = (await store.events({ resource, kinds: ["acquired"], order: "asc" })).items;
    expect(grants.length).toBeGreaterThanOrEqual(1);
    const tokens = grants.map((e) => BigInt(e.fencingToken!));
    for (let i = 1; i < tokens.length; i++) {
      expect(tokens[i]! > tokens[i - 1]!, `grant ${i} (${grants[i]!.owner}) token ${tokens[i]} after ${tokens[i - 1]} (${grants[i - 1]!.owner})`).toBe(true);
    }
  });

  /** A store on a fresh schema whose pool counts the statements it sends. */
  async function openCounting() {
    const counter = { statements: 0 };
    class CountingClient extends pg.Client {
      override query(...args: unknown[]): never {
        counter.statements += 1;
        return (super.query as (...a: unknown[]) => never)(...args);
      }
    }
    const f = freshPgSchema();
    const pool = new pg.Pool({ connectionString: f.connectionString, max: 4, Client: CountingClient });
    pool.on("error", () => {});
    const store = new PostgresLeaseStore({ name: "pg-race", pool, schema: f.schema });
    onTestFinished(async () => {
      await store.close();
      await pool.end();
      await f.drop();
    });
    await store.migrate();
    return { store, schema: f.schema, counter };
  }

  it("answers an acquire that loses the insert race with the winner, in the same single statement", async () => {
    const { store, schema, counter } = await openCounting();
    // "first" stalls inside its insert; "second" starts meanwhile, so its snapshot cannot
    // see first's row, and it reaches its own insert only after first has committed.
    const stall = await stallInsertsBy(schema, "first", 7_000_002);
    const first = store.acquire({ resource: "race:1", owner: "first", task: "t", ttlMs: 60_000 });
    await waitUntil("the first acquire is stalled in its insert", async () => (await countLockWaiters(schema)) >= 1);
    counter.statements = 0;
    const second = store.acquire({ resource: "race:1", owner: "second", task: "t", ttlMs: 60_000 });
    await waitUntil("the second acquire waits behind the first", async () => (await countLockWaiters(schema)) >= 2);
    await stall.open();
    const [won, lost] = await Promise.all([first, second]);
    if (!won.acquired) throw new Error("expected the first acquire to win");
    expect(lost).toMatchObject({ acquired: false, holder: { leaseId: won.lease.leaseId, owner: "first", fencingToken: won.lease.fencingToken } });
    expect(counter.statements, "statements sent by the losing acquire").toBe(1);
    const events = (await store.events({ resource: "race:1", order: "asc" })).items;
    expect(events.map((e) => [e.kind, e.owner])).toEqual([
      ["acquired", "first"],
      ["contended", "second"],
    ]);
    expect(events[1]).toMatchObject({ leaseId: won.lease.leaseId, fencingToken: won.lease.fencingToken, detail: { holderOwner: "first", holderTask: "t" } });
    expect(await store.get("race:1")).toMatchObject({ leaseId: won.lease.leaseId, renewals: 0 });
  });

  it("an acquire that waited behind a grant which lapsed meanwhile takes it over in its one statement, recording the expiry once", async () => {
    const { store, schema, counter } = await openCounting();
    // first's 100 ms lease is timed from before its stall, so it has lapsed by the time it is written.
    const stall = await stallInsertsBy(schema, "first", 7_000_003);
    const first = store.acquire({ resource: "race:2", owner: "first", task: "t", ttlMs: 100 });
    await waitUntil("the first acquire is stalled in its insert", async () => (await countLockWaiters(schema)) >= 1);
    counter.statements = 0;
    const second = store.acquire({ resource: "race:2", owner: "second", task: "t", ttlMs: 60_000 });
    await waitUntil("the second acquire waits behind the first", async () => (await countLockWaiters(schema)) >= 2);
    await sleep(200);
    await stall.open();
    const [won, next] = await Promise.all([first, second]);
    if (!won.acquired || !next.acquired) throw new Error("expected both to acquire, one after the other");
    expect(next.tookOverExpired).toBe(true);
    expect(BigInt(next.lease.fencingToken) > BigInt(won.lease.fencingToken)).toBe(true);
    // The acquire function reads the row after the advisory lock is granted, with a snapshot
    // taken then: it sees first's lapsed row and takes it over without a re-run.
    expect(counter.statements, "statements sent by the second acquire").toBe(1);
    const events = (await store.events({ resource: "race:2", order: "asc" })).items;
    expect(events.map((e) => [e.kind, e.owner])).toEqual([
      ["acquired", "first"],
      ["expired", "first"],
      ["acquired", "second"],
    ]);
  });

  it("records the takeover's expiry itself (tookOverExpired) and keeps the lapsed row visible until then", async () => {
    const { store } = await fresh();
    const first = await store.acquire({ resource: "lapse:1", owner: "a", task: "t", ttlMs: 150 });
    if (!first.acquired) throw new Error("expected to acquire");
    await sleep(300);
    // Lapsed but not yet swept: get() and the "lapsed" filter still show it.
    expect(await store.get("lapse:1")).toMatchObject({ leaseId: first.lease.leaseId });
    const lapsed = await store.list({ state: "lapsed" });
    expect(lapsed.items.map((l) => l.leaseId)).toEqual([first.lease.leaseId]);
    expect((await store.list({ state: "held" })).items).toEqual([]);

    const second = await store.acquire({ resource: "lapse:1", owner: "b", task: "t", ttlMs: 10_000 });
    expect(second).toMatchObject({ acquired: true, tookOverExpired: true });
    expect(await store.sweep()).toEqual({ expired: 0 });
    const expired = await store.events({ kinds: ["expired"] });
    expect(expired.items).toHaveLength(1);
    expect(expired.items[0]).toMatchObject({ leaseId: first.lease.leaseId, holdMs: 150, detail: expect.objectContaining({ renewals: 0, recordedBy: "acquire" }) });
  });

  it("a holder presenting its lapsed lease hears 'expired', and that call records the expiry once", async () => {
    const { store } = await fresh();
    const acquire = async (resource: string) => {
      const r = await store.acquire({ resource, owner: "a", task: "t", ttlMs: 150 });
      if (!r.acquired) throw new Error("expected to acquire");
      return r.lease;
    };
    const [byRelease, byRenew, byForce] = [await acquire("own:release"), await acquire("own:renew"), await acquire("own:force")];
    await sleep(300);
    expect(await store.release({ resource: byRelease.resource, leaseId: byRelease.leaseId })).toEqual({ released: false, reason: "expired" });
    expect(await store.renew({ resource: byRenew.resource, leaseId: byRenew.leaseId, ttlMs: 1_000 })).toEqual({ renewed: false, reason: "expired" });
    expect(await store.forceRelease({ resource: byForce.resource, leaseId: byForce.leaseId, actor: "oncall", reason: "stuck" })).toEqual({
      released: false,
      reason: "not_found",
      current: null,
    });
    expect(await store.sweep()).toEqual({ expired: 0 });
    const expired = (await store.events({ kinds: ["expired"], order: "asc" })).items;
    expect(expired.map((e) => [e.leaseId, e.detail?.recordedBy])).toEqual([
      [byRelease.leaseId, "release"],
      [byRenew.leaseId, "renew"],
      [byForce.leaseId, "force_release"],
    ]);
    const failed = (await store.events({ kinds: ["renew_failed"] })).items;
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ leaseId: byRenew.leaseId, owner: "a", reason: "expired", fencingToken: byRenew.fencingToken });
    expect(await store.countActive()).toBe(0);
  });

  it("sweeps exactly once per expiry with many concurrent sweepers and takeover acquires", async () => {
    const { store, schema } = await fresh();
    const n = 120;
    const leaseIds = new Set<string>();
    for (let i = 0; i < n; i += 20) {
      const batch = await Promise.all(
        Array.from({ length: 20 }, (_, j) => store.acquire({ resource: `many:${i + j}`, owner: "a", task: "t", ttlMs: 150 })),
      );
      for (const r of batch) if (r.acquired) leaseIds.add(r.lease.leaseId);
    }
    expect(leaseIds.size).toBe(n);
    await sleep(300);
    const work: Promise<unknown>[] = [];
    for (let s = 0; s < 8; s++) work.push(store.sweep());
    for (let i = 0; i < n; i += 2) work.push(store.acquire({ resource: `many:${i}`, owner: "b", task: "t", ttlMs: 10_000 }));
    for (let s = 0; s < 8; s++) work.push(store.sweep());
    await Promise.all(work);
    await store.sweep();
    const expired = await raw.query(
      `SELECT lease_id::text AS id, count(*)::int AS n FROM "${schema}".lease_events WHERE kind = 'expired' GROUP BY 1`,
    );
    expect(expired.rows).toHaveLength(n);
    expect(expired.rows.every((r) => r.n === 1 && leaseIds.has(r.id))).toBe(true);
    expect(await store.countActive()).toBe(n / 2);
  });

  it("a sweep skips a row another statement holds and never ends the lease that replaced it", async () => {
    const { store, schema } = await fresh();
    const old = await store.acquire({ resource: "held:1", owner: "a", task: "t", ttlMs: 150 });
    if (!old.acquired) throw new Error("expected to acquire");
    await sleep(300);
    // Another session holds the lapsed row (as a takeover acquire would) and replaces the lease.
    const other = await raw.connect();
    try {
      await other.query("BEGIN");
      await other.query(`SELECT 1 FROM "${schema}".leases WHERE resource = 'held:1' FOR UPDATE`);
      // The sweep must come back while the row is still locked: a sweep that waited for the
      // lock would show up as a lock waiter on this schema first.
      const sweeping = store.sweep();
      const outcome = await Promise.race([
        sweeping.then((result) => ({ returned: result })),
        waitUntil("a statement waits for a lock", async () => (await countLockWaiters(schema)) > 0).then(() => "waited for the lock"),
      ]);
      expect(outcome).toEqual({ returned: { expired: 0 } });
      const stillLocked = await raw.query(
        `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
         WHERE c.relname = 'leases' AND c.relnamespace = $1::regnamespace AND l.pid = $2 AND l.granted`,
        [schema, (await other.query("SELECT pg_backend_pid() AS pid")).rows[0].pid],
      );
      expect(stillLocked.rows[0].n, "the other session still holds the leases table lock while the sweep returned").toBeGreaterThan(0);
      await other.query(
        `UPDATE "${schema}".leases SET lease_id = gen_random_uuid(), expires_at = clock_timestamp() + interval '1 minute', renewed_at = clock_timestamp() WHERE resource = 'held:1'`,
      );
      await other.query("COMMIT");
      await sweeping;
    } finally {
      other.release();
    }
    expect(await store.sweep()).toEqual({ expired: 0 });
    const current = await store.get("held:1");
    expect(current).not.toBeNull();
    expect(current!.leaseId).not.toBe(old.lease.leaseId);
    expect((await store.events({ kinds: ["expired"] })).items).toEqual([]);
  });

  it("pages through events with a prefix that has unicode and byte-order neighbours", async () => {
    const { store } = await fresh();
    const names = ["é:1", "é:2", "é;", "éa", "e:1", "f", "é\u{10FFFF}x", "日本:1"];
    for (const resource of names) await store.acquire({ resource, owner: "o", task: "t", ttlMs: 5_000 });
    const got = async (prefix: string) => (await store.list({ prefix })).items.map((l) => l.resource).sort();
    expect(await got("é:")).toEqual(["é:1", "é:2"]);
    expect(await got("é")).toEqual(["é:1", "é:2", "é;", "éa", "é\u{10FFFF}x"].sort());
    expect(await got("é\u{10FFFF}")).toEqual(["é\u{10FFFF}x"]);
    expect(await got("日本")).toEqual(["日本:1"]);
    expect((await store.events({ prefix: "é:", limit: 10 })).items).toHaveLength(2);
  });

  it("reads stats the same from rollups as from raw events, across hour, minute and raw ranges", async () => {
    const { store, schema } = await fresh();
    // Three hours of history written straight into the event log (as a bulk import would).
    await raw.query(
      `INSERT INTO "${schema}".lease_events (at, kind, resource, lease_id, owner, task, fencing_token, hold_ms, detail)
       SELECT clock_timestamp() - (g * interval '7 seconds'),
              (ARRAY['acquired','released','expired','force_released','contended','renew_failed','lost','fencing_rejected'])[1 + g % 8],
              'tenant_' || (g % 5) || ':job:' || (g % 3), gen_random_uuid(), 'o', 't', g, (g * 37) % 4000000,
              jsonb_build_object('renewals', g % 4)
       FROM generate_series(1, 1500) AS g`,
    );
    const window = { from: new Date(Date.now() - 4 * 3_600_000), to: new Date(Date.now() + 60_000) };
    const rawOnly = {
      minute: await store.stats({ ...window, bucketMs: 60_000, prefixDepth: 1 }),
      hour: await store.stats({ ...window, bucketMs: 3_600_000, prefixDepth: 2 }),
      day: await store.stats({ ...window, bucketMs: 86_400_000, prefixDepth: 3 }),
    };
    const refreshed = await store.refreshRollups({ since: window.from });
    expect(refreshed.refreshed).toBe(true);
    const rollupRows = await raw.query(`SELECT count(*)::int AS n FROM "${schema}".lease_stats_hour`);
    expect(rollupRows.rows[0].n).toBeGreaterThanOrEqual(3);
    // Pretend the last refresh was 30 minutes ago, so the read stitches hour rollups, minute rollups and raw events.
    await raw.query(`UPDATE "${schema}".lease_rollup_state SET refreshed_at = clock_timestamp() - interval '30 minutes'`);
    const stitched = {
      minute: await store.stats({ ...window, bucketMs: 60_000, prefixDepth: 1 }),
      hour: await store.stats({ ...window, bucketMs: 3_600_000, prefixDepth: 2 }),
      day: await store.stats({ ...window, bucketMs: 86_400_000, prefixDepth: 3 }),
    };
    expect(stitched).toEqual(rawOnly);
    // And with the rollups fully current.
    await store.refreshRollups();
    expect(await store.stats({ ...window, bucketMs: 3_600_000, prefixDepth: 2 })).toEqual(rawOnly.hour);
    expect(await store.stats({ ...window, bucketMs: 86_400_000, prefixDepth: 3 })).toEqual(rawOnly.day);
    // Closed days are read from the day rollups: with the refresh a day later, today is one of them.
    await raw.query(`UPDATE "${schema}".lease_rollup_state SET refreshed_at = clock_timestamp() + interval '1 day'`);
    expect(await store.stats({ ...window, bucketMs: 86_400_000, prefixDepth: 3 })).toEqual(rawOnly.day);

    const total = rawOnly.hour.reduce((n, b) => n + Object.entries(b.counts).filter(([k]) => k !== "renewed").reduce((x, [, v]) => x + v, 0), 0);
    expect(total).toBe(1500);
    const terminal = rawOnly.hour.reduce((n, b) => n + b.counts.released + b.counts.expired + b.counts.force_released, 0);
    expect(rawOnly.hour.reduce((n, b) => n + b.holdHistogram.reduce((x, y) => x + y, 0), 0)).toBe(terminal);
    // Rollups hold data the raw table no longer has: deleting raw events older than the margin leaves stats intact.
    await raw.query(`DELETE FROM "${schema}".lease_events WHERE at < clock_timestamp() - interval '40 minutes'`);
    const afterDelete = await store.stats({ ...window, bucketMs: 3_600_000, prefixDepth: 2 });
    const sumAll = (buckets: typeof afterDelete) => buckets.reduce((n, b) => n + b.counts.acquired, 0);
    expect(sumAll(afterDelete)).toBe(sumAll(rawOnly.hour));
  });

  it("keeps the most contended prefixes per bucket (top 100) while the contended total stays exact", async () => {
    const { store, schema } = await fresh();
    // 150 prefixes contended once each, and three hot ones contended 5, 4 and 3 times.
    await raw.query(
      // All at now() (the transaction's start), so they share one minute and one hour bucket.
      `INSERT INTO "${schema}".lease_events (at, kind, resource, owner, task)
       SELECT now(), 'contended', 'cold_' || g || ':x', 'o', 't' FROM generate_series(1, 150) AS g
       UNION ALL SELECT now(), 'contended', 'hot_' || h || ':x', 'o', 't' FROM generate_series(1, 3) AS h, generate_series(1, 6 - h) AS n`,
    );
    const window = { from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 60_000) };
    for (const source of ["raw", "rollups"]) {
      if (source === "rollups") {
        await store.refreshRollups({ since: window.from });
        await raw.query(`UPDATE "${schema}".lease_rollup_state SET refreshed_at = clock_timestamp() + interval '2 hours'`);
      }
      const [hour] = (await store.stats({ ...window, bucketMs: 3_600_000, prefixDepth: 1 })).filter((b) => b.counts.contended > 0);
      expect(hour, source).toBeDefined();
      expect(hour!.counts.contended, source).toBe(162);
      const prefixes = Object.entries(hour!.contendedByPrefix).sort((a, b) => b[1] - a[1]);
      expect(prefixes, source).toHaveLength(100);
      expect(prefixes.slice(0, 3), source).toEqual([["hot_1", 5], ["hot_2", 4], ["hot_3", 3]]);
    }
  });

  it("puts each terminal event in the histogram bucket holdBucketIndex() would choose", async () => {
    const { store, schema } = await fresh();
    const holds = [0, 1, 10, 11, 25, 26, 3_600_000, 3_600_001, 99_999_999];
    await raw.query(
      `INSERT INTO "${schema}".lease_events (kind, resource, hold_ms, detail)
       SELECT 'released', 'h:' || h, h, '{"renewals": 1}'::jsonb FROM unnest($1::bigint[]) AS h`,
      [holds],
    );
    const { holdBucketIndex } = await import("../histogram");
    const expected = new Array<number>(18).fill(0);
    for (const h of holds) expected[holdBucketIndex(h)]! += 1;
    const buckets = await store.stats({ from: new Date(Date.now() - 60_000), to: new Date(Date.now() + 60_000), bucketMs: 60_000 });
    const histogram = new Array<number>(18).fill(0);
    for (const b of buckets) b.holdHistogram.forEach((n, i) => (histogram[i]! += n));
    expect(histogram).toEqual(expected);
    expect(buckets.reduce((n, b) => n + b.counts.renewed, 0)).toBe(holds.length);
  });

  it("reports a store that is down as unhealthy without throwing, and close() spares a pool it did not create", async () => {
    const down = new PostgresLeaseStore({ name: "pg-down", connectionString: "postgres://postgres@127.0.0.1:1/postgres" });
    const health = await down.health();
    expect(health).toMatchObject({ store: "pg-down", kind: "postgres", ok: false });
    expect(health.error).toBeTruthy();
    await down.close();

    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
    const f = freshPgSchema();
    const borrowed = new PostgresLeaseStore({ name: "pg-borrowed", pool, schema: f.schema });
    await borrowed.migrate();
    expect((await borrowed.health()).ok).toBe(true);
    await borrowed.close();
    expect((await pool.query("SELECT 1 AS one")).rows[0].one).toBe(1);
    await pool.end();
    await f.drop();
  });

  it("uses indexes for a prefix filter and the expiry sort at 50k leases", async () => {
    const { store, schema } = await fresh();
    await raw.query(
      `INSERT INTO "${schema}".leases (resource, lease_id, owner, task, fencing_token, acquired_at, renewed_at, expires_at, ttl_ms)
       SELECT 'tenant_' || (g % 500) || ':job:' || g, gen_random_uuid(), 'o', 't', nextval('"${schema}".lease_fencing_seq'),
              now(), now(), now() + (g % 600) * interval '1 second', 600000
       FROM generate_series(1, 50000) AS g`,
    );
    await raw.query(`ANALYZE "${schema}".leases`);
    const page = await store.list({ prefix: "tenant_42:", limit: 50 });
    expect(page.items.length).toBe(50);
    expect(page.items.every((l) => l.resource.startsWith("tenant_42:"))).toBe(true);
    const { buildListQuery } = await import("./sql");
    const plan = async (input: Parameters<typeof buildListQuery>[1]) => {
      const q = buildListQuery(schema, input);
      const client = await raw.connect();
      try {
        // EXPLAIN of a parameterised statement via a prepared statement.
        await client.query(`PREPARE lw_plan AS ${q.text}`);
        const args = q.values.map((v) => (v === null ? "NULL" : `'${String(v).replace(/'/g, "''")}'`)).join(", ");
        const out = await client.query(`EXPLAIN EXECUTE lw_plan(${args})`);
        await client.query("DEALLOCATE lw_plan");
        return out.rows.map((r) => r["QUERY PLAN"]).join("\n");
      } finally {
        client.release();
      }
    };
    const prefixPlan = await plan({ prefix: { value: "tenant_42:", upper: "tenant_42;" }, sort: "expires", limit: 51 });
    expect(prefixPlan).not.toMatch(/Seq Scan on leases/);
    const sortPlan = await plan({ sort: "expires", limit: 51 });
    expect(sortPlan).toMatch(/Index Scan using leases_expires_at_idx/);
  });
});

describe("PostgresLeaseStore across a crash of the database server", () => {
  afterAll(stopAllServers);

  it("keeps issuing higher fencing tokens after kill -9 and restart, and survives the dropped connections", async () => {
    const server = await startPostgres();
    const store = new PostgresLeaseStore({ name: "pg-crash", connectionString: server.url, schema: "leasewatch" });
    await store.migrate();
    let last = 0n;
    for (let i = 0; i < 40; i++) {
      const r = await store.acquire({ resource: `crash:${i % 3}`, owner: "o", task: "t", ttlMs: 5_000 });
      if (!r.acquired) throw new Error("expected to acquire");
      last = BigInt(r.lease.fencingToken);
      await store.release({ resource: r.lease.resource, leaseId: r.lease.leaseId });
    }
    await server.kill9();
    // Idle pooled connections die now; the pool's error listener keeps the process alive.
    expect((await store.health()).ok).toBe(false);
    await server.restart();
    let after: bigint | null = null;
    const failures: string[] = [];
    for (let attempt = 0; attempt < 50 && after === null; attempt++) {
      try {
        const r = await store.acquire({ resource: "crash:0", owner: "o", task: "t", ttlMs: 5_000 });
        if (r.acquired) after = BigInt(r.lease.fencingToken);
        else failures.push(`held by ${r.holder.owner}`);
      } catch (error) {
        failures.push(String(error)); // connections to the old server are being replaced
        await sleep(200);
      }
    }
    expect(after, failures.join("; ")).not.toBeNull();
    expect(after! > last).toBe(true);
    await store.close();
  });
});
