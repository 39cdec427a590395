/**
 * Every SQL statement the Postgres store runs, as pure functions of a validated
 * schema name (and, for the dynamic reads, of the query shape). Values are always
 * bind parameters; the only things spliced into the text are the schema identifier
 * (checked against SCHEMA_PATTERN and double-quoted) and constants from this library.
 *
 * Lease invariants kept here and in the acquire and release functions (migration 10):
 * - Expiry is judged on the database clock: each statement reads clock_timestamp()
 *   once (CTE `clk`, or a variable in the functions) *after* taking the row lock, so waiting for a concurrent
 *   holder cannot leave it with a stale "now". The client's clock is never used.
 * - State change and its event(s) are one statement (a function call counts as one):
 *   either both commit or neither.
 * - Fencing tokens come from `lease_fencing_seq` via an explicit nextval() on every
 *   grant, including takeover by UPDATE (a column default would not fire there).
 *   Sequences are WAL-logged, so tokens survive a server restart; they may skip
 *   numbers but never go back.
 * - Tokens strictly increase per resource in grant order. nextval() is global, so
 *   that only holds if no grant can take its value before an earlier grant of the
 *   same resource commits. A takeover takes it under the row lock; an insert has no
 *   row to lock, so acquire first takes a transaction advisory lock keyed by
 *   (schema, resource) and holds it to commit. Without it, an acquire that took
 *   token 100 and then stalled could insert after another holder took 101 and released.
 * - An expiry is recorded exactly once: whoever deletes (or replaces) the lapsed
 *   row writes its `expired` event, and only one statement can hold the row lock
 *   and still see it lapsed.
 */
import { PREFIX_GROUP_DEPTH } from "../prefix-groups";
import { HOLD_HISTOGRAM_BOUNDS_MS, EXPIRING_FRACTION, OVERDUE_FRACTION, LEASE_EVENT_KINDS, SLACK_BUCKET_COUNT, TERMINAL_EVENT_KINDS } from "../types";
import { SQL_IDENTIFIER } from "../validation";

/** Schema names: lower-case identifiers, so quoting needs no escaping. */
export const SCHEMA_PATTERN = SQL_IDENTIFIER;
export const DEFAULT_SCHEMA = "leasewatch";

export function quoteSchema(schema: string): string {
  if (!SCHEMA_PATTERN.test(schema)) throw new Error(`invalid schema name ${JSON.stringify(schema)}`);
  return `"${schema}"`;
}

export const LEASE_COLUMNS = ["resource", "lease_id", "owner", "task", "fencing_token", "acquired_at", "renewed_at", "expires_at", "ttl_ms", "renewals"] as const;
export const EVENT_COLUMNS = ["id", "at", "kind", "resource", "lease_id", "owner", "task", "fencing_token", "hold_ms", "actor", "reason", "detail"] as const;

/** `alias.col AS prefix_col, …` so one row can carry a lease and an event side by side. */
function leaseCols(alias: string, prefix = ""): string {
  return LEASE_COLUMNS.map((c) => `${alias}.${c} AS ${prefix}${c}`).join(", ");
}
function eventCols(alias: string, prefix = ""): string {
  return EVENT_COLUMNS.map((c) => `${alias}.${c} AS ${prefix}${c}`).join(", ");
}
/** `alias.col, …` */
function qualified(alias: string, columns: readonly string[]): string {
  return columns.map((c) => `${alias}.${c}`).join(", ");
}
const LEASE_LIST = LEASE_COLUMNS.join(", ");
const EVENT_INSERT_COLUMNS = "at, kind, resource, lease_id, owner, task, fencing_token, hold_ms, actor, reason, detail";

/** Whole milliseconds between two timestamptz expressions (rounded). */
function msBetween(later: string, earlier: string): string {
  return `round(extract(epoch FROM (${later} - ${earlier})) * 1000)::bigint`;
}
/**
 * The `expired` event values for lapsed lease row `row`, stamped `now`: one shape
 * whoever records the expiry (acquire takeover, renew/release of a lapsed lease, sweep).
 */
function expiredEvent(now: string, row: string, recordedBy: string): string {
  return `SELECT ${now}, 'expired', ${row}.resource, ${row}.lease_id, ${row}.owner, ${row}.task, ${row}.fencing_token, ${msBetween(`${row}.expires_at`, `${row}.acquired_at`)}, NULL, NULL,
             jsonb_build_object('renewals', ${row}.renewals, 'expiredAt', ${row}.expires_at, 'recordedBy', '${recordedBy}')`;
}
const TTL = (param: string) => `(${param}::int * interval '1 millisecond')`;

/** Rows per hour, group, TTL and slack bucket in lease_renewal_slack (see migration 3). */
export const SLACK_SHARDS = 16;

/** The hour row a renewal at `now` is counted in. */
const slackHour = (now: string) => `date_bin(interval '1 hour', ${now}, TIMESTAMPTZ 'epoch')`;
/** The slack bucket of a renewal at `now` of a lease due at `expiresAt` after a TTL of `ttlMs` (slackBucketIndex in slack.ts). */
const slackBucket = (expiresAt: string, now: string, ttlMs: string) =>
  `LEAST(${SLACK_BUCKET_COUNT - 1}, GREATEST(0, floor(extract(epoch FROM (${expiresAt} - ${now})) * 1000 * ${SLACK_BUCKET_COUNT} / ${ttlMs})))::smallint`;

/**
 * Renewal slack, counted by the renew statement itself (no extra round trip): the share of
 * the old TTL left at the store's clock, in SLACK_BUCKET_COUNT buckets (slackBucketIndex in
 * slack.ts), added to the hour's row for the group and TTL (one of SLACK_SHARDS, by connection, so
 * concurrent renewals of a group do not queue on one row). Only renewals that succeed count.
 */
function renewalSlackCte(s: string): string {
  return `slack AS (
      INSERT INTO ${s}.lease_renewal_slack AS r (bucket_start, prefix, ttl_ms, slack_bucket, shard, renewals)
      SELECT ${slackHour("st.now")}, $5::text, o.ttl_ms,
             ${slackBucket("o.expires_at", "st.now", "o.ttl_ms")}, (pg_backend_pid() % ${SLACK_SHARDS})::smallint, 1
      FROM st, cur o WHERE st.verdict = 'ok'
      ON CONFLICT (bucket_start, prefix, ttl_ms, slack_bucket, shard) DO UPDATE SET renewals = r.renewals + 1
    )`;
}

export const KIND_CHECK = LEASE_EVENT_KINDS.map((k) => `'${k}'`).join(", ");
export const TERMINAL_LIST = TERMINAL_EVENT_KINDS.map((k) => `'${k}'`).join(", ");

// --- lease operations (one statement each) -------------------------------------

export interface LeaseStatements {
  acquire: string;
  acquireOnce: string;
  renew: string;
  /** The renews of one event-loop turn in one statement (call-batch.ts): those that succeed. */
  renewMany: string;
  release: string;
  /** The acquires and releases of one event-loop turn in one statement (call-batch.ts). */
  leaseCallsMany: string;
  forceRelease: string;
  sweep: string;
  get: string;
  countActive: string;
  reportFencingRejection: string;
  reportLost: string;
  health: string;
}

