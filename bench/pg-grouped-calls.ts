/**
 * The Postgres store's grouped calls against the statement they replaced, for one question: what
 * does the server spend per acquire+release pair when a statement's calls run set-based (the
 * store's `leaseCallsMany`, one call of `lease_calls`) rather than one function call per lease
 * (`perCallStatement` below: each call sets up its own statements, opening the tables and indexes
 * and an executor, per call)? Both do the case this bench makes: every resource free at acquire,
 * every release by its holder.
 *
 * Two sides, one connection each, in alternating rounds, each sending CALLS acquires as one
 * statement and then their CALLS releases as another, as the store's group commit does for
 * loops in step. Prints pairs/s and the backend's CPU a pair (from /proc: the server must run on
 * this machine), and checks that both wrote the same events.
 *
 * Knobs: LW_PROFILE_SECONDS (4) per side per round, LW_PROFILE_ROUNDS (4), LW_PROFILE_CALLS (16).
 * Run: `node --import tsx bench/pg-grouped-calls.ts`.
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { PostgresLeaseStore } from "@leasewatch/lease";
import { buildLeaseStatements, quoteSchema } from "@leasewatch/lease/internal";
import { freshPgSchema } from "@leasewatch/lease/testing";
import { backendCpuUs, connectBackend, groupedPairValues } from "./pg-backend";

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

/** One function call per lease, in one statement: the store's grouped statement before `lease_calls`. */
function perCallStatement(schema: string): string {
  const s = quoteSchema(schema);
  return `
    SELECT u.n, x.* FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::boolean[])
      WITH ORDINALITY AS u(resource, call, owner, task, ttl_ms, lease_id, after_loss, n)
    CROSS JOIN LATERAL (
      SELECT a.outcome, NULL::text AS verdict FROM ${s}.lease_acquire(u.resource, u.owner, u.task, u.ttl_ms, u.lease_id::uuid) a WHERE u.call = 'acquire'
      UNION ALL
      SELECT NULL, r.verdict FROM ${s}.lease_release(u.resource, u.lease_id, u.after_loss) r WHERE u.call = 'release'
    ) x`;
}

async function main(): Promise<void> {
  const fresh = freshPgSchema();
  const store = new PostgresLeaseStore({ name: "grouped-calls", connectionString: fresh.connectionString, schema: fresh.schema });
  const sides: Side[] = [];
  try {
    await store.migrate();
    await store.close();
    const expect = (what: string, got: number) => {
      if (got !== CALLS) throw new Error(`grouped calls: ${what} did ${got} of ${CALLS}`);
    };
    const base = { pairs: 0, cpuUs: 0, seconds: 0 };
    const statements = [
      { name: "per-call", text: perCallStatement(fresh.schema) },
      { name: "store", text: buildLeaseStatements(fresh.schema).leaseCallsMany },
    ];
    for (const { name, text } of statements) {
      const connection = await connectBackend(fresh.connectionString, `${fresh.schema}_${name}`);
      const calls = (values: unknown[]) => connection.client.query({ name: `calls_${name}`, text, values });
      sides.push({
        name,
        ...connection,
        ...base,
        async cycle(resources) {
          const { acquires, releases } = groupedPairValues(resources, resources.map(() => randomUUID()), "grouped-calls", TTL_MS);
          const acquired = await calls(acquires);
          expect("acquire", acquired.rows.filter((r: { outcome: string }) => r.outcome === "acquired").length);
          const released = await calls(releases);
          expect("release", released.rows.filter((r: { verdict: string }) => r.verdict === "ok").length);
        },
      });
    }
    console.log(`${CALLS} calls a statement, one connection a side, ${SECONDS} s a side in ${ROUNDS} alternating rounds`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of sides) {
        // Each side its own resources, so neither waits on the other's locks.
        const resources = Array.from({ length: CALLS }, (_, i) => `grouped:${side.name}:${i}`);
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
        [`grouped:${side.name}:%`],
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
