/**
 * A prototype of set-based statements for the Postgres store's grouped calls, for one question
 * only: how much of the server's time per acquire+release pair is the per-call machinery (one
 * function call per lease, each running its own statements, each opening the tables and indexes
 * and setting up an executor), and how much the rows themselves? It is not a store: it does only
 * the case this bench makes (every resource free at acquire, every release by its holder), where
 * the store's functions handle contention, lapsed leases, chosen ids and refusals as well.
 *
 * Two sides, one connection each, in alternating rounds, each sending CALLS acquires as one
 * statement and then their CALLS releases as another, as the store's group commit does for
 * loops in step:
 * - `functions`: the store's own grouped statement (`leaseCallsMany`, one function call a lease);
 * - `set-based`: one INSERT of every lease row and one of every `acquired` event, then one DELETE
 *   of every lease row and one INSERT of every `released` event; the same rows, advisory locks and
 *   then row locks in resource order, the clock read after them, tokens from the same sequence.
 * Prints pairs/s and the backend's CPU a pair (from /proc: the server must run on this machine).
 *
 * Knobs: LW_PROFILE_SECONDS (4) per side per round, LW_PROFILE_ROUNDS (4), LW_PROFILE_CALLS (16).
 * Run: `node --import tsx bench/pg-set-prototype.ts`.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { PostgresLeaseStore } from "@leasewatch/lease";
import { buildLeaseStatements, quoteSchema } from "@leasewatch/lease/internal";
import { freshPgSchema } from "@leasewatch/lease/testing";
import { readProcessCpuSeconds } from "./lease-bench";

const SECONDS = Number(process.env.LW_PROFILE_SECONDS ?? 4);
const ROUNDS = Number(process.env.LW_PROFILE_ROUNDS ?? 4);
const CALLS = Number(process.env.LW_PROFILE_CALLS ?? 16);
const TTL_MS = 30_000;

interface Side {
  name: string;
  client: pg.Client;
  backendPid: number;
  /** One acquire statement and one release statement for `resources`; throws unless every call did what it should. */
  cycle(resources: string[]): Promise<void>;
  pairs: number;
  cpuUs: number;
  seconds: number;
}

function backendCpuUs(pid: number): number {
  const seconds = readProcessCpuSeconds(pid);
  if (seconds === null) throw new Error(`prototype: cannot read the CPU of backend ${pid} (the server must run on this machine)`);
  return seconds * 1e6;
}

function setBasedStatements(schema: string): { acquire: string; release: string } {
  const s = quoteSchema(schema);
  const events = `${s}.lease_events (at, kind, resource, lease_id, owner, task, fencing_token, hold_ms, detail)`;
  // The advisory locks in resource order, then the rows' locks (waiting for a release still
  // deleting one), then the clock, as lease_acquire takes them per call.
  const acquire = `
    WITH locked AS MATERIALIZED (
      SELECT u.resource, u.owner, u.task, u.ttl_ms, u.lease_id, pg_advisory_xact_lock(hashtext('${schema}'), hashtext(u.resource))
      FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::uuid[]) AS u(resource, owner, task, ttl_ms, lease_id)
      ORDER BY u.resource
    ), cur AS MATERIALIZED (
      SELECT l.resource FROM ${s}.leases l WHERE l.resource IN (SELECT k.resource FROM locked k) ORDER BY l.resource FOR UPDATE
    ), clk AS MATERIALIZED (SELECT clock_timestamp() AS now FROM (SELECT count(*) FROM locked) l, (SELECT count(*) FROM cur) c),
    ins AS (
      INSERT INTO ${s}.leases AS l (resource, lease_id, owner, task, fencing_token, acquired_at, renewed_at, expires_at, ttl_ms, renewals)
      SELECT k.resource, k.lease_id, k.owner, k.task, nextval('${s}.lease_fencing_seq'), c.now, c.now, c.now + k.ttl_ms * interval '1 millisecond', k.ttl_ms, 0
      FROM locked k, clk c
      ON CONFLICT (resource) DO NOTHING
      RETURNING l.*
    ), ev AS (
      INSERT INTO ${events}
      SELECT i.acquired_at, 'acquired', i.resource, i.lease_id, i.owner, i.task, i.fencing_token, NULL, jsonb_build_object('ttlMs', i.ttl_ms) FROM ins i
    )
    SELECT count(*)::int AS n FROM ins`;
  const release = `
    WITH d AS (
      DELETE FROM ${s}.leases l USING unnest($1::text[], $2::uuid[]) AS u(resource, lease_id)
      WHERE l.resource = u.resource AND l.lease_id = u.lease_id
      RETURNING l.*, clock_timestamp() AS now
    ), ev AS (
      INSERT INTO ${events}
      SELECT d.now, 'released', d.resource, d.lease_id, d.owner, d.task, d.fencing_token,
             round(extract(epoch FROM (d.now - d.acquired_at)) * 1000)::bigint, jsonb_build_object('renewals', d.renewals)
      FROM d
    )
    SELECT count(*)::int AS n FROM d`;
  return { acquire, release };
}