export function buildLeaseStatements(schema: string): LeaseStatements {
  const s = quoteSchema(schema);
  // Lock the current row (if any) first, then read the clock.
  const lockCurrent = `
    cur AS MATERIALIZED (SELECT ${LEASE_LIST} FROM ${s}.leases WHERE resource = $1::text FOR UPDATE),
    clk AS MATERIALIZED (SELECT (SELECT count(*) FROM cur) AS n, clock_timestamp() AS now)`;
  /**
   * $1 resource, $2 owner, $3 task, $4 ttl_ms, $5 new lease id. Free → insert; held →
   * `contended`; lapsed → record the old holder's `expired` and take over with a new token.
   * One call of the function migration 10 creates (the body, and why a function, are there):
   * it takes the advisory lock (see the header), then the row lock, then the clock. Returns
   * outcome, took_over and the holder (ours, or the live one refusing us) without what the
   * caller already knows for a grant (resource, ttl; renewed_at equals acquired_at and
   * renewals is 0 on every grant); no row when its insert met a lapsed row it could not see
   * (the caller re-runs).
   */
  const acquire = `SELECT * FROM ${s}.lease_acquire($1::text, $2::text, $3::text, $4::int, $5::uuid)`;
  /** The same, with a lease id the caller chose: a repeat answers as the first; outcome 'ended' once that lease ended (migration 14). */
  const acquireOnce = `SELECT * FROM ${s}.lease_acquire_once($1::text, $2::text, $3::text, $4::int, $5::uuid)`;

  // Verdict for renew/release: the presented lease id must be the one holding the row, and not lapsed.
  const verdict = `
    st AS MATERIALIZED (
      SELECT c.now,
        CASE WHEN o.resource IS NULL OR o.lease_id::text <> $2::text THEN 'not_owner'
             WHEN o.expires_at <= c.now THEN 'expired'
             ELSE 'ok' END AS verdict
      FROM clk c LEFT JOIN cur o ON true
    )`;
  // The holder presenting its own lapsed lease: delete the row and record its expiry here, once.
  const expireOwnLapsed = (by: string) => `
    gone AS (
      DELETE FROM ${s}.leases l USING st
      WHERE l.resource = $1::text AND st.verdict = 'expired'
      RETURNING ${qualified("l", LEASE_COLUMNS)}
    ),
    expired_ev AS (
      INSERT INTO ${s}.lease_events (${EVENT_INSERT_COLUMNS})
      ${expiredEvent("st.now", "g", by)}
      FROM gone g, st
      RETURNING id
    )`;

  /**
   * $1 resource, $2 lease id (text), $3 ttl_ms, $4 lease id as uuid or NULL when not uuid-shaped,
   * $5 the resource's slack group (slackGroupOf). `slack` counts the renewal's slack (renewalSlackBucket).
   */
  const renew = `
    WITH ${lockCurrent}, ${verdict},
    upd AS (
      UPDATE ${s}.leases l
      SET expires_at = st.now + ${TTL("$3")}, ttl_ms = $3::int, renewed_at = st.now, renewals = l.renewals + 1
      FROM st WHERE l.resource = $1::text AND st.verdict = 'ok'
      RETURNING l.expires_at, l.renewals
    ),
    ${renewalSlackCte(s)},
    ${expireOwnLapsed("renew")},
    failed_ev AS (
      INSERT INTO ${s}.lease_events (${EVENT_INSERT_COLUMNS})
      SELECT st.now, 'renew_failed', $1::text, $4::uuid,
             CASE WHEN st.verdict = 'expired' THEN o.owner END,
             CASE WHEN st.verdict = 'expired' THEN o.task END,
             CASE WHEN st.verdict = 'expired' THEN o.fencing_token END,
             NULL, NULL, st.verdict,
             jsonb_build_object('ttlMs', $3::int, 'leaseId', $2::text)
      FROM st LEFT JOIN cur o ON true
      WHERE st.verdict <> 'ok'
      RETURNING id
    )
    SELECT st.verdict, u.expires_at, u.renewals FROM st LEFT JOIN upd u ON true`;

  /**
   * The renews of one event-loop turn in one statement and one commit (call-batch.ts): $1
   * resource, $2 lease id (text), $3 ttl_ms, $4 the resource's slack group; each an array with
   * one element per call. Only the common case is done here: the first renew of each resource
   * whose lease id holds it and has not lapsed, exactly as `renew` does it (row lock, then the
   * clock, then the update and its slack count). A call with no row in the answer (another lease
   * holds it, it lapsed, a second renew of one resource) changed nothing and is run again alone
   * as the `renew` statement (call-batch.ts), which records its refusal as it always does. Rows are locked in resource order
   * (bytewise, as lease_calls locks them) and the slack rows in key order, so two of these never
   * wait on each other in a cycle.
   */
  const renewMany = `
    WITH x AS MATERIALIZED (
      SELECT DISTINCT ON (c.resource) c.resource, c.lease_id, c.ttl_ms, c.grp, c.n
      FROM unnest($1::text[], $2::text[], $3::int[], $4::text[]) WITH ORDINALITY AS c(resource, lease_id, ttl_ms, grp, n)
      ORDER BY c.resource, c.n
    ),
    cur AS MATERIALIZED (
      SELECT l.resource, l.lease_id, l.expires_at, l.ttl_ms FROM ${s}.leases l
      WHERE l.resource IN (SELECT x.resource FROM x)
      ORDER BY l.resource COLLATE "C"
      FOR UPDATE OF l
    ),
    clk AS MATERIALIZED (SELECT clock_timestamp() AS now FROM (SELECT count(*) FROM cur) k),
    ok AS MATERIALIZED (
      SELECT x.n, x.resource, x.ttl_ms, x.grp, o.expires_at AS old_expires_at, o.ttl_ms AS old_ttl_ms, c.now
      FROM x JOIN cur o ON o.resource = x.resource AND o.lease_id::text = x.lease_id, clk c
      WHERE o.expires_at > c.now
    ),
    upd AS (
      UPDATE ${s}.leases l
      SET expires_at = ok.now + ok.ttl_ms * interval '1 millisecond', ttl_ms = ok.ttl_ms, renewed_at = ok.now, renewals = l.renewals + 1
      FROM ok WHERE l.resource = ok.resource
      RETURNING l.resource, l.expires_at, l.renewals
    ),
    slack AS (
      INSERT INTO ${s}.lease_renewal_slack AS r (bucket_start, prefix, ttl_ms, slack_bucket, shard, renewals)
      SELECT k.bucket_start, k.prefix, k.ttl_ms, k.slack_bucket, (pg_backend_pid() % ${SLACK_SHARDS})::smallint, count(*)
      FROM (
        SELECT ${slackHour("ok.now")} AS bucket_start, ok.grp AS prefix, ok.old_ttl_ms AS ttl_ms,
               ${slackBucket("ok.old_expires_at", "ok.now", "ok.old_ttl_ms")} AS slack_bucket
        FROM ok
      ) k
      GROUP BY k.bucket_start, k.prefix, k.ttl_ms, k.slack_bucket
      ORDER BY k.bucket_start, k.prefix, k.ttl_ms, k.slack_bucket
      ON CONFLICT (bucket_start, prefix, ttl_ms, slack_bucket, shard) DO UPDATE SET renewals = r.renewals + EXCLUDED.renewals
    )
    SELECT ok.n, 'ok' AS verdict, u.expires_at, u.renewals FROM upd u JOIN ok ON ok.resource = u.resource`;

  /**
   * $1 resource, $2 lease id (text), $3 after a deadline loss. One call of the function migration
   * 15 creates: verdict, and for 'ok' only what the caller does not already know of its event
   * (id, at, owner, task, fencing_token, hold_ms, renewals, kind: 'released', or 'expired' after
   * a deadline loss). A lapsed lease gets its `expired` recorded and the verdict 'expired';
   * refusals are counted in lease_release_failures.
   */
  const release = `SELECT * FROM ${s}.lease_release($1::text, $2::text, $3::boolean)`;
  /**
   * The acquires (with a lease id the store or the caller chose) and releases of one event-loop
   * turn in one statement and one commit (call-batch.ts): $1 resource, $2 the call ('acquire',
   * 'acquire_once', 'release'), $3 owner, $4 task, $5 ttl_ms, $6 lease id, $7 after a deadline
   * loss; each an array with one element per call (NULL where a call has no such value); n is the
   * call's position. One call of the function migrations 20 and 21 create: the common cases (a
   * release by the holder, the first acquire of a free resource, an acquire of a resource a live
   * lease holds) as a few statements for all the calls,
   * every other call by its own function as alone, so each answers as it would alone. Two copies
   * of one call run one after the other in the transaction: the second sees the first's work and
   * answers as a repeat. A row carries an acquire's columns or a release's, the others NULL.
   */
  const leaseCallsMany = `
    SELECT n, outcome, took_over, lease_id, owner, task, fencing_token, acquired_at, expires_at, verdict, id, at, hold_ms, renewals, kind
    FROM ${s}.lease_calls($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::boolean[])`;

  /**
   * $1 resource, $2 lease id (text), $3 actor, $4 reason. Ends the lease only if
   * that lease id still holds it. A lease that already lapsed is not "holding":
   * its expiry is recorded instead and the caller hears "not_found".
   */
  const forceRelease = `
    WITH ${lockCurrent},
    st AS MATERIALIZED (
      SELECT c.now,
        CASE WHEN o.resource IS NULL THEN 'not_found'
             WHEN o.lease_id::text <> $2::text THEN 'lease_changed'
             WHEN o.expires_at <= c.now THEN 'expired'
             ELSE 'ok' END AS verdict
      FROM clk c LEFT JOIN cur o ON true
    ),
    ${expireOwnLapsed("force_release")},
    done AS (
      DELETE FROM ${s}.leases l USING st
      WHERE l.resource = $1::text AND st.verdict = 'ok'
      RETURNING ${qualified("l", LEASE_COLUMNS)}
    ),
    ev AS (
      INSERT INTO ${s}.lease_events (${EVENT_INSERT_COLUMNS})
      SELECT st.now, 'force_released', d.resource, d.lease_id, d.owner, d.task, d.fencing_token, ${msBetween("st.now", "d.acquired_at")},
             $3::text, $4::text, jsonb_build_object('renewals', d.renewals)
      FROM done d, st
      RETURNING ${EVENT_COLUMNS.join(", ")}
    )
    SELECT st.verdict, ${leaseCols("o", "l_")}, ${eventCols("e", "e_")}
    FROM st LEFT JOIN cur o ON true LEFT JOIN ev e ON true`;

  /**
   * $1 batch size. SKIP LOCKED: a row another statement holds (a takeover acquire,
   * a release, a concurrent sweep) is that statement's to record; the lock re-check
   * also drops rows renewed since our snapshot.
   */
  const sweep = `
    WITH clk AS MATERIALIZED (SELECT clock_timestamp() AS now),
    doomed AS MATERIALIZED (
      SELECT l.resource FROM ${s}.leases l, clk c
      WHERE l.expires_at <= c.now
      ORDER BY l.expires_at
      LIMIT $1::int
      FOR UPDATE OF l SKIP LOCKED
    ),
    gone AS (
      DELETE FROM ${s}.leases l USING doomed d
      WHERE l.resource = d.resource
      RETURNING ${qualified("l", LEASE_COLUMNS)}
    ),
    ev AS (
      INSERT INTO ${s}.lease_events (${EVENT_INSERT_COLUMNS})
      ${expiredEvent("c.now", "g", "sweep")}
      FROM gone g, clk c
      RETURNING id
    )
    SELECT count(*)::int AS expired FROM ev`;

  /** $1 resource, $2 token, $3 seen token, $4 by, $5 owner, $6 task, $7 lease id (uuid or NULL), $8 lease id text or NULL. */
  const reportFencingRejection = `
    INSERT INTO ${s}.lease_events (${EVENT_INSERT_COLUMNS})
    VALUES (clock_timestamp(), 'fencing_rejected', $1::text, $7::uuid, $5::text, $6::text, $2::bigint, NULL, NULL, NULL,
            jsonb_strip_nulls(jsonb_build_object('seenToken', $3::text, 'by', $4::text, 'leaseId', $8::text)))
    RETURNING ${EVENT_COLUMNS.join(", ")}`;

  /** $1 resource, $2 lease id (uuid or NULL), $3 owner, $4 task, $5 token, $6 reason, $7 lease id text. */
  const reportLost = `
    INSERT INTO ${s}.lease_events (${EVENT_INSERT_COLUMNS})
    VALUES (clock_timestamp(), 'lost', $1::text, $2::uuid, $3::text, $4::text, $5::bigint, NULL, NULL, $6::text,
            jsonb_build_object('leaseId', $7::text))
    RETURNING ${EVENT_COLUMNS.join(", ")}`;

  return {
    acquire,
    acquireOnce,
    renew,
    renewMany,
    release,
    leaseCallsMany,
    forceRelease,
    sweep,
    get: `SELECT ${LEASE_LIST} FROM ${s}.leases WHERE resource = $1::text`,
    // Every lease row is read. Without parallel workers: a console poll must not take every core
    // from the lock writers. A million rows took ~90 ms on one core, ~75 ms on three (leader and
    // two workers), which is twice the CPU.
    countActive: `SET LOCAL max_parallel_workers_per_gather = 0; SELECT count(*)::bigint AS n FROM ${s}.leases`,
    reportFencingRejection,
    reportLost,
    health: "SELECT 1 AS ok",
  };
}

