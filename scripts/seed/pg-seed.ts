import type { Pool, PoolClient } from "pg";
import { ensureEventPartitions, quoteSchema } from "@leasewatch/lease/internal";
import { assertValidHistory, toLeaseEvent, type SyntheticEvent } from "./history";

/**
 * Demo and benchmark data only: bulk writes into the Postgres store's own
 * tables (lib/lease/postgres/migrations.ts), with the same columns and the same
 * `detail` shapes its statements write. Fencing tokens come from the store's own
 * sequence, so every token stays unique and increasing and the live store keeps
 * issuing higher ones afterwards. Rollups are NOT written here: callers run the
 * store's own refreshRollups({ since }) afterwards.
 */

const BATCH_ROWS = 5_000;

interface EventRow {
  at: Date;
  kind: string;
  resource: string;
  leaseId: string | null;
  owner: string | null;
  task: string | null;
  token: string | null;
  holdMs: number | null;
  actor: string | null;
  reason: string | null;
  detail: string | null;
}

/** One synthetic event as the store's statements would have written it. */
function toEventRow(e: SyntheticEvent, token: (placeholder: string) => string): EventRow {
  const row: EventRow = {
    at: new Date(e.at),
    kind: e.kind,
    resource: e.resource,
    leaseId: e.leaseId,
    owner: e.owner,
    task: e.task,
    token: token(e.fencingToken),
    holdMs: e.holdMs ?? null,
    actor: e.actor ?? null,
    reason: e.reason ?? null,
    detail: null,
  };
  switch (e.kind) {
    case "acquired":
      row.detail = JSON.stringify({ ttlMs: 10_000 });
      break;
    case "released":
    case "force_released":
      row.detail = JSON.stringify({ renewals: e.renewals ?? 0 });
      break;
    case "expired":
      row.detail = JSON.stringify({ renewals: e.renewals ?? 0, expiredAt: new Date(e.expiredAt ?? e.at).toISOString(), recordedBy: "sweep" });
      break;
    case "contended":
      row.detail = JSON.stringify(e.detail ?? {});
      break;
    case "renew_failed":
      row.detail = JSON.stringify({ ttlMs: 3_000, leaseId: e.leaseId });
      break;
    case "lost":
      row.detail = JSON.stringify({ leaseId: e.leaseId });
      break;
    case "fencing_rejected": {
      const by = String(e.detail?.by ?? "ledger-db");
      row.actor = by;
      row.detail = JSON.stringify({ seenToken: token(String(e.detail?.seenToken ?? e.fencingToken)), by });
      break;
    }
  }
  return row;
}

/** Takes `count` tokens from the store's fencing sequence, in increasing order. */
async function takeTokens(client: PoolClient, schema: string, count: number): Promise<string[]> {
  if (count === 0) return [];
  const seq = `${quoteSchema(schema)}.lease_fencing_seq`;
  const { rows } = await client.query<{ tokens: string[] }>(
    `SELECT array_agg(t ORDER BY t)::text[] AS tokens FROM (SELECT nextval($1::regclass) AS t FROM generate_series(1, $2::int)) s`,
    [seq, count],
  );
  return rows[0]?.tokens ?? [];
}

/**
 * Inserts `events` (in time order; fencingToken = the hold's index as the
 * history generator numbers it) into lease_events in one transaction, mapping
 * hold indexes to real tokens from the store's sequence. With `validate`, the
 * events as the store will hold them (real tokens) must pass the history checks
 * first, or nothing is written.
 */
