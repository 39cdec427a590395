/**
 * What the event table's secondary indexes cost the Postgres store's write path: the store's
 * grouped statement (`lease_calls`, as the store sends it) on schemas that differ only in those
 * indexes. Each event row enters every index of its partition, and a pair writes two rows.
 *
 * Sides, each on a schema of its own with one connection, in rotating rounds:
 *   - as migrated, and the same again: the spread between two identical schemas, against which a
 *     side's difference means something;
 *   - `at` as a BRIN index instead of a B-tree (events are appended in time order);
 *   - without the fencing-token index;
 *   - the kind index over the rare kinds only (a partial index without `acquired` and `released`);
 *   - without any of the seven secondary indexes (the primary key stays): their cost together;
 *   - one event row a pair: the grant's `acquired` event left out of `lease_calls`.
 * Every cycle sends CALLS acquires as one statement and their CALLS releases as another. Prints
 * pairs/s and the backend's CPU a pair (from /proc: the server must run on this machine), each
 * side's ratio to "as migrated" as the median of the same-round ratios, and checks that every side
 * wrote one `acquired` (but the last) and one `released` event a pair.
 *
 * Knobs: LW_PROFILE_SECONDS (4) per side per round, LW_PROFILE_ROUNDS (6), LW_PROFILE_CALLS (16).
 * Run: `node --import tsx bench/pg-event-indexes.ts`.
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { PostgresLeaseStore } from "@leasewatch/lease";
import { buildLeaseStatements, quoteSchema } from "@leasewatch/lease/internal";
import { freshPgSchema } from "@leasewatch/lease/testing";
import { median } from "./lease-bench";
import { backendCpuUs, connectBackend, groupedPairValues, type BackendConnection } from "./pg-backend";

const SECONDS = Number(process.env.LW_PROFILE_SECONDS ?? 4);
const ROUNDS = Number(process.env.LW_PROFILE_ROUNDS ?? 6);
const CALLS = Number(process.env.LW_PROFILE_CALLS ?? 16);
const TTL_MS = 30_000;

const SECONDARY_INDEXES = ["at", "fencing_token", "kind_id", "owner_id", "task_id", "resource_id", "lease_id"];

interface Variant {
  name: string;
  /** Applied to the migrated schema before measuring. */
  change?: (client: pg.Client, schema: string) => Promise<unknown>;
  /** The grouped statement writes no `acquired` event on this side. */
  noAcquiredEvent?: boolean;
}

/** A variant that runs `sql(quoted schema)`. */
function run(sql: (s: string) => string): Variant["change"] {
  return (client, schema) => client.query(sql(quoteSchema(schema)));
}

/**
 * `lease_calls` without its grant's `acquired` event: what one event row a pair instead of two
 * would save, if an event could carry both ends of a hold (the release's row would carry a little
 * more, so this is an upper bound).
 */
async function withoutAcquiredEvent(client: pg.Client, schema: string): Promise<void> {
  const { rows } = await client.query<{ def: string }>(`SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p WHERE p.proname = 'lease_calls' AND p.pronamespace = $1::regnamespace`, [
    quoteSchema(schema),
  ]);
  const definition = rows[0]?.def ?? "";
  const edited = definition.replace(/ev AS \(\s*INSERT INTO [^\n]*\n\s*SELECT i\.acquired_at, 'acquired'[^\n]*FROM ins i\s*\)/, "ev AS (SELECT 1)");
  if (edited === definition) throw new Error("event indexes: lease_calls no longer has the grant's event insert this bench removes");
  await client.query(edited);
}

const VARIANTS: readonly Variant[] = [
  { name: "as migrated" },
  { name: "as migrated, again" },
  { name: "at: BRIN", change: run((s) => `DROP INDEX ${s}.lease_events_at_idx; CREATE INDEX lease_events_at_brin ON ${s}.lease_events USING brin (at)`) },
  { name: "no token index", change: run((s) => `DROP INDEX ${s}.lease_events_fencing_token_idx`) },
  {
    name: "kind: rare only",
    change: run(
      (s) => `DROP INDEX ${s}.lease_events_kind_id_idx; CREATE INDEX lease_events_kind_id_idx ON ${s}.lease_events (kind, id) WHERE kind NOT IN ('acquired', 'released')`,
    ),
  },
  { name: "no secondary", change: run((s) => SECONDARY_INDEXES.map((index) => `DROP INDEX ${s}.lease_events_${index}_idx;`).join(" ")) },
  { name: "one event a pair", change: withoutAcquiredEvent, noAcquiredEvent: true },
];