// --- event partitions (migration 8) ---------------------------------------------------

/** Days of lease_events partitions kept ready ahead of today (UTC), so writes never wait on DDL. */
export const PARTITION_DAYS_AHEAD = 3;
/** Daily partitions are named lease_events_pYYYYMMDD (the UTC day they hold). */
export const DAILY_PARTITION_PATTERN = /^lease_events_p(\d{4})(\d{2})(\d{2})$/;

export interface PartitionStatements {
  /** $1 lock key text. Another maintenance of the schema running means this one has nothing to do. */
  begin: string;
  /** $1 days ahead. Creates today's partition and the next ones; returns how many were new. */
  createAhead: string;
  /** $1 first day, $2 last day (dates, UTC). Creates the partitions of those days that are missing. */
  createDays: string;
  /** Creates a partition for each day that has rows in DEFAULT, moving those rows into it. */
  drainDefault: string;
  /** Daily partitions of lease_events (name only: the day is in the name). */
  listDaily: string;
  /** $1 day start, $2 day end. Raw events in the day, and the events the minute rollups counted for it. */
  compareWithRollups: string;
  /** $1 end of the dropped days: history before it is no longer retained. */
  markDropped: string;
  readDroppedUntil: string;
}

export function buildPartitionStatements(schema: string): PartitionStatements {
  const s = quoteSchema(schema);
  const kindSum = LEASE_EVENT_KINDS.map((k) => `m.${k}`).join(" + ");
  return {
    begin: `
      SELECT pg_try_advisory_xact_lock(hashtext($1::text)) AS locked, clock_timestamp() AS now,
             (SELECT refreshed_at FROM ${s}.lease_rollup_state) AS refreshed_at`,
    createAhead: `
      SELECT count(*) FILTER (WHERE made)::int AS created FROM (
        SELECT ${s}.lease_events_add_partition((clock_timestamp() AT TIME ZONE 'UTC')::date + g) AS made
        FROM generate_series(0, $1::int) AS g
      ) x`,
    createDays: `
      SELECT count(*) FILTER (WHERE made)::int AS created FROM (
        SELECT ${s}.lease_events_add_partition(d::date) AS made FROM generate_series($1::date, $2::date, interval '1 day') AS d
      ) x`,
    drainDefault: `
      SELECT d, ${s}.lease_events_add_partition(d) AS made FROM (
        SELECT DISTINCT (at AT TIME ZONE 'UTC')::date AS d FROM ${s}.lease_events_default
      ) days ORDER BY d`,
    listDaily: `
      SELECT c.relname AS name FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = '${s}.lease_events'::regclass AND c.relname ~ '^lease_events_p[0-9]{8}$'
      ORDER BY c.relname`,
    compareWithRollups: `
      SELECT (SELECT count(*) FROM ${s}.lease_events e WHERE e.at >= $1::timestamptz AND e.at < $2::timestamptz)::bigint AS raw,
             (SELECT coalesce(sum(${kindSum}), 0) FROM ${s}.lease_stats_minute m
              WHERE m.bucket_start >= $1::timestamptz AND m.bucket_start < $2::timestamptz)::bigint AS rolled_up`,
    markDropped: `
      INSERT INTO ${s}.lease_event_retention AS r (id, dropped_until) VALUES (true, $1::timestamptz)
      ON CONFLICT (id) DO UPDATE SET dropped_until = greatest(r.dropped_until, EXCLUDED.dropped_until)`,
    readDroppedUntil: `SELECT dropped_until FROM ${s}.lease_event_retention`,
  };
}