async function connect(connectionString: string, name: string): Promise<{ client: pg.Client; backendPid: number }> {
  const client = new pg.Client({ connectionString, application_name: name });
  client.on("error", () => undefined);
  await client.connect();
  const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  return { client, backendPid: rows[0]!.pid };
}

async function main(): Promise<void> {
  const fresh = freshPgSchema();
  const store = new PostgresLeaseStore({ name: "prototype", connectionString: fresh.connectionString, schema: fresh.schema });
  const sides: Side[] = [];
  try {
    await store.migrate();
    await store.close();
    const grouped = buildLeaseStatements(fresh.schema).leaseCallsMany;
    const set = setBasedStatements(fresh.schema);
    const expect = (what: string, got: number) => {
      if (got !== CALLS) throw new Error(`prototype: ${what} did ${got} of ${CALLS}`);
    };
    const functions = await connect(fresh.connectionString, `${fresh.schema}_functions`);
    const setBased = await connect(fresh.connectionString, `${fresh.schema}_set`);
    const base = { pairs: 0, cpuUs: 0, seconds: 0 };
    sides.push({
      name: "functions",
      ...functions,
      ...base,
      async cycle(resources) {
        const ids = resources.map(() => randomUUID());
        const none = resources.map(() => null);
        const acquired = await functions.client.query({
          name: "functions_calls",
          text: grouped,
          values: [resources, resources.map(() => "acquire"), resources.map(() => "bench"), resources.map(() => "prototype"), resources.map(() => TTL_MS), ids, none],
        });
        expect("acquire", acquired.rows.filter((r: { outcome: string }) => r.outcome === "acquired").length);
        const released = await functions.client.query({
          name: "functions_calls",
          text: grouped,
          values: [resources, resources.map(() => "release"), none, none, none, ids, resources.map(() => false)],
        });
        expect("release", released.rows.filter((r: { verdict: string }) => r.verdict === "ok").length);
      },
    });
    sides.push({
      name: "set-based",
      ...setBased,
      ...base,
      async cycle(resources) {
        const ids = resources.map(() => randomUUID());
        const acquired = await setBased.client.query({
          name: "set_acquire",
          text: set.acquire,
          values: [resources, resources.map(() => "bench"), resources.map(() => "prototype"), resources.map(() => TTL_MS), ids],
        });
        expect("acquire", acquired.rows[0].n);
        const released = await setBased.client.query({ name: "set_release", text: set.release, values: [resources, ids] });
        expect("release", released.rows[0].n);
      },
    });
    console.log(`${CALLS} calls a statement, one connection a side, ${SECONDS} s a side in ${ROUNDS} alternating rounds`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of sides) {
        // Each side its own resources, so neither waits on the other's locks.
        const resources = Array.from({ length: CALLS }, (_, i) => `prototype:${side.name}:${i}`);
        const cpuBefore = backendCpuUs(side.backendPid);
        const startedAt = performance.now();
        const until = startedAt + SECONDS * 1000;
        let pairs = 0;
        while (performance.now() < until) {
          await side.cycle(resources);
          pairs += CALLS;
        }
        side.seconds += (performance.now() - startedAt) / 1000;
        side.cpuUs += backendCpuUs(side.backendPid) - cpuBefore;
        side.pairs += pairs;
      }
    }
    const first = sides[0]!;
    for (const side of sides) {
      const rate = side.pairs / side.seconds;
      const ratio = side === first ? "" : `  ${(rate / (first.pairs / first.seconds)).toFixed(2)}× ${first.name}`;
      // Both sides must have written the same record: an acquired and a released event a pair.
      const { rows } = await side.client.query<{ kind: string; n: number }>(
        `SELECT kind, count(*)::int AS n FROM ${quoteSchema(fresh.schema)}.lease_events WHERE resource LIKE $1 GROUP BY kind ORDER BY kind`,
        [`prototype:${side.name}:%`],
      );
      const events = rows.map((r) => `${r.kind} ${r.n}`).join(", ");
      console.log(
        `${side.name.padEnd(10)} ${rate.toFixed(0).padStart(6)} pairs/s  backend CPU ${(side.cpuUs / side.pairs).toFixed(1).padStart(6)} µs a pair${ratio}  (${side.pairs} pairs; events: ${events})`,
      );
    }
  } finally {
    for (const side of sides) await side.client.end().catch(() => undefined);
    await fresh.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