export async function writePostgresEvents(
  pool: Pool,
  schema: string,
  events: readonly SyntheticEvent[],
  options: { validate?: boolean } = {},
): Promise<number> {
  const s = quoteSchema(schema);
  // A loop, not Math.max(...list): spreading ~100k arguments overflows the call stack.
  let holds = 0;
  for (const e of events) {
    const index = Number(e.fencingToken);
    if (Number.isFinite(index) && index + 1 > holds) holds = index + 1;
  }
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const tokens = await takeTokens(client, schema, holds + 1);
    // Events come in time order: their days get partitions first, so rows skip the DEFAULT partition.
    const first = events[0];
    if (first) await ensureEventPartitions(client, schema, new Date(first.at), new Date());
    const token = (placeholder: string) => tokens[Number(placeholder)] ?? tokens[tokens.length - 1] ?? placeholder;
    if (options.validate) {
      assertValidHistory(
        events.map((e, i) => {
          const row = toEventRow(e, token);
          return toLeaseEvent(e, i, row.token ?? e.fencingToken, row.detail === null ? undefined : (JSON.parse(row.detail) as Record<string, unknown>));
        }),
        `backfill of schema ${schema}`,
      );
    }
    for (let i = 0; i < events.length; i += BATCH_ROWS) {
      const rows = events.slice(i, i + BATCH_ROWS).map((e) => toEventRow(e, token));
      await client.query(
        `INSERT INTO ${s}.lease_events (at, kind, resource, lease_id, owner, task, fencing_token, hold_ms, actor, reason, detail)
         SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::bigint[],
                              $8::bigint[], $9::text[], $10::text[], $11::jsonb[])`,
        [
          rows.map((r) => r.at),
          rows.map((r) => r.kind),
          rows.map((r) => r.resource),
          rows.map((r) => r.leaseId),
          rows.map((r) => r.owner),
          rows.map((r) => r.task),
          rows.map((r) => r.token),
          rows.map((r) => r.holdMs),
          rows.map((r) => r.actor),
          rows.map((r) => r.reason),
          rows.map((r) => r.detail),
        ],
      );
    }
    await client.query("COMMIT");
    return events.length;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** The newest event time in the store, or null when it has none. */
export async function readLatestEventAt(pool: Pool, schema: string): Promise<Date | null> {
  const { rows } = await pool.query<{ at: Date | null }>(`SELECT max(at) AS at FROM ${quoteSchema(schema)}.lease_events`);
  return rows[0]?.at ?? null;
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The event table's indexes other than its primary key, as pg_indexes defines them (name order). */
export async function readSecondaryEventIndexes(client: Pool | PoolClient, schema: string): Promise<Array<{ name: string; definition: string }>> {
  const { rows } = await client.query<{ name: string; definition: string }>(
    `SELECT i.indexname AS name, i.indexdef AS definition
     FROM pg_indexes i
     WHERE i.schemaname = $1 AND i.tablename = 'lease_events'
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname AND c.connamespace = $1::regnamespace)
     ORDER BY i.indexname`,
    [schema],
  );
  return rows;
}

/**
 * The schema's indexes as pg_indexes defines them, for tables that are not partitions, and the
 * partitions of lease_events that lack one of its indexes: migrate()'s and the seed's end
 * state must be equal.
 */
export async function describeIndexes(client: Pool | PoolClient, schema: string): Promise<{ definitions: string[]; partitionsMissingIndexes: number }> {
  const { rows } = await client.query<{ definition: string }>(
    `SELECT i.indexdef AS definition FROM pg_indexes i
     WHERE i.schemaname = $1
       AND NOT EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = format('%I.%I', i.schemaname, i.tablename)::regclass)
     ORDER BY i.tablename, i.indexname`,
    [schema],
  );
  const { rows: missing } = await client.query<{ n: string }>(
    `SELECT count(*) AS n FROM pg_inherits h
     WHERE h.inhparent = format('%I.lease_events', $1::text)::regclass
       AND (SELECT count(*) FROM pg_index x WHERE x.indrelid = h.inhrelid)
         < (SELECT count(*) FROM pg_index x WHERE x.indrelid = h.inhparent)`,
    [schema],
  );
  return { definitions: rows.map((r) => r.definition), partitionsMissingIndexes: Number(missing[0]?.n ?? 0) };
}

export interface PostgresBenchSeed {
  schema: string;
  /** Live leases to create (held, expiring over the next hour). */
  leases: number;
  /** At least this many history events, spread over [from, to). */
  events: number;
  from: Date;
  to: Date;
  /**
   * Write the history in this many time-ordered statements (default 1). At tens of
   * millions of rows one statement would sort everything at once and report nothing
   * until the end; slices keep each sort small and let the caller stop between them.
   */
  slices?: number;
  /** TTLs the live leases cycle through (default 5 min to 1 h); longer ones keep them live through a long seed. */
  liveTtlsMs?: readonly number[];
  /** Called after each slice with the rows written so far; throwing stops the seed (the caller drops the schema). */
  onSlice?: (done: { slice: number; slices: number; events: number }) => void;
  /** Called after each secondary index of the event table is built again. */
  onIndex?: (name: string) => void;
}

/**
 * Benchmark volume, generated inside Postgres (INSERT … SELECT generate_series):
 * ~`events` history events over [from, to) in time order — holds with clean
 * releases, expiries, force-releases, contention on hot resources and tenant
 * prefixes, lost leases and fencing rejections — then `leases` live leases whose
 * `acquired` events come last. Ids follow time, as they would in production.
 */
export async function seedPostgresBench(pool: Pool, seed: PostgresBenchSeed): Promise<{ events: number; leases: number }> {
  const s = quoteSchema(seed.schema);
  const seq = `'${s}.lease_fencing_seq'`;
  // Events per hold: acquired + ending + ~0.45 contended + ~0.06 (renew_failed, lost, fencing_rejected).
  const holds = Math.ceil(seed.events / 2.5);
  const stepMs = (seed.to.getTime() - seed.from.getTime()) / holds;
  const client = await pool.connect();
  try {
    await client.query("SELECT setseed(0.42)");
    await client.query("SET work_mem = '256MB'");
    await client.query("SET maintenance_work_mem = '512MB'");
    // Benchmark data: a crash mid-seed loses the seed anyway, so commits need not wait for the WAL flush.
    await client.query("SET synchronous_commit = off");
    // The event table's secondary indexes are built once after the load instead of row by row
    // during it, from their own definitions, so the end state is what migrate() made.
    const secondary = await readSecondaryEventIndexes(client, seed.schema);
    for (const index of secondary) await client.query(`DROP INDEX ${s}.${quoteIdent(index.name)}`);
    // The history's days get their partitions first, so rows go straight there (not through DEFAULT).
    await ensureEventPartitions(client, seed.schema, seed.from, new Date());
    // Live leases first: unique resources under realistic prefixes, renewed within the
    // last third of their TTL (minutes to an hour), held for up to two hours. Long TTLs
    // keep all of them live for the whole benchmark.
    const live = await client.query(
      `INSERT INTO ${s}.leases (resource, lease_id, owner, task, fencing_token, acquired_at, renewed_at, expires_at, ttl_ms, renewals)
       SELECT 'tenant_' || (g % 2000) || ':' || (ARRAY['invoice-sync', 'billing-close', 'report-export', 'webhook-retry', 'ledger-export'])[1 + (g / 2000) % 5]
                || ':batch-' || (g / 10000),
              gen_random_uuid(),
              'worker-' || (1 + g % 24) || '@' || (ARRAY['billing', 'invoicing', 'reports', 'mailer', 'sync'])[1 + g % 5] || '-7c9f',
              'run-' || (1000 + g % 9000),
              nextval(${seq}),
              renewed - (random() * 7200) * interval '1 second', renewed, renewed + ttl * interval '1 millisecond', ttl, (random() * 40)::int
       FROM (SELECT g, ttl, clock_timestamp() - (random() * ttl / 3) * interval '1 millisecond' AS renewed
             FROM (SELECT g, ($2::int[])[1 + g % cardinality($2::int[])] AS ttl FROM generate_series(0, $1::int - 1) AS g) t) src`,
      [seed.leases, seed.liveTtlsMs ?? [300_000, 600_000, 1_800_000, 3_600_000]],
    );
    // History, and the live leases' own "acquired" events, in time-ordered inserts (one per
    // slice of holds; the live leases' events go with the last, whose times they share).
    const slices = Math.max(1, Math.min(seed.slices ?? 1, holds));
    let written = 0;
    for (let slice = 0; slice < slices; slice++) {
      const isLast = slice === slices - 1;
      const events = await client.query(
        `WITH h AS MATERIALIZED (
           SELECT g,
                  $1::timestamptz + (g * $2::float8) * interval '1 millisecond' AS t,
                  random() AS r, random() AS r2,
                  CASE WHEN g % 10 < 5 THEN 'tenant_' || (1 + (hashint4(g) & 1023) % 400) || ':invoice-sync'
                       WHEN g % 10 < 7 THEN 'tenant_' || (1 + (hashint4(g + 7) & 1023) % 400) || ':billing-close:2026-11'
                       WHEN g % 10 < 8 THEN 'tenant_' || (1 + (hashint4(g + 13) & 1023) % 400) || ':report-export'
                       ELSE (ARRAY['cron:nightly-report', 'migrations:schema-v42', 'queue:emails:shard-0', 'queue:emails:shard-1',
                                   'queue:emails:shard-2', 'queue:emails:shard-3'])[1 + (hashint4(g + 3) & 1023) % 6] END AS resource,
                  gen_random_uuid() AS lease_id,
                  'worker-' || (1 + g % 24) || '@' || (ARRAY['billing', 'invoicing', 'reports', 'mailer', 'sync'])[1 + g % 5]
                    || '-' || to_hex(4096 + (hashint4(g + 1) & 4095)) AS owner,
                  'run-' || (1000 + (hashint4(g + 2) & 8191) % 9000) AS task,
                  nextval(${seq}) AS token,
                  greatest(20, round(exp(ln(900) + 0.9 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))))::bigint AS hold_ms
           FROM generate_series($3::int, $5::int - 1) AS g
         ),
         -- Only holds that also end before $4: the history never has an acquire without its ending.
         hh AS (SELECT * FROM h WHERE t + (hold_ms + 300) * interval '1 millisecond' < $4::timestamptz),
         ev AS (
           SELECT t AS at, 'acquired' AS kind, resource, lease_id, owner, task, token, NULL::bigint AS hold_ms, NULL::text AS actor,
                  NULL::text AS reason, jsonb_build_object('ttlMs', 10000) AS detail
           FROM hh
           UNION ALL
           SELECT t + hold_ms * interval '1 millisecond',
                  CASE WHEN r < 0.91 THEN 'released' WHEN r < 0.996 THEN 'expired' ELSE 'force_released' END,
                  resource, lease_id, owner, task, token, hold_ms,
                  CASE WHEN r >= 0.996 THEN 'alice@example.com' END,
                  CASE WHEN r >= 0.996 THEN 'stuck after deploy' END,
                  CASE WHEN r < 0.91 OR r >= 0.996 THEN jsonb_build_object('renewals', hold_ms / 3333)
                       ELSE jsonb_build_object('renewals', 0, 'expiredAt', t + hold_ms * interval '1 millisecond', 'recordedBy', 'sweep') END
           FROM hh
           UNION ALL
           SELECT t + (hold_ms * r2) * interval '1 millisecond', 'contended', resource, lease_id,
                  'worker-' || (1 + (g + 5) % 24) || '@scheduler-0f3a', 'run-' || (1000 + g % 9000), token, NULL, NULL, NULL,
                  jsonb_build_object('holderOwner', owner, 'holderTask', task)
           FROM hh WHERE r2 < 0.45
           UNION ALL
           SELECT t + (hold_ms + 200) * interval '1 millisecond', k.kind, resource, lease_id, owner, task, token, NULL,
                  CASE WHEN k.kind = 'fencing_rejected' THEN 'ledger-db' END,
                  CASE WHEN k.kind <> 'fencing_rejected' THEN 'expired' END,
                  CASE k.kind WHEN 'renew_failed' THEN jsonb_build_object('ttlMs', 10000, 'leaseId', lease_id::text)
                              WHEN 'lost' THEN jsonb_build_object('leaseId', lease_id::text)
                              ELSE jsonb_build_object('seenToken', (token + 1)::text, 'by', 'ledger-db') END
           FROM hh CROSS JOIN (VALUES ('renew_failed'), ('lost'), ('fencing_rejected')) AS k(kind)
           WHERE r >= 0.91 AND r < 0.93
         )
         INSERT INTO ${s}.lease_events (at, kind, resource, lease_id, owner, task, fencing_token, hold_ms, actor, reason, detail)
         SELECT * FROM (
           SELECT * FROM ev
           UNION ALL
           SELECT acquired_at, 'acquired', resource, lease_id, owner, task, fencing_token, NULL, NULL, NULL, jsonb_build_object('ttlMs', ttl_ms)
           FROM ${s}.leases WHERE $6::boolean
         ) all_events ORDER BY at`,
        [seed.from, stepMs, Math.floor((slice * holds) / slices), seed.to, Math.floor(((slice + 1) * holds) / slices), isLast],
      );
      written += events.rowCount ?? 0;
      seed.onSlice?.({ slice, slices, events: written });
    }
    for (const index of secondary) {
      await client.query(index.definition.replace(/ ON ONLY /, " ON "));
      seed.onIndex?.(index.name);
    }
    await client.query("RESET work_mem");
    await client.query("RESET maintenance_work_mem");
    await client.query("RESET synchronous_commit");
    await client.query(`ANALYZE ${s}.leases`);
    await client.query(`ANALYZE ${s}.lease_events`);
    return { events: written, leases: live.rowCount ?? 0 };
  } finally {
    client.release();
  }
}