/** DROP TABLE of one daily partition; `name` must match DAILY_PARTITION_PATTERN (checked here). */
export function buildDropPartition(schema: string, name: string): string {
  if (!DAILY_PARTITION_PATTERN.test(name)) throw new Error(`not a daily partition name: ${JSON.stringify(name)}`);
  // IF EXISTS: two upkeeps racing past the advisory lock (it covers creation only) may both reach a day.
  return `DROP TABLE IF EXISTS ${quoteSchema(schema)}."${name}"`;
}

// --- migrations runner ------------------------------------------------------------

export function buildMigrationStatements(schema: string) {
  const s = quoteSchema(schema);
  return {
    /** $1 lock key text. Held until the migrating transaction ends. */
    lock: "SELECT pg_advisory_xact_lock(hashtext($1::text))",
    createSchema: `CREATE SCHEMA IF NOT EXISTS ${s}`,
    createLedger: `
      CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`,
    appliedVersions: `SELECT version FROM ${s}.schema_migrations ORDER BY version`,
    /** $1 version, $2 name. */
    recordVersion: `INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1::int, $2::text)`,
  } as const;
}

// --- reads with optional filters ------------------------------------------------

/** Collects bind values and hands out their placeholders, so dynamic SQL stays parameterised. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown, cast: string): string {
    this.values.push(value);
    return `$${this.values.length}::${cast}`;
  }
}

export interface SqlQuery {
  text: string;
  values: unknown[];
}

/**
 * Prefix filters use a byte-order range on `resource` (the column is COLLATE "C"),
 * so they are index range scans and need no LIKE escaping: every string starting
 * with p sorts in [p, upper) where `upper` is p with its last code point bumped.
 */
function prefixRange(column: string, prefix: string, upper: string | null, params: Params): string {
  const lo = `${column} >= ${params.add(prefix, "text")}`;
  return upper === null ? lo : `${lo} AND ${column} < ${params.add(upper, "text")}`;
}

export const LIST_SORTS = {
  expires: { column: "expires_at", direction: "ASC" },
  held_longest: { column: "acquired_at", direction: "ASC" },
  newest: { column: "acquired_at", direction: "DESC" },
} as const;
export type ListSortKey = keyof typeof LIST_SORTS;

export interface ListSqlInput {
  prefix?: { value: string; upper: string | null };
  owner?: string;
  task?: string;
  state?: "held" | "expiring" | "overdue" | "lapsed";
  sort: ListSortKey;
  /** Keyset position: the sort column in epoch microseconds (exact) and the resource. */
  after?: { micros: string; resource: string };
  limit: number;
  /**
   * Read every match through the filter's own index, then sort them (an owner or task known to
   * have few leases): the sort key is an expression no index provides, so the planner cannot
   * walk the sort column's index hoping to meet matches soon (for an owner with none, all of it).
   */
  isGathered?: boolean;
}

/** At most this many leases of one owner or task are gathered and sorted; past it the sort order is walked. */
export const LIST_GATHER_MAX = 10_000;

/** How many leases an owner / task filter matches, counted along its index and stopped past LIST_GATHER_MAX. */
export function buildListMatchCountQuery(schema: string, input: { owner?: string; task?: string }): SqlQuery {
  const params = new Params();
  const where: string[] = [];
  if (input.owner !== undefined) where.push(`l.owner = ${params.add(input.owner, "text")}`);
  if (input.task !== undefined) where.push(`l.task = ${params.add(input.task, "text")}`);
  const text = `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${quoteSchema(schema)}.leases l WHERE ${where.join(" AND ")} LIMIT ${LIST_GATHER_MAX + 1}) m`;
  return { text, values: params.values };
}

