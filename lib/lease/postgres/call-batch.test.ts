import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { TEST_DATABASE_URL } from "../testing/isolation";
import { postgresStoreFixtures, stallInsertsBy } from "@/test/support/postgres-tests";
import { CallBatch } from "./call-batch";
import { SLACK_BUCKET_COUNT } from "../types";
import { buildLeaseStatements } from "./sql";

describe("calls made together go to Postgres as one statement", () => {
  const { raw, fresh } = postgresStoreFixtures();

  /**
   * How many transactions wrote `schema`'s rows of `table` for `resources`: rows a transaction inserted share its
   * xmin, and so do the lease rows it last updated (a renew).
   */
  async function countWritingTransactions(schema: string, resources: string[], table: "lease_events" | "leases" = "lease_events"): Promise<number> {
    const { rows } = await raw.query(`SELECT count(DISTINCT xmin::text)::int AS n FROM "${schema}".${table} WHERE resource = ANY($1::text[])`, [resources]);
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

  it("answers every kind of call in a shared statement as alone: the common cases set-based, each other call by its own function", async () => {
    const { store, spec } = await fresh();
    const acquire = async (resource: string, ttlMs = 30_000) => {
      const r = await store.acquire({ resource, owner: "before", task: "t", ttlMs });
      if (!r.acquired) throw new Error(`expected a grant of ${resource}`);
      return r.lease;
    };
    const held = await acquire("mix:held");
    await acquire("mix:lapsed-taken", 100);
    const lapsedReleased = await acquire("mix:lapsed-released", 100);
    const lost = await acquire("mix:lost");
    const done = await acquire("mix:done");
    const first = await store.release({ resource: "mix:done", leaseId: done.leaseId });
    if (!first.released) throw new Error("expected the first release to end the lease");
    const chosen = randomUUID();
    const ended = randomUUID();
    const endedLease = await store.acquire({ resource: "mix:ended", owner: "before", task: "t", ttlMs: 30_000, leaseId: ended });
    if (!endedLease.acquired || !(await store.release({ resource: "mix:ended", leaseId: ended })).released) throw new Error("expected a lease that ended");
    // Both 100 ms leases lapse on the server's clock before the statement.
    await raw.query("SELECT pg_sleep(0.15)");

    // One statement, as the store sends a turn's calls: [resource, call, owner, task, ttl, lease id, after a deadline loss].
    const calls: [string, string, string | null, string | null, number | null, string, boolean | null][] = [
      ["mix:free", "acquire", "w1", "t", 30_000, randomUUID(), null], // free: granted, set-based
      ["mix:free", "acquire", "w2", "t", 30_000, randomUUID(), null], // the second of one resource: contended by w1
      ["mix:held", "acquire", "w3", "t", 30_000, randomUUID(), null], // held: contended
      ["mix:lapsed-taken", "acquire", "w4", "t", 30_000, randomUUID(), null], // lapsed: taken over
      ["mix:chosen", "acquire_once", "w5", "t", 30_000, chosen, null], // a chosen id
      ["mix:chosen", "acquire_once", "w5", "t", 30_000, chosen, null], // its copy: the same lease
      ["mix:lapsed-released", "release", null, null, null, lapsedReleased.leaseId, false], // lapsed: its expiry, refused
      ["mix:lost", "release", null, null, null, lost.leaseId, true], // after a deadline loss: an expiry, ok
      ["mix:done", "release", null, null, null, done.leaseId, false], // a repeat: the first release's answer
      ["mix:none", "release", null, null, null, "not-a-uuid", false], // refused: not_owner
      ["mix:ended", "acquire_once", "w6", "t", 30_000, ended, null], // a chosen id whose lease ended: never granted again
    ];
    const columns = calls[0]!.map((_, column) => calls.map((call) => call[column]));
    const client = await raw.connect();
    let rows: Record<string, unknown>[];
    let functionCalls: Record<string, number>;
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL track_functions = 'pl'");
      rows = (await client.query(buildLeaseStatements(spec.schema).leaseCallsMany, columns)).rows;
      const stats = await client.query<{ funcname: string; calls: string }>(
        "SELECT funcname, calls FROM pg_stat_xact_user_functions WHERE schemaname = $1 AND funcname IN ('lease_calls', 'lease_acquire', 'lease_acquire_once', 'lease_release')",
        [spec.schema],
      );
      functionCalls = Object.fromEntries(stats.rows.map((r) => [r.funcname, Number(r.calls)]));
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    const answer = (n: number) => rows.find((r) => Number(r.n) === n);
    expect(rows).toHaveLength(calls.length);
    expect(answer(1)).toMatchObject({ outcome: "acquired", took_over: false, owner: "w1", lease_id: calls[0]![5] });
    expect(answer(2)).toMatchObject({ outcome: "contended", owner: "w1", lease_id: calls[0]![5] });
    expect(answer(3)).toMatchObject({ outcome: "contended", owner: "before", lease_id: held.leaseId });
    expect(answer(4)).toMatchObject({ outcome: "acquired", took_over: true, owner: "w4" });
    expect(answer(5)).toMatchObject({ outcome: "acquired", took_over: false, lease_id: chosen });
    expect({ ...answer(6), n: null }).toEqual({ ...answer(5), n: null });
    expect(answer(7)).toMatchObject({ verdict: "expired", id: null, kind: null });
    expect(answer(8)).toMatchObject({ verdict: "ok", kind: "expired", owner: "before" });
    expect(answer(9)).toMatchObject({ verdict: "ok", kind: "released", id: first.event.id });
    expect(answer(10)).toMatchObject({ verdict: "not_owner", id: null });
    expect(answer(11)).toMatchObject({ outcome: "ended", lease_id: null });
    // Free grants (a chosen id's first too), releases by the holder and acquires of a resource a
    // live lease holds ran as set-based statements; the rest one function call each (the takeover of
    // the lapsed lease; the chosen id's copy, answered from the lease row it found).
    expect(functionCalls).toEqual({ lease_calls: 1, lease_acquire: 1, lease_acquire_once: 2, lease_release: 2 });

    const { rows: events } = await raw.query(
      `SELECT resource, kind, owner, detail->>'recordedBy' AS by FROM "${spec.schema}".lease_events WHERE owner <> 'before' OR kind <> 'acquired' ORDER BY resource, id`,
    );
    expect(events).toEqual([
      { resource: "mix:chosen", kind: "acquired", owner: "w5", by: null },
      { resource: "mix:done", kind: "released", owner: "before", by: null },
      { resource: "mix:ended", kind: "released", owner: "before", by: null },
      { resource: "mix:free", kind: "acquired", owner: "w1", by: null },
      { resource: "mix:free", kind: "contended", owner: "w2", by: null },
      { resource: "mix:held", kind: "contended", owner: "w3", by: null },
      { resource: "mix:lapsed-released", kind: "expired", owner: "before", by: "release" },
      { resource: "mix:lapsed-taken", kind: "expired", owner: "before", by: "acquire" },
      { resource: "mix:lapsed-taken", kind: "acquired", owner: "w4", by: null },
      { resource: "mix:lost", kind: "expired", owner: "before", by: "release_after_deadline" },
    ]);
    const refusals = await raw.query(`SELECT reason, n::int FROM "${spec.schema}".lease_release_failures ORDER BY reason`);
    expect(refusals.rows).toEqual([
      { reason: "expired", n: 1 },
      { reason: "not_owner", n: 1 },
    ]);
    expect((await store.list({ prefix: "mix:" })).items.map((l) => [l.resource, l.owner]).sort()).toEqual([
      ["mix:chosen", "w5"],
      ["mix:free", "w1"],
      ["mix:held", "before"],
      ["mix:lapsed-taken", "w4"],
    ]);
  });

  it("refuses acquires of held resources made in one turn together, each answer and event as a lone acquire's", async () => {
    const { store, spec } = await fresh();
    const hold = async (resource: string, owner: string) => {
      const r = await store.acquire({ resource, owner, task: "job", ttlMs: 30_000 });
      if (!r.acquired) throw new Error(`expected a grant of ${resource}`);
      return r.lease;
    };
    const a = await hold("refuse:a", "holder-a");
    const b = await hold("refuse:b", "holder-b");
    // Alone: the call runs lease_acquire, as every refusal did before.
    const alone = await store.acquire({ resource: "refuse:a", owner: "alone", task: "t", ttlMs: 30_000 });
    const together = await Promise.all([
      store.acquire({ resource: "refuse:a", owner: "g1", task: "t", ttlMs: 30_000 }),
      store.acquire({ resource: "refuse:b", owner: "g2", task: "t", ttlMs: 30_000 }),
      store.acquire({ resource: "refuse:a", owner: "g3", task: "t", ttlMs: 30_000 }),
      store.acquire({ resource: "refuse:free", owner: "g4", task: "t", ttlMs: 30_000 }),
    ]);
    const holderOf = (lease: typeof a) => ({ owner: lease.owner, task: lease.task, leaseId: lease.leaseId, expiresAt: lease.expiresAt, fencingToken: lease.fencingToken });
    expect(alone).toEqual({ acquired: false, holder: holderOf(a) });
    expect(together.slice(0, 3)).toEqual([
      { acquired: false, holder: holderOf(a) },
      { acquired: false, holder: holderOf(b) },
      { acquired: false, holder: holderOf(a) },
    ]);
    expect(together[3]).toMatchObject({ acquired: true, lease: { owner: "g4" } });
    const { rows } = await raw.query(
      `SELECT resource, lease_id::text, owner, task, fencing_token::text, hold_ms, actor, reason, detail, xmin::text AS tx FROM "${spec.schema}".lease_events WHERE kind = 'contended' ORDER BY id`,
    );
    const event = (resource: string, lease: typeof a, owner: string) => ({
      resource,
      lease_id: lease.leaseId,
      owner,
      task: "t",
      fencing_token: lease.fencingToken,
      hold_ms: null,
      actor: null,
      reason: null,
      detail: { holderOwner: lease.owner, holderTask: "job" },
    });
    expect(rows.map((row) => ({ ...row, tx: undefined }))).toEqual([
      event("refuse:a", a, "alone"),
      event("refuse:a", a, "g1"),
      event("refuse:a", a, "g3"),
      event("refuse:b", b, "g2"),
    ]);
    // The three refusals of the turn and the grant beside them committed as one.
    const grant = await raw.query(`SELECT xmin::text AS tx FROM "${spec.schema}".lease_events WHERE resource = 'refuse:free'`);
    expect(new Set([...rows.slice(1).map((row) => row.tx), grant.rows[0].tx]).size).toBe(1);
    expect(rows[0].tx).not.toBe(rows[1].tx);
  });

  it("with groupCommit: false, sends every call alone: its own statement and commit", async () => {
    const { open, spec } = await fresh();
    const store = open({ options: { groupCommit: false } });
    const resources = Array.from({ length: 6 }, (_, i) => `batch:alone:${i}`);
    const results = await Promise.all(resources.map((resource) => store.acquire({ resource, owner: "w", task: "t", ttlMs: 30_000 })));
    expect(results.every((r) => r.acquired)).toBe(true);
    expect(await countWritingTransactions(spec.schema, resources)).toBe(6);
    const renewed = await Promise.all(results.map((r) => (r.acquired ? store.renew({ resource: r.lease.resource, leaseId: r.lease.leaseId, ttlMs: 30_000 }) : null)));
    expect(renewed.every((r) => r?.renewed)).toBe(true);
    expect(await countWritingTransactions(spec.schema, resources, "leases")).toBe(6);
  });

  /** The renewals counted in `schema`'s slack rollup, per old TTL and slack bucket. */
  async function slackCounts(schema: string): Promise<{ ttl_ms: number; slack_bucket: number; renewals: number }[]> {
    const { rows } = await raw.query(
      `SELECT ttl_ms, slack_bucket, sum(renewals)::int AS renewals FROM "${schema}".lease_renewal_slack GROUP BY 1, 2 ORDER BY 1, 2`,
    );
    return rows;
  }

  it("renews leases made in one turn together: each renewed once with its own TTL, its slack counted, one commit", async () => {
    const { store, spec } = await fresh();
    const resources = Array.from({ length: 12 }, (_, i) => `batch:renew:${i}`);
    // A long TTL, so renewing at once lands in the top slack bucket however slow the machine (a twentieth of it: 30 s).
    const granted = await Promise.all(resources.map((resource) => store.acquire({ resource, owner: "w", task: "t", ttlMs: 600_000 })));
    const leases = granted.map((r) => {
      if (!r.acquired) throw new Error("expected a grant");
      return r.lease;
    });
    const renewed = await Promise.all(leases.map((l, i) => store.renew({ resource: l.resource, leaseId: l.leaseId, ttlMs: 40_000 + i })));
    expect(renewed.map((r) => (r.renewed ? r.renewals : r.reason))).toEqual(resources.map(() => 1));
    expect(await countWritingTransactions(spec.schema, resources, "leases")).toBe(1);
    // Each answer is its own row's new expiry, and the row holds the TTL its own call asked for.
    const rows = await Promise.all(leases.map((l) => store.get(l.resource)));
    rows.forEach((row, i) => {
      const answer = renewed[i]!;
      if (!answer.renewed) throw new Error("expected a renewal");
      expect(row).toMatchObject({ leaseId: leases[i]!.leaseId, ttlMs: 40_000 + i, renewals: 1, expiresAt: answer.expiresAt });
      expect(answer.expiresAt.getTime() - row!.renewedAt.getTime()).toBe(40_000 + i);
    });
    // Renewed at once after the grant: almost the whole old TTL was left, the top slack bucket.
    expect(await slackCounts(spec.schema)).toEqual([{ ttl_ms: 600_000, slack_bucket: SLACK_BUCKET_COUNT - 1, renewals: 12 }]);
    const { rows: events } = await raw.query(`SELECT count(*)::int AS n FROM "${spec.schema}".lease_events WHERE kind <> 'acquired'`);
    expect(events[0].n).toBe(0);
  });

  it("answers each renew of a shared turn as alone: a second renew of one lease, a stranger's, a lapsed one, a lease that never was", async () => {
    const { store, spec } = await fresh();
    const acquire = async (resource: string, ttlMs: number) => {
      const r = await store.acquire({ resource, owner: "w", task: "t", ttlMs });
      if (!r.acquired) throw new Error(`expected a grant of ${resource}`);
      return r.lease;
    };
    const live = await acquire("renew-mix:live", 30_000);
    const other = await acquire("renew-mix:other", 30_000);
    const lapsed = await acquire("renew-mix:lapsed", 100);
    await raw.query("SELECT pg_sleep(0.15)");
    const [first, second, stranger, late, absent] = await Promise.all([
      store.renew({ resource: live.resource, leaseId: live.leaseId, ttlMs: 20_000 }),
      store.renew({ resource: live.resource, leaseId: live.leaseId, ttlMs: 20_000 }),
      store.renew({ resource: other.resource, leaseId: randomUUID(), ttlMs: 20_000 }),
      store.renew({ resource: lapsed.resource, leaseId: lapsed.leaseId, ttlMs: 20_000 }),
      store.renew({ resource: "renew-mix:none", leaseId: "not-a-uuid", ttlMs: 20_000 }),
    ]);
    expect([first, second].map((r) => (r.renewed ? r.renewals : r.reason)).sort()).toEqual([1, 2]);
    expect(stranger).toEqual({ renewed: false, reason: "not_owner" });
    expect(late).toEqual({ renewed: false, reason: "expired" });
    expect(absent).toEqual({ renewed: false, reason: "not_owner" });
    expect(await store.get(live.resource)).toMatchObject({ leaseId: live.leaseId, renewals: 2, ttlMs: 20_000 });
    expect(await store.get(other.resource)).toMatchObject({ leaseId: other.leaseId, renewals: 0, ttlMs: 30_000 });
    expect(await store.get(lapsed.resource)).toBeNull();
    const { rows: events } = await raw.query(
      `SELECT resource, kind, reason, detail->>'recordedBy' AS by FROM "${spec.schema}".lease_events WHERE kind <> 'acquired' ORDER BY resource, kind`,
    );
    expect(events).toEqual([
      { resource: "renew-mix:lapsed", kind: "expired", reason: null, by: "renew" },
      { resource: "renew-mix:lapsed", kind: "renew_failed", reason: "expired", by: null },
      { resource: "renew-mix:none", kind: "renew_failed", reason: "not_owner", by: null },
      { resource: "renew-mix:other", kind: "renew_failed", reason: "not_owner", by: null },
    ]);
    // Only the two renewals that succeeded are counted.
    expect((await slackCounts(spec.schema)).reduce((sum, row) => sum + row.renewals, 0)).toBe(2);
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
        `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() AND position('lease_calls(' IN query) > 0 AND position($1 IN query) > 0`,
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

  it("two processes' batches that release their own leases and acquire each other's, in opposite orders, never wait on each other in a cycle", async () => {
    const { store, open, spec } = await fresh();
    const other = open({ name: "pg-test" });
    for (let round = 0; round < 10; round++) {
      const resources = ["a", "b", "c", "d"].map((r) => `batch:swap:${round}:${r}`);
      const hold = async (s: typeof store, resource: string, owner: string) => {
        const r = await s.acquire({ resource, owner, task: "t", ttlMs: 30_000 });
        if (!r.acquired) throw new Error(`expected a grant of ${resource}`);
        return r.lease;
      };
      const mine = [await hold(store, resources[0]!, "one"), await hold(store, resources[1]!, "one")];
      const theirs = [await hold(other, resources[2]!, "two"), await hold(other, resources[3]!, "two")];
      const swap = (s: typeof store, own: typeof mine, wanted: string[], owner: string) =>
        Promise.all([
          ...own.map((l) => s.release({ resource: l.resource, leaseId: l.leaseId })),
          ...wanted.map((resource) => s.acquire({ resource, owner, task: "t", ttlMs: 30_000 })),
        ]);
      const [oneSide, twoSide] = await Promise.all([
        swap(store, mine, resources.slice(2), "one"),
        swap(other, [...theirs].reverse(), resources.slice(0, 2).reverse(), "two"),
      ]);
      expect([...oneSide.slice(0, 2), ...twoSide.slice(0, 2)].every((r) => "released" in r && r.released)).toBe(true);
      // Whichever statement went first met the other's leases still held; the second took the two it freed.
      const granted = [...oneSide, ...twoSide].flatMap((r) => ("acquired" in r && r.acquired ? [r.lease.resource] : []));
      expect(granted).toHaveLength(2);
      const held = (await store.list({ prefix: `batch:swap:${round}:` })).items;
      expect(held.map((l) => l.resource).sort()).toEqual(granted.sort());
      // Each side's four calls committed as its one statement (a deadlock would have rolled one back
      // and run its calls again one by one), beside the four grants made before.
      expect(await countWritingTransactions(spec.schema, resources)).toBe(6);
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

  it("runs each call the shared statement left without a row again alone, and answers it with that row", async () => {
    const sent: string[][] = [];
    // The shared statement answers only even x; a lone call answers every x.
    const batch = new CallBatch<{ q: number }>({
      runOne: async (values) => {
        sent.push(["one", ...values.map(String)]);
        return divideOne(values);
      },
      runMany: async ([xs]) => {
        sent.push(["many", ...xs!.map(String)]);
        return (await divideMany(xs!)).filter((row) => Number(xs![Number(row.n) - 1]) % 2 === 0);
      },
    });
    expect(await Promise.all([2, 5, 4, 1].map((x) => batch.run([x])))).toEqual([{ q: 50 }, { q: 20 }, { q: 25 }, { q: 100 }]);
    expect(sent.slice(0, 1)).toEqual([["many", "1", "2", "4", "5"]]);
    expect(sent.slice(1).sort()).toEqual([
      ["one", "1"],
      ["one", "5"],
    ]);
  });

  it.each([
    ["grouping", true],
    ["groupCommit: false", false],
  ])("runs a call alone again when the server rolled it back to break a deadlock, and answers it (%s)", async (_mode, isGrouping) => {
    const [first, second] = [Math.floor(Math.random() * 1e9), Math.floor(Math.random() * 1e9) + 1];
    let runs = 0;
    // The call takes `first`, then waits for `second`, which the other session holds.
    const batch = new CallBatch<{ q: number }>(
      {
        runOne: async () => {
          runs++;
          return (await pool.query<{ q: number }>("SELECT 7 AS q FROM (SELECT pg_advisory_xact_lock($1), pg_advisory_xact_lock($2)) AS locks", [first, second])).rows[0];
        },
        runMany: async () => [],
      },
      isGrouping,
    );
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