interface Side extends BackendConnection {
  variant: Variant;
  schema: string;
  drop(): Promise<void>;
  /** Pairs measured. */
  pairs: number;
  /** Pairs written, the untimed round's too. */
  written: number;
  cpuUs: number;
  seconds: number;
  /** CPU µs a pair, per round. */
  rounds: number[];
}

async function openSide(variant: Variant): Promise<Side> {
  const fresh = freshPgSchema();
  const store = new PostgresLeaseStore({ name: "event-indexes", connectionString: fresh.connectionString, schema: fresh.schema });
  await store.migrate();
  await store.close();
  const connection = await connectBackend(fresh.connectionString, `${fresh.schema}_event_indexes`);
  await variant.change?.(connection.client, fresh.schema);
  return { ...connection, variant, schema: fresh.schema, drop: async () => void (await fresh.drop()), pairs: 0, written: 0, cpuUs: 0, seconds: 0, rounds: [] };
}

async function runRound(side: Side, resources: string[], measure = true): Promise<void> {
  const text = buildLeaseStatements(side.schema).leaseCallsMany;
  const calls = (values: unknown[]) => side.client.query({ name: "lease_calls", text, values });
  const cpuBefore = backendCpuUs(side.backendPid);
  const startedAt = performance.now();
  let pairs = 0;
  while (performance.now() < startedAt + (measure ? SECONDS : 1) * 1000) {
    const { acquires, releases } = groupedPairValues(resources, resources.map(() => randomUUID()), "event-indexes", TTL_MS);
    await calls(acquires);
    await calls(releases);
    pairs += resources.length;
  }
  const cpuUs = backendCpuUs(side.backendPid) - cpuBefore;
  side.written += pairs;
  if (!measure) return;
  side.seconds += (performance.now() - startedAt) / 1000;
  side.cpuUs += cpuUs;
  side.pairs += pairs;
  side.rounds.push(cpuUs / pairs);
}

/** Every side must have written the same record: one acquired and one released event a pair. */
async function checkEvents(side: Side): Promise<void> {
  const { rows } = await side.client.query<{ kind: string; n: number }>(`SELECT kind, count(*)::int AS n FROM ${quoteSchema(side.schema)}.lease_events GROUP BY kind`);
  const counts: Record<string, number> = Object.fromEntries(rows.map((r) => [r.kind, r.n]));
  const acquired = side.variant.noAcquiredEvent ? undefined : side.written;
  if (rows.length !== (acquired === undefined ? 1 : 2) || counts.acquired !== acquired || counts.released !== side.written) {
    throw new Error(`event indexes: "${side.variant.name}" wrote ${JSON.stringify(counts)} for ${side.written} pairs`);
  }
}

async function main(): Promise<void> {
  const sides: Side[] = [];
  try {
    for (const variant of VARIANTS) sides.push(await openSide(variant));
    const resources = Array.from({ length: CALLS }, (_, i) => `event-indexes:${i}`);
    // One untimed round each first: the statement's plans, the catalog caches and the first
    // pages of each index are set up then, not in a measured round.
    for (const side of sides) await runRound(side, resources, false);
    console.log(`${CALLS} calls a statement, one connection a side, ${SECONDS} s a side in ${ROUNDS} rotating rounds`);
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate who goes first, so no side always follows the same one.
      for (let i = 0; i < sides.length; i++) await runRound(sides[(round + i) % sides.length]!, resources);
    }
    const base = sides[0]!;
    for (const side of sides) {
      await checkEvents(side);
      const ratio = side === base ? "" : `  ${median(side.rounds.map((cpu, round) => cpu / base.rounds[round]!)).toFixed(2)}× the CPU of "${base.variant.name}"`;
      console.log(
        `${side.variant.name.padEnd(20)} ${(side.pairs / side.seconds).toFixed(0).padStart(6)} pairs/s  backend CPU ${(side.cpuUs / side.pairs).toFixed(1).padStart(6)} µs a pair${ratio}`,
      );
    }
  } finally {
    for (const side of sides) {
      await side.client.end().catch(() => undefined);
      await side.drop();
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