const OVERDUE = `(c.now - l.renewed_at) > (l.ttl_ms * ${OVERDUE_FRACTION} * interval '1 millisecond')`;
const EXPIRING = `(l.expires_at - c.now) < (l.ttl_ms * ${EXPIRING_FRACTION} * interval '1 millisecond')`;
/** The list state filters, matching leaseStateAt() in types.ts: the most urgent state wins as a label; "held" means still valid. */
const STATE_PREDICATES = {
  held: "l.expires_at > c.now",
  overdue: `l.expires_at > c.now AND ${OVERDUE}`,
  expiring: `l.expires_at > c.now AND NOT ${OVERDUE} AND ${EXPIRING}`,
  lapsed: "l.expires_at <= c.now",
} as const;

/** Epoch microseconds as exact text, for cursors (a JS Date would drop the microseconds). */
const micros = (column: string) => `(extract(epoch FROM ${column}) * 1000000)::bigint::text`;
const fromMicros = (param: string) => `(TIMESTAMPTZ 'epoch' + ${param} * interval '1 microsecond')`;

export function buildListQuery(schema: string, input: ListSqlInput): SqlQuery {
  const s = quoteSchema(schema);
  const params = new Params();
  const where: string[] = [];
  if (input.prefix) where.push(prefixRange("l.resource", input.prefix.value, input.prefix.upper, params));
  if (input.owner !== undefined) where.push(`l.owner = ${params.add(input.owner, "text")}`);
  if (input.task !== undefined) where.push(`l.task = ${params.add(input.task, "text")}`);
  if (input.state) where.push(STATE_PREDICATES[input.state]);
  const { column, direction } = LIST_SORTS[input.sort];
  if (input.after) {
    const op = direction === "ASC" ? ">" : "<";
    where.push(`(l.${column}, l.resource) ${op} (${fromMicros(params.add(input.after.micros, "bigint"))}, ${params.add(input.after.resource, "text")})`);
  }
  const limit = params.add(input.limit, "int");
  // LEFT JOIN from the clock: one row even when nothing matches, so the store's "now" always comes back.
  const text = `
    WITH clk AS MATERIALIZED (SELECT clock_timestamp() AS now)
    SELECT c.now AS db_now, x.*
    FROM clk c
    LEFT JOIN LATERAL (
      SELECT ${qualified("l", LEASE_COLUMNS)}, ${micros(`l.${column}`)} AS sort_micros
      FROM ${s}.leases l
      ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY ${input.isGathered ? `(l.${column} + interval '0 s')` : `l.${column}`} ${direction}, l.resource ${direction}
      LIMIT ${limit}
    ) x ON true`;
  return { text, values: params.values };
}

export interface EventsSqlInput {
  resource?: string;
  prefix?: { value: string; upper: string | null };
  owner?: string;
  task?: string;
  leaseId?: string;
  fencingToken?: string;
  kinds?: readonly string[];
  from?: Date;
  to?: Date;
  order: "asc" | "desc";
  afterId?: string;
  limit: number;
}

/**
 * Events newest (or oldest) first by id. Every equality filter has an index led by its
 * column and followed by `id` (migration 13), so the read walks that index in id order
 * and stops at the page limit, however many rows match and however old they are: with
 * `(x, at)` indexes the planner preferred walking the primary key and filtering, which
 * for a value with no recent rows (an owner seen a month ago, a resource never seen)
 * read every partition of the window, or of the table when there was no window.
 *
 * Several kinds with no other equality filter become one ordered walk per kind, merged:
 * `kind = ANY(…)` cannot return rows in id order from a B-tree (before Postgres 17).
 */
export function buildEventsQuery(schema: string, input: EventsSqlInput): SqlQuery {
  const s = quoteSchema(schema);
  const params = new Params();
  const where: string[] = [];
  if (input.resource !== undefined) where.push(`e.resource = ${params.add(input.resource, "text")}`);
  if (input.prefix) where.push(prefixRange("e.resource", input.prefix.value, input.prefix.upper, params));
  if (input.owner !== undefined) where.push(`e.owner = ${params.add(input.owner, "text")}`);
  if (input.task !== undefined) where.push(`e.task = ${params.add(input.task, "text")}`);
  if (input.leaseId !== undefined) where.push(`e.lease_id = ${params.add(input.leaseId, "uuid")}`);
  if (input.fencingToken !== undefined) where.push(`e.fencing_token = ${params.add(input.fencingToken, "bigint")}`);
  if (input.from) where.push(`e.at >= ${params.add(input.from, "timestamptz")}`);
  if (input.to) where.push(`e.at < ${params.add(input.to, "timestamptz")}`);
  const direction = input.order === "asc" ? "ASC" : "DESC";
  if (input.afterId !== undefined) where.push(`e.id ${input.order === "asc" ? ">" : "<"} ${params.add(input.afterId, "bigint")}`);
  const limit = params.add(input.limit, "int");
  const kinds = input.kinds === undefined ? undefined : [...new Set(input.kinds)];
  const hasEqualityFilter = [input.resource, input.owner, input.task, input.leaseId, input.fencingToken].some((v) => v !== undefined);
  const select = (conditions: string[]) => `
    SELECT ${qualified("e", EVENT_COLUMNS)}
    FROM ${s}.lease_events e
    ${conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : ""}
    ORDER BY e.id ${direction}
    LIMIT ${limit}`;
  if (kinds === undefined) return { text: select(where), values: params.values };
  if (kinds.length === 1) return { text: select([...where, `e.kind = ${params.add(kinds[0], "text")}`]), values: params.values };
  if (kinds.length === 0 || hasEqualityFilter) return { text: select([...where, `e.kind = ANY(${params.add(kinds, "text[]")})`]), values: params.values };
  const perKind = kinds.map((kind) => `(${select([...where, `e.kind = ${params.add(kind, "text")}`])})`);
  const text = `
    SELECT k.* FROM (${perKind.join("\n    UNION ALL ")}) k
    ORDER BY k.id ${direction}
    LIMIT ${limit}`;
  return { text, values: params.values };
}

// --- rollups (stats) ----------------------------------------------------------------

/** Rollup counter columns, one per event kind plus renewals. */
export const COUNTER_COLUMNS = [...LEASE_EVENT_KINDS, "renewed"] as const;
const HISTOGRAM_SIZE = HOLD_HISTOGRAM_BOUNDS_MS.length + 1;
const BOUNDS_ARRAY = `ARRAY[${HOLD_HISTOGRAM_BOUNDS_MS.join(", ")}]::bigint[]`;
const EPOCH = "TIMESTAMPTZ 'epoch'";
const UNIT = { minute: "interval '1 minute'", hour: "interval '1 hour'", day: "interval '1 day'" } as const;
export type RollupUnit = keyof typeof UNIT;

/**
 * Aggregates over raw events `e` (with a computed `hb` histogram index): counters,
 * histogram array and hold sum. Renewals are not events; each terminal event
 * carries its lease's renewal count in detail.renewals, so `renewed` counts
 * renewals in the bucket where their lease ended.
 */
const RAW_AGGREGATES = [
  ...LEASE_EVENT_KINDS.map((k) => `count(*) FILTER (WHERE e.kind = '${k}')::bigint AS ${k}`),
  `coalesce(sum((e.detail->>'renewals')::bigint) FILTER (WHERE e.kind IN (${TERMINAL_LIST})), 0)::bigint AS renewed`,
  `ARRAY[${Array.from({ length: HISTOGRAM_SIZE }, (_, i) => `count(*) FILTER (WHERE e.hb = ${i})`).join(", ")}]::bigint[] AS hold_histogram`,
  `coalesce(sum(e.hold_ms) FILTER (WHERE e.kind IN (${TERMINAL_LIST})), 0)::bigint AS hold_ms_sum`,
].join(",\n      ");

/** Sums of rollup rows `m`: counters, element-wise histogram, hold sum. */
const ROLLUP_SUMS = [
  ...COUNTER_COLUMNS.map((k) => `sum(m.${k})::bigint AS ${k}`),
  `ARRAY[${Array.from({ length: HISTOGRAM_SIZE }, (_, i) => `coalesce(sum(m.hold_histogram[${i + 1}]), 0)`).join(", ")}]::bigint[] AS hold_histogram`,
  `sum(m.hold_ms_sum)::bigint AS hold_ms_sum`,
].join(",\n      ");

/**
 * Histogram bucket of a terminal event, as holdBucketIndex() computes it: the number
 * of bounds strictly below holdMs. width_bucket counts bounds <= x, and hold_ms is
 * whole milliseconds, so x = hold_ms - 1.
 */
const RAW_WITH_BUCKET = (s: string, where: string) => `
  (SELECT ev.*, CASE WHEN ev.kind IN (${TERMINAL_LIST}) THEN width_bucket(coalesce(ev.hold_ms, 0) - 1, ${BOUNDS_ARRAY}) END AS hb
   FROM ${s}.lease_events ev WHERE ${where}) e`;

const prefixOf = (column: string, depth: string) => `array_to_string((string_to_array(${column}, ':'))[1:${depth}], ':')`;

const UPSERT_COUNTERS = [...COUNTER_COLUMNS, "hold_histogram", "hold_ms_sum"].map((c) => `${c} = EXCLUDED.${c}`).join(", ");
const COUNTER_INSERT_COLUMNS = ["bucket_start", ...COUNTER_COLUMNS, "hold_histogram", "hold_ms_sum"].join(", ");

/**
 * Copies terminal events recorded at or after `from` (an SQL expression) into the hold-span
 * read model heldAt() reads (migration 8). Idempotent: an event already copied is skipped.
 */
export function buildHoldSpansInsert(schema: string, from: string): string {
  const s = quoteSchema(schema);
  return `
    INSERT INTO ${s}.lease_hold_spans (event_id, at, kind, resource, lease_id, owner, task, fencing_token, hold_ms, ended_at, span)
    SELECT e.id, e.at, e.kind, e.resource, e.lease_id, e.owner, e.task, e.fencing_token, e.hold_ms,
           ${HOLD_ENDED_AT("e")}, ${s}.lease_hold_span(e.kind, e.at, e.hold_ms, e.detail)
    FROM ${s}.lease_events e
    WHERE e.at >= ${from} AND e.kind IN (${TERMINAL_LIST}) AND e.hold_ms IS NOT NULL
    ON CONFLICT (event_id) DO NOTHING`;
}

/** When the hold a terminal event ends stopped: the release time, or for an expiry the TTL's end. */
export const HOLD_ENDED_AT = (alias: string) =>
  `CASE WHEN ${alias}.kind = 'expired' AND ${alias}.detail ? 'expiredAt' THEN (${alias}.detail->>'expiredAt')::timestamptz ELSE ${alias}.at END`;

export interface RollupStatements {
  /** `pg_try_advisory_xact_lock` for this schema's rollups, plus the inputs to pick the refresh window. $1 lock key text. */
  begin: string;
  /** $1 from (minute-aligned). Recomputes minute counters for every bucket from $1 on. */
  refreshMinuteCounters: string;
  /**
   * Contention keeps only the top `$2` prefixes per bucket and depth, so the hourly
   * rollup stays small however many distinct resources contend. Each refreshed
   * bucket's set is replaced as a whole (delete, then insert) inside the refresh
   * transaction, so a prefix that dropped out of the top does not linger.
   */
  clearMinuteContention: string;
  refreshMinuteContention: string;
  /** $1 from (hour-aligned). Recomputes hour rows from the minute rows. */
  refreshHourCounters: string;
  clearHourContention: string;
  refreshHourContention: string;
  /** $1 from (day-aligned). Recomputes day rows from the hour rows (migration 11). */
  refreshDayCounters: string;
  clearDayContention: string;
  /** $1 from (day-aligned), $2 prefixes kept per bucket and depth. */
  refreshDayContention: string;
  /** $1 from (minute-aligned). Copies the hold spans of terminal events from $1 on. */
  refreshHoldSpans: string;
  /** $1 refreshed_at. */
  markRefreshed: string;
  readRefreshedAt: string;
}

export function buildRollupStatements(schema: string): RollupStatements {
  const s = quoteSchema(schema);
  return {
    begin: `
      SELECT pg_try_advisory_xact_lock(hashtext($1::text)) AS locked, clock_timestamp() AS now,
             (SELECT refreshed_at FROM ${s}.lease_rollup_state) AS refreshed_at,
             -- Only the first refresh needs the oldest event; the CASE keeps the
             -- subquery from running on every refresh.
             CASE WHEN (SELECT refreshed_at FROM ${s}.lease_rollup_state) IS NULL
                  THEN (SELECT min(at) FROM ${s}.lease_events) END AS first_at,
             (SELECT dropped_until FROM ${s}.lease_event_retention) AS dropped_until`,
    refreshMinuteCounters: `
      INSERT INTO ${s}.lease_stats_minute (${COUNTER_INSERT_COLUMNS})
      SELECT date_bin(${UNIT.minute}, e.at, ${EPOCH}) AS bucket_start,
      ${RAW_AGGREGATES}
      FROM ${RAW_WITH_BUCKET(s, "ev.at >= $1::timestamptz")}
      GROUP BY 1
      ON CONFLICT (bucket_start) DO UPDATE SET ${UPSERT_COUNTERS}`,
    clearMinuteContention: `DELETE FROM ${s}.lease_contention_minute WHERE bucket_start >= $1::timestamptz`,
    refreshMinuteContention: `
      INSERT INTO ${s}.lease_contention_minute (depth, bucket_start, prefix, contended)
      SELECT depth, bucket_start, prefix, n FROM (
        SELECT d.depth, date_bin(${UNIT.minute}, e.at, ${EPOCH}) AS bucket_start, ${prefixOf("e.resource", "d.depth")} AS prefix, count(*) AS n,
               row_number() OVER (PARTITION BY d.depth, date_bin(${UNIT.minute}, e.at, ${EPOCH}) ORDER BY count(*) DESC, ${prefixOf("e.resource", "d.depth")}) AS rank
        FROM ${s}.lease_events e CROSS JOIN generate_series(1, 3) AS d(depth)
        WHERE e.kind = 'contended' AND e.at >= $1::timestamptz
        GROUP BY 1, 2, 3
      ) ranked
      WHERE rank <= $2::int`,
    refreshHourCounters: `
      INSERT INTO ${s}.lease_stats_hour (${COUNTER_INSERT_COLUMNS})
      SELECT date_bin(${UNIT.hour}, m.bucket_start, ${EPOCH}) AS bucket_start,
      ${ROLLUP_SUMS}
      FROM ${s}.lease_stats_minute m
      WHERE m.bucket_start >= $1::timestamptz
      GROUP BY 1
      ON CONFLICT (bucket_start) DO UPDATE SET ${UPSERT_COUNTERS}`,
    clearHourContention: `DELETE FROM ${s}.lease_contention_hour WHERE bucket_start >= $1::timestamptz`,
    refreshHourContention: `
      INSERT INTO ${s}.lease_contention_hour (depth, bucket_start, prefix, contended)
      SELECT depth, bucket_start, prefix, n FROM (
        SELECT m.depth, date_bin(${UNIT.hour}, m.bucket_start, ${EPOCH}) AS bucket_start, m.prefix, sum(m.contended)::bigint AS n,
               row_number() OVER (PARTITION BY m.depth, date_bin(${UNIT.hour}, m.bucket_start, ${EPOCH}) ORDER BY sum(m.contended) DESC, m.prefix) AS rank
        FROM ${s}.lease_contention_minute m
        WHERE m.bucket_start >= $1::timestamptz
        GROUP BY 1, 2, 3
      ) ranked
      WHERE rank <= $2::int`,
    ...buildDayRollupStatements(schema, "$1::timestamptz", "$2::int"),
    refreshHoldSpans: buildHoldSpansInsert(schema, "$1::timestamptz"),
    markRefreshed: `
      INSERT INTO ${s}.lease_rollup_state (id, refreshed_at) VALUES (true, $1::timestamptz)
      ON CONFLICT (id) DO UPDATE SET refreshed_at = EXCLUDED.refreshed_at`,
    readRefreshedAt: `SELECT refreshed_at FROM ${s}.lease_rollup_state`,
  };
}

/** A resource's prefix group (prefix-groups.ts) in SQL: two segments and ":" when it has more, else itself. */
const GROUP_OF = (column: string) =>
  `CASE WHEN cardinality(string_to_array(${column}, ':')) > ${PREFIX_GROUP_DEPTH} THEN ${prefixOf(column, String(PREFIX_GROUP_DEPTH))} || ':' ELSE ${column} END`;

export interface GroupRollupStatements {
  /** $1 from (hour-aligned). Drops the group rows of the hours from $1 on (recomputed next). */
  clearGroupHours: string;
  /** $1 from (hour-aligned). Counts every event from $1 on per hour and prefix group. */
  refreshGroupHours: string;
  /**
   * Buckets under a prefix: group rows of the hours in [$1, $2) whose group starts with the
   * prefix, and raw events in [$2, $3) under it; the prefix as a byte-order range, $4 to $5
   * (null: no upper bound), like every prefix filter. Rows come back per source; the caller sums them.
   */
  readPrefixCounters: (unit: "hour" | "day") => string;
  /** Contention per 3-segment name under the prefix: the hour contention rollups, [$1, $2), and raw events [$2, $3); $4, $5 as above. */
  readPrefixContention: (unit: "hour" | "day") => string;
  readCoveredFrom: string;
}

export function buildGroupRollupStatements(schema: string): GroupRollupStatements {
  const s = quoteSchema(schema);
  const columns = [...COUNTER_COLUMNS, "hold_histogram", "hold_ms_sum"].map((c) => `m.${c}`).join(", ");
  return {
    clearGroupHours: `DELETE FROM ${s}.lease_group_stats_hour WHERE bucket_start >= $1::timestamptz`,
    refreshGroupHours: `
      INSERT INTO ${s}.lease_group_stats_hour (bucket_start, grp, ${[...COUNTER_COLUMNS, "hold_histogram", "hold_ms_sum"].join(", ")})
      SELECT date_bin(${UNIT.hour}, e.at, ${EPOCH}) AS bucket_start, ${GROUP_OF("e.resource")} AS grp,
      ${RAW_AGGREGATES}
      FROM ${RAW_WITH_BUCKET(s, "ev.at >= $1::timestamptz")}
      GROUP BY 1, 2`,
    readPrefixCounters: (unit) => `
      SELECT date_bin(${UNIT[unit]}, m.bucket_start, ${EPOCH}) AS bucket_start, ${columns}
      FROM ${s}.lease_group_stats_hour m
      WHERE m.bucket_start >= $1::timestamptz AND m.bucket_start < $2::timestamptz AND m.grp >= $4::text AND ($5::text IS NULL OR m.grp < $5::text)
      UNION ALL
      SELECT date_bin(${UNIT[unit]}, e.at, ${EPOCH}) AS bucket_start,
      ${RAW_AGGREGATES}
      FROM ${RAW_WITH_BUCKET(s, "ev.at >= $2::timestamptz AND ev.at < $3::timestamptz AND ev.resource >= $4::text AND ($5::text IS NULL OR ev.resource < $5::text)")}
      GROUP BY 1`,
    readPrefixContention: (unit) => `
      SELECT date_bin(${UNIT[unit]}, c.bucket_start, ${EPOCH}) AS bucket_start, c.prefix AS name, sum(c.contended)::bigint AS n
      FROM ${s}.lease_contention_hour c
      WHERE c.depth = 3 AND c.bucket_start >= $1::timestamptz AND c.bucket_start < $2::timestamptz AND c.prefix >= $4::text AND ($5::text IS NULL OR c.prefix < $5::text)
      GROUP BY 1, 2
      UNION ALL
      SELECT date_bin(${UNIT[unit]}, e.at, ${EPOCH}) AS bucket_start, ${prefixOf("e.resource", "3")} AS name, count(*)::bigint AS n
      FROM ${s}.lease_events e
      WHERE e.kind = 'contended' AND e.at >= $2::timestamptz AND e.at < $3::timestamptz AND e.resource >= $4::text AND ($5::text IS NULL OR e.resource < $5::text)
      GROUP BY 1, 2`,
    readCoveredFrom: `SELECT covered_from FROM ${s}.lease_group_stats_state`,
  };
}

/**
 * Day rollups, summed from the hour rollups (never from raw events, so they are as
 * complete as the hours whatever retention has dropped): `from` and `top` are SQL
 * expressions, parameters in a refresh and literals in migration 11's backfill.
 * Contention keeps the top `top` prefixes per day and depth, ranked on the hours'
 * own top lists, as the hours are ranked on the minutes'.
 */
export function buildDayRollupStatements(schema: string, from: string, top: string) {
  const s = quoteSchema(schema);
  return {
    refreshDayCounters: `
      INSERT INTO ${s}.lease_stats_day (${COUNTER_INSERT_COLUMNS})
      SELECT date_bin(${UNIT.day}, m.bucket_start, ${EPOCH}) AS bucket_start,
      ${ROLLUP_SUMS}
      FROM ${s}.lease_stats_hour m
      WHERE m.bucket_start >= ${from}
      GROUP BY 1
      ON CONFLICT (bucket_start) DO UPDATE SET ${UPSERT_COUNTERS}`,
    clearDayContention: `DELETE FROM ${s}.lease_contention_day WHERE bucket_start >= ${from}`,
    refreshDayContention: `
      INSERT INTO ${s}.lease_contention_day (depth, bucket_start, prefix, contended)
      SELECT depth, bucket_start, prefix, n FROM (
        SELECT m.depth, date_bin(${UNIT.day}, m.bucket_start, ${EPOCH}) AS bucket_start, m.prefix, sum(m.contended)::bigint AS n,
               row_number() OVER (PARTITION BY m.depth, date_bin(${UNIT.day}, m.bucket_start, ${EPOCH}) ORDER BY sum(m.contended) DESC, m.prefix) AS rank
        FROM ${s}.lease_contention_hour m
        WHERE m.bucket_start >= ${from}
        GROUP BY 1, 2, 3
      ) ranked
      WHERE rank <= ${top}`,
  };
}

/** The rollup tables a read of `unit` buckets stitches, coarsest first (each has a cut where the next takes over). */
function rollupTiers(unit: RollupUnit): RollupUnit[] {
  return unit === "day" ? ["day", "hour", "minute"] : ["hour", "minute"];
}

/**
 * The parameters of a stats read of `unit` buckets, in order: from, one cut per
 * rollup tier after the first (day reads: dayCut, hourCut, minuteCut; otherwise
 * hourCut, minuteCut), to. Contention adds depth and top after them.
 */
export function statsBoundCount(unit: RollupUnit): number {
  return rollupTiers(unit).length + 2;
}

/**
 * Stats read for `unit` buckets over [from, to), stitched from disjoint,
 * contiguous ranges: hour rollups [from, hourCut), minute rollups [hourCut, minuteCut)
 * and raw events [minuteCut, to) — the still-open recent minutes the last refresh
 * may not have seen yet. Rows come back unsummed per source; the caller adds them up.
 * $1 from, $2 hourCut, $3 minuteCut, $4 to.
 */
export function buildStatsCountersQuery(schema: string, unit: RollupUnit): string {
  const s = quoteSchema(schema);
  const columns = [...COUNTER_COLUMNS, "hold_histogram", "hold_ms_sum"].map((c) => `m.${c}`).join(", ");
  const tiers = rollupTiers(unit);
  const parts = tiers.map((tier, i) => {
    const where = `m.bucket_start >= $${i + 1}::timestamptz AND m.bucket_start < $${i + 2}::timestamptz`;
    // A tier as coarse as the buckets is read as it is (its rows are the buckets).
    const start = tier === unit ? "m.bucket_start" : `date_bin(${UNIT[unit]}, m.bucket_start, ${EPOCH}) AS bucket_start`;
    return `SELECT ${start}, ${columns} FROM ${s}.lease_stats_${tier} m WHERE ${where}`;
  });
  const rawFrom = tiers.length + 1;
  parts.push(`SELECT date_bin(${UNIT[unit]}, e.at, ${EPOCH}) AS bucket_start,
      ${RAW_AGGREGATES}
     FROM ${RAW_WITH_BUCKET(s, `ev.at >= $${rawFrom}::timestamptz AND ev.at < $${rawFrom + 1}::timestamptz`)}
     GROUP BY 1`);
  return parts.join("\nUNION ALL\n");
}

/**
 * Lifetime totals: the counters query over all time, summed into one row. $2 hourCut and
 * $3 minuteCut as for stats; $1 and $4 are -infinity and infinity.
 */
export function buildLifetimeTotalsQuery(schema: string): string {
  return `SELECT ${ROLLUP_SUMS} FROM (${buildStatsCountersQuery(schema, "hour")}) m`;
}

/** Refused releases by reason, as the release statement counts them. */
export function buildReleaseFailuresQuery(schema: string): string {
  return `SELECT reason, n FROM ${quoteSchema(schema)}.lease_release_failures`;
}

/**
 * buildStatsContentionQuery as one row per bucket, its prefixes as one JSON object: a
 * 7-day hour read has ~17,000 (bucket, prefix) rows, and parsing them one by one in the
 * driver cost more than the query; one JSON.parse per bucket is a fraction of it.
 */
export function buildStatsContentionByBucketQuery(schema: string, unit: RollupUnit): string {
  return `SELECT bucket_start, json_object_agg(prefix, contended) AS prefixes FROM (${buildStatsContentionQuery(schema, unit)}) c GROUP BY bucket_start`;
}

/**
 * Contended counts per bucket and prefix (top `top` per bucket). The bounds as for
 * stats (statsBoundCount), then depth and top: $5 and $6 for minute and hour reads,
 * $6 and $7 for day reads.
 *
 * The coarsest tier's rows are whole buckets already: its range ends at a cut aligned
 * to the bucket size, so no finer row falls in them, and the refresh kept only the top
 * TOP_PREFIXES_PER_BUCKET of each (the `top` readStats passes). They are read straight
 * off the primary key. Only the few buckets the finer tiers and raw events fill are
 * summed and ranked: summing and ranking every row of a 7-day hour read (16,800 at
 * depth 3) took 50–80 ms of hashing and sorting per read, twice with the previous week.
 * Rows come in no particular order.
 */
export function buildStatsContentionQuery(schema: string, unit: RollupUnit): string {
  const s = quoteSchema(schema);
  const tiers = rollupTiers(unit);
  const depth = `$${tiers.length + 3}::int`;
  const top = `$${tiers.length + 4}::int`;
  const parts = tiers.map((tier, i) => {
    const start = tier === unit ? "m.bucket_start" : `date_bin(${UNIT[unit]}, m.bucket_start, ${EPOCH})`;
    return `SELECT ${start} AS bucket_start, m.prefix, m.contended AS n FROM ${s}.lease_contention_${tier} m
          WHERE m.depth = ${depth} AND m.bucket_start >= $${i + 1}::timestamptz AND m.bucket_start < $${i + 2}::timestamptz`;
  });
  const rawFrom = tiers.length + 1;
  parts.push(`SELECT date_bin(${UNIT[unit]}, e.at, ${EPOCH}), ${prefixOf("e.resource", depth)}, 1 FROM ${s}.lease_events e
          WHERE e.kind = 'contended' AND e.at >= $${rawFrom}::timestamptz AND e.at < $${rawFrom + 1}::timestamptz`);
  const [whole, ...finer] = parts;
  return `
    SELECT bucket_start, prefix, n::bigint AS contended FROM (${whole}) w
    UNION ALL
    SELECT bucket_start, prefix, contended FROM (
      SELECT bucket_start, prefix, contended,
             row_number() OVER (PARTITION BY bucket_start ORDER BY contended DESC, prefix) AS rank
      FROM (
        SELECT bucket_start, prefix, sum(n)::bigint AS contended FROM (
          ${finer.join("\n          UNION ALL\n          ")}
        ) parts
        GROUP BY bucket_start, prefix
      ) summed
    ) ranked
    WHERE rank <= ${top}`;
}
