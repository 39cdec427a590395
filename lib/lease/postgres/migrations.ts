import type pg from "pg";
import { HOLD_HISTOGRAM_BOUNDS_MS, SLACK_BUCKET_COUNT } from "../types";
import { TOP_PREFIXES_PER_BUCKET } from "./rollups";
import { KIND_CHECK, COUNTER_COLUMNS, PARTITION_DAYS_AHEAD, SLACK_SHARDS, buildDayRollupStatements, buildGroupRollupStatements, buildHoldSpansInsert, buildMigrationStatements, quoteSchema } from "./sql";
import { inTransaction } from "./transaction";
import { internalLockKey } from "./lock-keys";

/**
 * Versioned schema changes, applied in order and recorded in `schema_migrations`.
 * Never edit a released migration: append a new one.
 */
export interface Migration {
  version: number;
  name: string;
  sql: (schema: string) => string;
}

const HISTOGRAM_SIZE = HOLD_HISTOGRAM_BOUNDS_MS.length + 1;

/** SQL: whole milliseconds from `earlier` to `later`. */
const heldMs = (later: string, earlier: string) => `round(extract(epoch FROM (${later} - ${earlier})) * 1000)::bigint`;
/** SQL: an `expired` event's detail for the lapsed lease row `row`, recorded by `by`. */
const lapsedDetail = (row: string, by: string) => `jsonb_build_object('renewals', ${row}.renewals, 'expiredAt', ${row}.expires_at, 'recordedBy', '${by}')`;

/**
 * `text` with its one `from` replaced by `to`: how a migration restates a function an earlier one
 * created, with a change, from that migration's own text (which never changes). Throws unless
 * `from` occurs exactly once.
 */
function replaceOnce(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0) throw new Error(`migration text: expected exactly one ${JSON.stringify(from)}`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}

/** lease_calls' parameters (migration 20 on) as rows: one a call, `n` its 1-based position. */
const LEASE_CALLS_ROWS = `unnest(p_resource, p_call, p_owner, p_task, p_ttl_ms, p_lease_id, p_after_loss)
              WITH ORDINALITY AS x(resource, call, owner, task, ttl_ms, lease_id, after_loss, n)`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "leases, events, fencing sequence",
    sql: (schema) => {
      const s = quoteSchema(schema);
      return `
        -- Tokens for every grant of every resource. A sequence is WAL-logged, so after a
        -- crash or restart it continues past every value handed out (it may skip some).
        CREATE SEQUENCE ${s}.lease_fencing_seq AS bigint;

        -- Current state: one row per held (or lapsed, not yet swept) resource.
        -- resource is COLLATE "C" so prefix filters are byte-order index range scans.
        CREATE TABLE ${s}.leases (
          resource      text COLLATE "C" PRIMARY KEY,
          lease_id      uuid        NOT NULL,
          owner         text        NOT NULL,
          task          text        NOT NULL,
          fencing_token bigint      NOT NULL,
          acquired_at   timestamptz NOT NULL,
          renewed_at    timestamptz NOT NULL,
          expires_at    timestamptz NOT NULL,
          ttl_ms        integer     NOT NULL CHECK (ttl_ms > 0),
          renewals      integer     NOT NULL DEFAULT 0
        );
        CREATE INDEX leases_expires_at_idx ON ${s}.leases (expires_at, resource);
        CREATE INDEX leases_acquired_at_idx ON ${s}.leases (acquired_at, resource);

        -- Append-only history. \`at\` is the database clock when the event was recorded.
        CREATE TABLE ${s}.lease_events (
          id            bigserial PRIMARY KEY,
          at            timestamptz NOT NULL DEFAULT clock_timestamp(),
          kind          text        NOT NULL CHECK (kind IN (${KIND_CHECK})),
          resource      text COLLATE "C" NOT NULL,
          lease_id      uuid,
          owner         text,
          task          text,
          fencing_token bigint,
          hold_ms       bigint,
          actor         text,
          reason        text,
          detail        jsonb
        );
        CREATE INDEX lease_events_at_idx ON ${s}.lease_events (at);
        -- Serves both the exact-resource filter and the prefix range (C collation).
        CREATE INDEX lease_events_resource_at_idx ON ${s}.lease_events (resource, at);
      `;
    },
  },
  {
    version: 2,
    name: "stats rollups",
    sql: (schema) => {
      const s = quoteSchema(schema);
      const counters = COUNTER_COLUMNS.map((c) => `${c} bigint NOT NULL DEFAULT 0`).join(",\n          ");
      const table = (name: string) => `
        CREATE TABLE ${s}.${name} (
          bucket_start   timestamptz PRIMARY KEY,
          ${counters},
          hold_histogram bigint[] NOT NULL CHECK (cardinality(hold_histogram) = ${HISTOGRAM_SIZE}),
          hold_ms_sum    bigint NOT NULL DEFAULT 0
        );`;
      const contention = (name: string) => `
        CREATE TABLE ${s}.${name} (
          depth        smallint    NOT NULL CHECK (depth BETWEEN 1 AND 3),
          bucket_start timestamptz NOT NULL,
          prefix       text COLLATE "C" NOT NULL,
          contended    bigint      NOT NULL,
          PRIMARY KEY (depth, bucket_start, prefix)
        );`;
      return `
        -- Rollups are rebuilt from lease_events by sweep(), never written by acquire:
        -- a counter row updated by every acquire would serialise all of them.
        ${table("lease_stats_minute")}
        ${table("lease_stats_hour")}
        ${contention("lease_contention_minute")}
        ${contention("lease_contention_hour")}
        CREATE TABLE ${s}.lease_rollup_state (
          id           boolean PRIMARY KEY DEFAULT true CHECK (id),
          refreshed_at timestamptz NOT NULL
        );
      `;
    },
  },
  {
    version: 3,
    name: "release failure counts",
    sql: (schema) => {
      const s = quoteSchema(schema);
      return `
        -- Releases refused (the lease id no longer held the resource, or its lease had lapsed),
        -- counted by the release statement itself: there is no event for them, and the count
        -- must survive for /api/metrics. One row per reason; only refused releases touch it.
        CREATE TABLE ${s}.lease_release_failures (
          reason text PRIMARY KEY CHECK (reason IN ('not_owner', 'expired')),
          n      bigint NOT NULL
        );
      `;
    },
  },
  {
    version: 4,
    name: "event indexes for owner, task, lease id and token filters",
    sql: (schema) => {
      const s = quoteSchema(schema);
      return `
        -- The console's drill-downs (owner page, task / lease / token filters, the jump
        -- box) read events by these columns; without an index each is a scan of the
        -- window. (owner, at) and (task, at) also serve the windowed, newest-first reads.
        CREATE INDEX lease_events_owner_at_idx ON ${s}.lease_events (owner, at);
        CREATE INDEX lease_events_task_at_idx ON ${s}.lease_events (task, at);
        CREATE INDEX lease_events_lease_id_idx ON ${s}.lease_events (lease_id);
        CREATE INDEX lease_events_fencing_token_idx ON ${s}.lease_events (fencing_token);
      `;
    },
  },
  {
    version: 5,
    name: "renewal slack rollup",
    sql: (schema) => {
      const s = quoteSchema(schema);
      return `
        -- Written by renew (one upsert in its statement): renewals per hour, prefix group, the
        -- TTL they were measured against and slack bucket (twentieths of that TTL left).
        -- \`shard\` (the writing backend's pid mod ${SLACK_SHARDS}) spreads one group's renewals over
        -- rows: a single row would make concurrent renewals wait for each other's commit.
        CREATE TABLE ${s}.lease_renewal_slack (
          bucket_start timestamptz NOT NULL,
          prefix       text COLLATE "C" NOT NULL,
          ttl_ms       integer  NOT NULL,
          slack_bucket smallint NOT NULL CHECK (slack_bucket BETWEEN 0 AND ${SLACK_BUCKET_COUNT - 1}),
          shard        smallint NOT NULL,
          renewals     bigint   NOT NULL,
          PRIMARY KEY (bucket_start, prefix, ttl_ms, slack_bucket, shard)
        );
      `;
    },
  },
  {
    version: 6,
    name: "hold spans for past-state reads",
    sql: (schema) => {
      const s = quoteSchema(schema);
      return `
        -- heldAt(): which holds spanned an instant. A terminal event knows its hold's end
        -- (release time, or for an expiry the TTL's end in detail.expiredAt) and its length
        -- (hold_ms), so [end - hold_ms, recorded at] bounds the hold, in epoch ms widened by
        -- 2 ms for rounding. A GiST index over that range makes "spans T" an index probe
        -- whatever the history's length; the exact bounds are re-checked on the rows found.
        -- IMMUTABLE is true here: the epoch of an instant, and an ISO time with its offset,
        -- do not depend on the session's time zone.
        CREATE FUNCTION ${s}.lease_hold_span(kind text, at timestamptz, hold_ms bigint, detail jsonb)
        RETURNS int8range LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
          SELECT int8range(floor(extract(epoch FROM least(at, CASE WHEN kind = 'expired' AND detail ? 'expiredAt'
                                                              THEN (detail->>'expiredAt')::timestamptz ELSE at END)) * 1000)::bigint - hold_ms - 2,
                           floor(extract(epoch FROM at) * 1000)::bigint + 2, '[]')
        $f$;
      `;
    },
  },
  {
    version: 7,
    name: "lifetime hold and slack histograms per prefix group",
    sql: (schema) => {
      const s = quoteSchema(schema);
      return `
        -- /api/metrics' per-group histograms over the store's lifetime. Folded in by the rollup
        -- refresh (never by acquire, release or renew) up to a watermark kept beside the rollups';
        -- a read adds the raw tail after it (see group-sql.ts). Holds per 2-segment group and hold
        -- bucket; slack per slack group (2 segments, as the renew statement records it) and slack bucket.
        CREATE TABLE ${s}.lease_group_holds (
          prefix      text COLLATE "C" NOT NULL,
          hold_bucket smallint NOT NULL CHECK (hold_bucket BETWEEN 0 AND ${HISTOGRAM_SIZE - 1}),
          holds       bigint   NOT NULL,
          hold_ms_sum bigint   NOT NULL,
          PRIMARY KEY (prefix, hold_bucket)
        );
        CREATE TABLE ${s}.lease_group_slack (
          prefix       text COLLATE "C" NOT NULL,
          slack_bucket smallint NOT NULL CHECK (slack_bucket BETWEEN 0 AND ${SLACK_BUCKET_COUNT - 1}),
          renewals     bigint   NOT NULL,
          PRIMARY KEY (prefix, slack_bucket)
        );
        ALTER TABLE ${s}.lease_rollup_state
          ADD COLUMN holds_folded_until timestamptz,
          ADD COLUMN slack_folded_until timestamptz;
      `;
    },
  },
  {
    version: 8,
    name: "events partitioned by day",
    sql: (schema) => {
      const s = quoteSchema(schema);
      return `
        -- Retention drops whole days of raw events (DROP TABLE of a partition) instead of
        -- deleting rows one by one. Daily partitions: a 24 h window prunes to two of them, a
        -- 30-day retention is ~30 tables (few enough to plan fast), and a day is fine-grained
        -- enough for retention. Bounds are UTC midnights, the console's day.
        --
        -- lease_events_add_partition(day) creates that day's partition if it is missing. Rows
        -- of that day already in the DEFAULT partition (written outside the days prepared
        -- ahead, e.g. a bulk load of old history) are moved into it first, with the DEFAULT
        -- partition locked against inserts so none can slip in before the attach.
        CREATE FUNCTION ${s}.lease_events_add_partition(day date) RETURNS boolean LANGUAGE plpgsql AS $f$
        DECLARE
          part text := 'lease_events_p' || to_char(day, 'YYYYMMDD');
          lo timestamptz := day::timestamp AT TIME ZONE 'UTC';
          hi timestamptz := (day + 1)::timestamp AT TIME ZONE 'UTC';
        BEGIN
          IF to_regclass(format('%I.%I', '${schema}', part)) IS NOT NULL THEN RETURN false; END IF;
          EXECUTE format('CREATE TABLE %I.%I (LIKE %I.lease_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', '${schema}', part, '${schema}');
          IF to_regclass(format('%I.lease_events_default', '${schema}')) IS NOT NULL THEN
            EXECUTE format('LOCK TABLE %I.lease_events_default IN SHARE ROW EXCLUSIVE MODE', '${schema}');
            EXECUTE format('WITH moved AS (DELETE FROM %I.lease_events_default WHERE at >= $1 AND at < $2 RETURNING *) INSERT INTO %I.%I SELECT * FROM moved',
                           '${schema}', '${schema}', part) USING lo, hi;
          END IF;
          EXECUTE format('ALTER TABLE %I.lease_events ATTACH PARTITION %I.%I FOR VALUES FROM (%L) TO (%L)', '${schema}', '${schema}', part, lo, hi);
          RETURN true;
        END
        $f$;

        -- The id sequence outlives the old table: ids stay unique and keep increasing, and
        -- the console's cursors (by id) stay valid across the upgrade.
        ALTER SEQUENCE ${s}.lease_events_id_seq OWNED BY NONE;
        ALTER TABLE ${s}.lease_events RENAME TO lease_events_unpartitioned;
        -- The primary key must contain the partition key; (id, at) keeps id first so
        -- newest-first pages still walk it.
        CREATE TABLE ${s}.lease_events (
          id            bigint      NOT NULL DEFAULT nextval('${s}.lease_events_id_seq'),
          at            timestamptz NOT NULL DEFAULT clock_timestamp(),
          kind          text        NOT NULL CHECK (kind IN (${KIND_CHECK})),
          resource      text COLLATE "C" NOT NULL,
          lease_id      uuid,
          owner         text,
          task          text,
          fencing_token bigint,
          hold_ms       bigint,
          actor         text,
          reason        text,
          detail        jsonb
        ) PARTITION BY RANGE (at);
        ALTER SEQUENCE ${s}.lease_events_id_seq OWNED BY ${s}.lease_events.id;
        -- A write never fails for want of a partition; maintenance moves such rows out.
        CREATE TABLE ${s}.lease_events_default PARTITION OF ${s}.lease_events DEFAULT;
        -- A partition for every day that has events, and for today and the days ahead.
        SELECT ${s}.lease_events_add_partition(d) FROM (
          SELECT DISTINCT (at AT TIME ZONE 'UTC')::date AS d FROM ${s}.lease_events_unpartitioned
          UNION
          SELECT (now() AT TIME ZONE 'UTC')::date + g FROM generate_series(0, ${PARTITION_DAYS_AHEAD}) AS g
        ) days ORDER BY d;
        INSERT INTO ${s}.lease_events SELECT id, at, kind, resource, lease_id, owner, task, fencing_token, hold_ms, actor, reason, detail
          FROM ${s}.lease_events_unpartitioned;
        DROP TABLE ${s}.lease_events_unpartitioned;

        -- Every B-tree index of migrations 1 and 4, as partitioned indexes (built once, after the copy).
        -- Migration 6's GiST hold-span index is not rebuilt: migration 9 moves hold spans to a read model.
        ALTER TABLE ${s}.lease_events ADD CONSTRAINT lease_events_pkey PRIMARY KEY (id, at);
        CREATE INDEX lease_events_at_idx ON ${s}.lease_events (at);
        CREATE INDEX lease_events_resource_at_idx ON ${s}.lease_events (resource, at);
        CREATE INDEX lease_events_owner_at_idx ON ${s}.lease_events (owner, at);
        CREATE INDEX lease_events_task_at_idx ON ${s}.lease_events (task, at);
        CREATE INDEX lease_events_lease_id_idx ON ${s}.lease_events (lease_id);
        CREATE INDEX lease_events_fencing_token_idx ON ${s}.lease_events (fencing_token);

        -- Where raw history begins once retention has dropped partitions (NULL: nothing dropped).
        CREATE TABLE ${s}.lease_event_retention (
          id            boolean PRIMARY KEY DEFAULT true CHECK (id),
          dropped_until timestamptz NOT NULL
        );
      `;
    },
  },
  {
    version: 9,
    name: "hold spans as a read model off the write path",
    sql: (schema) => {
      const s = quoteSchema(schema);
      return `
        -- The GiST entry every release, expiry and force-release added to lease_events (migration 6)
        -- was most of what the write path paid beyond the lease and event rows (measured: about a
        -- quarter of the server CPU of an acquire+release pair). heldAt() reads hold spans from this
        -- read model instead, filled from the events by refreshRollups() (run by sweep()), and reads
        -- the events newer than the last refresh straight from lease_events (held-at.ts).
        -- Self-contained (no join back to lease_events), so the events' own layout can change.
        CREATE TABLE ${s}.lease_hold_spans (
          event_id      bigint PRIMARY KEY,
          at            timestamptz NOT NULL,
          kind          text        NOT NULL,
          resource      text COLLATE "C" NOT NULL,
          lease_id      uuid,
          owner         text,
          task          text,
          fencing_token bigint,
          hold_ms       bigint      NOT NULL,
          ended_at      timestamptz NOT NULL,
          span          int8range   NOT NULL
        );
        CREATE INDEX lease_hold_spans_span_idx ON ${s}.lease_hold_spans USING gist (span);
        ${buildHoldSpansInsert(schema, "TIMESTAMPTZ '-infinity'")};
        DROP INDEX IF EXISTS ${s}.lease_events_hold_span_idx;
      `;
    },
  },
  {
    version: 10,
    name: "acquire and release as functions",
    sql: (schema) => {
      const s = quoteSchema(schema);
      const ttl = "p_ttl_ms * interval '1 millisecond'";
      const events = `${s}.lease_events (at, kind, resource, lease_id, owner, task, fencing_token, hold_ms, detail)`;
      return `
        -- acquire and release as one function call each. A statement of CTEs initialises every
        -- branch (each insert, update and delete it might run) on every call; that executor setup
        -- was the largest part of the server's time per acquire+release pair, more than writing the
        -- rows. A function runs only what the lease's state asks for: the common case is one
        -- statement (the lease change and its event together), the rest runs only when needed.
        -- Same invariants as the statements in sql.ts: grants of a resource are serialised by the
        -- same advisory lock (same key, so stores of the previous version on this schema queue with
        -- these), the clock is read after the row lock, nextval() on every grant, and the change and its events commit
        -- together in the caller's one statement. Each statement in a function takes a new
        -- snapshot (READ COMMITTED), so a row committed by the previous holder of the advisory
        -- lock is visible to the reads after it.
        --
        -- Returns the holder: ours when outcome is 'acquired' (took_over when a lapsed lease was
        -- replaced, its expiry recorded here), the live one refusing us when 'contended' (the
        -- contention recorded). No row: the insert met a row its locking read could not see (not
        -- expected while every grant takes the advisory lock); the caller re-runs.
        CREATE FUNCTION ${s}.lease_acquire(p_resource text, p_owner text, p_task text, p_ttl_ms integer, p_lease_id uuid,
          OUT outcome text, OUT took_over boolean, OUT lease_id uuid, OUT owner text, OUT task text, OUT fencing_token bigint,
          OUT acquired_at timestamptz, OUT expires_at timestamptz)
        RETURNS SETOF record LANGUAGE plpgsql AS $f$
        #variable_conflict use_column
        DECLARE
          o ${s}.leases%ROWTYPE;
          w ${s}.leases%ROWTYPE;
          t timestamptz;
        BEGIN
          PERFORM pg_advisory_xact_lock(hashtext('${schema}'), hashtext(p_resource));
          -- Free (the common case): the lease and its event in one statement. The locking read
          -- waits for a statement still ending the previous lease (a release, a sweep), so the
          -- clock, read after it, is never before that lease's end. A row there (held, or lapsed
          -- and not yet swept) leaves the insert out and is handled below.
          WITH cur AS MATERIALIZED (SELECT 1 FROM ${s}.leases l WHERE l.resource = p_resource FOR UPDATE),
          clk AS MATERIALIZED (SELECT clock_timestamp() AS now WHERE NOT EXISTS (SELECT 1 FROM cur)),
          ins AS (
            INSERT INTO ${s}.leases AS l (resource, lease_id, owner, task, fencing_token, acquired_at, renewed_at, expires_at, ttl_ms, renewals)
            SELECT p_resource, p_lease_id, p_owner, p_task, nextval('${s}.lease_fencing_seq'), c.now, c.now, c.now + ${ttl}, p_ttl_ms, 0 FROM clk c
            ON CONFLICT (resource) DO NOTHING
            RETURNING l.*
          ), ev AS (
            INSERT INTO ${events}
            SELECT i.acquired_at, 'acquired', i.resource, i.lease_id, i.owner, i.task, i.fencing_token, NULL, jsonb_build_object('ttlMs', i.ttl_ms) FROM ins i
          )
          SELECT * INTO w FROM ins;
          IF w.resource IS NOT NULL THEN
            outcome := 'acquired'; took_over := false;
          ELSE
            SELECT * INTO o FROM ${s}.leases l WHERE l.resource = p_resource FOR UPDATE;
            t := clock_timestamp();
            IF o.resource IS NULL THEN RETURN; END IF;
            IF o.expires_at > t THEN
              w := o;
              INSERT INTO ${events} VALUES
                (t, 'contended', w.resource, w.lease_id, p_owner, p_task, w.fencing_token, NULL, jsonb_build_object('holderOwner', w.owner, 'holderTask', w.task));
              outcome := 'contended'; took_over := false;
            ELSE
              UPDATE ${s}.leases l
              SET lease_id = p_lease_id, owner = p_owner, task = p_task, fencing_token = nextval('${s}.lease_fencing_seq'),
                  acquired_at = t, renewed_at = t, expires_at = t + ${ttl}, ttl_ms = p_ttl_ms, renewals = 0
              WHERE l.resource = p_resource
              RETURNING l.* INTO w;
              INSERT INTO ${events} VALUES
                (t, 'expired', o.resource, o.lease_id, o.owner, o.task, o.fencing_token, ${heldMs("o.expires_at", "o.acquired_at")}, ${lapsedDetail("o", "acquire")}),
                (t, 'acquired', w.resource, w.lease_id, w.owner, w.task, w.fencing_token, NULL, jsonb_build_object('ttlMs', w.ttl_ms));
              outcome := 'acquired'; took_over := true;
            END IF;
          END IF;
          lease_id := w.lease_id; owner := w.owner; task := w.task; fencing_token := w.fencing_token;
          acquired_at := w.acquired_at; expires_at := w.expires_at;
          RETURN NEXT;
        END
        $f$;

        -- verdict 'ok': the lease ended, with its 'released' event (id, at, owner, task, token,
        -- hold_ms, renewals). 'not_owner': p_lease_id does not hold the resource. 'expired': it did,
        -- but had lapsed; its expiry is recorded here, once. Refusals are counted by reason.
        -- The delete takes the row lock, and the clock is read after it (in RETURNING): one
        -- statement ends the lease and records how it ended.
        CREATE FUNCTION ${s}.lease_release(p_resource text, p_lease_id text,
          OUT verdict text, OUT id bigint, OUT at timestamptz, OUT owner text, OUT task text, OUT fencing_token bigint,
          OUT hold_ms bigint, OUT renewals integer)
        LANGUAGE plpgsql AS $f$
        #variable_conflict use_column
        DECLARE
          e record;
        BEGIN
          WITH d AS (
            DELETE FROM ${s}.leases l WHERE l.resource = p_resource AND l.lease_id::text = p_lease_id
            RETURNING l.*, clock_timestamp() AS now
          ), ev AS (
            INSERT INTO ${s}.lease_events AS x (at, kind, resource, lease_id, owner, task, fencing_token, hold_ms, detail)
            SELECT d.now, CASE WHEN d.lapsed THEN 'expired' ELSE 'released' END, d.resource, d.lease_id, d.owner, d.task, d.fencing_token,
                   CASE WHEN d.lapsed THEN ${heldMs("d.expires_at", "d.acquired_at")} ELSE ${heldMs("d.now", "d.acquired_at")} END,
                   CASE WHEN d.lapsed THEN ${lapsedDetail("d", "release")} ELSE jsonb_build_object('renewals', d.renewals) END
            FROM (SELECT d.*, d.expires_at <= d.now AS lapsed FROM d) d
            RETURNING x.id, x.at, x.kind, x.owner, x.task, x.fencing_token, x.hold_ms
          )
          SELECT ev.*, d.renewals INTO e FROM ev, d;
          IF e.kind = 'released' THEN
            verdict := 'ok'; id := e.id; at := e.at; owner := e.owner; task := e.task; fencing_token := e.fencing_token;
            hold_ms := e.hold_ms; renewals := e.renewals;
            RETURN;
          END IF;
          verdict := CASE WHEN e.kind = 'expired' THEN 'expired' ELSE 'not_owner' END;
          INSERT INTO ${s}.lease_release_failures AS f (reason, n) VALUES (verdict, 1) ON CONFLICT (reason) DO UPDATE SET n = f.n + 1;
        END
        $f$;
      `;
    },
  },
  {
    version: 11,
    name: "day rollups",
    sql: (schema) => {
      const s = quoteSchema(schema);
      const counters = COUNTER_COLUMNS.map((c) => `${c} bigint NOT NULL DEFAULT 0`).join(",\n          ");
      const day = buildDayRollupStatements(schema, "TIMESTAMPTZ '-infinity'", String(TOP_PREFIXES_PER_BUCKET));
      return `
        -- A 30-day chart read 720 hour rows and ranked up to 72 000 hour contention rows per
        -- store and window; day rows, summed from the hours by refreshRollups(), make it 30 and
        -- 3 000. Like the hours they never depend on raw events, so they outlive retention.
        CREATE TABLE ${s}.lease_stats_day (
          bucket_start   timestamptz PRIMARY KEY,
          ${counters},
          hold_histogram bigint[] NOT NULL CHECK (cardinality(hold_histogram) = ${HISTOGRAM_SIZE}),
          hold_ms_sum    bigint NOT NULL DEFAULT 0
        );
        CREATE TABLE ${s}.lease_contention_day (
          depth        smallint    NOT NULL CHECK (depth BETWEEN 1 AND 3),
          bucket_start timestamptz NOT NULL,
          prefix       text COLLATE "C" NOT NULL,
          contended    bigint      NOT NULL,
          PRIMARY KEY (depth, bucket_start, prefix)
        );
        ${day.refreshDayCounters};
        ${day.refreshDayContention};
      `;
    },
  },
  {
    version: 12,
    name: "live-lease indexes for owner and task lists",
    sql: (schema) => {
      const s = quoteSchema(schema);
      return `
        -- The leases list filtered by owner or task (held_longest / newest: equality, then index
        -- order, stopped by the page limit; expires: the owner's or task's rows, then a top-N sort).
        -- No (owner, expires_at) index: expires_at changes on every renew, and each index on
        -- leases is paid by acquire, renew and release.
        CREATE INDEX leases_owner_acquired_idx ON ${s}.leases (owner, acquired_at, resource);
        CREATE INDEX leases_task_acquired_idx ON ${s}.leases (task, acquired_at, resource);
      `;
    },
  },
  {
    version: 13,
    name: "event filter indexes in id order",
    sql: (schema) => {
      const s = quoteSchema(schema);
      return `
        -- Event reads are newest first by id with a page limit. Led by the filtered column and
        -- followed by id, each index hands rows over in that order and the read stops at the
        -- limit; with (column, at) the planner walked the primary key instead, filtering, and
        -- a value with no recent rows read every partition (past the statement timeout at 10M
        -- events). kind had no index at all. Building these on a partitioned table blocks
        -- writes to lease_events while it runs: 67–86 s for 11M events on 2 busy cores.
        DROP INDEX ${s}.lease_events_resource_at_idx;
        DROP INDEX ${s}.lease_events_owner_at_idx;
        DROP INDEX ${s}.lease_events_task_at_idx;
        CREATE INDEX lease_events_resource_id_idx ON ${s}.lease_events (resource, id);
        CREATE INDEX lease_events_owner_id_idx ON ${s}.lease_events (owner, id);
        CREATE INDEX lease_events_task_id_idx ON ${s}.lease_events (task, id);
        CREATE INDEX lease_events_kind_id_idx ON ${s}.lease_events (kind, id);
      `;
    },
  },
  {
    version: 14,
    name: "acquire with a caller-chosen lease id",
    sql: (schema) => {
      const s = quoteSchema(schema);
      return `
        -- For AcquireInput.leaseId (a caller that may send the same acquire twice, e.g. the lock
        -- API's Idempotency-Key on two replicas). While that lease holds the resource, a repeat
        -- answers as the first did and records nothing. Once it has ended (its 'acquired' event
        -- exists, in the indexed lease_id column), 'ended': the id is never granted twice. Else
        -- exactly lease_acquire. The advisory lock is taken first (lease_acquire takes it again;
        -- it is re-entrant), so two copies sent at once queue and the second sees the first.
        CREATE FUNCTION ${s}.lease_acquire_once(p_resource text, p_owner text, p_task text, p_ttl_ms integer, p_lease_id uuid,
          OUT outcome text, OUT took_over boolean, OUT lease_id uuid, OUT owner text, OUT task text, OUT fencing_token bigint,
          OUT acquired_at timestamptz, OUT expires_at timestamptz)
        RETURNS SETOF record LANGUAGE plpgsql AS $f$
        #variable_conflict use_column
        DECLARE
          o ${s}.leases%ROWTYPE;
        BEGIN
          PERFORM pg_advisory_xact_lock(hashtext('${schema}'), hashtext(p_resource));
          SELECT * INTO o FROM ${s}.leases l WHERE l.resource = p_resource AND l.lease_id = p_lease_id AND l.expires_at > clock_timestamp();
          IF o.resource IS NOT NULL THEN
            outcome := 'acquired'; took_over := false;
            lease_id := o.lease_id; owner := o.owner; task := o.task; fencing_token := o.fencing_token;
            acquired_at := o.acquired_at; expires_at := o.expires_at;
            RETURN NEXT;
            RETURN;
          END IF;
          IF EXISTS (SELECT 1 FROM ${s}.lease_events e WHERE e.lease_id = p_lease_id AND e.kind = 'acquired') THEN
            outcome := 'ended'; took_over := false;
            RETURN NEXT;
            RETURN;
          END IF;
          RETURN QUERY SELECT * FROM ${s}.lease_acquire(p_resource, p_owner, p_task, p_ttl_ms, p_lease_id);
        END
        $f$;
      `;
    },
  },
  {
    version: 15,
    name: "release answers a repeat as the first; a release after a deadline loss is recorded as an expiry",
    sql: (schema) => {
      const s = quoteSchema(schema);
      return `
        -- lease_release of migration 10 (left for processes still calling it), and:
        -- p_after_loss: the holder lost the lease to its local deadline; the end is recorded as
        -- 'expired' (recordedBy 'release_after_deadline'), verdict 'ok', \`kind\` says which.
        -- A release of a lease id that no longer holds, whose lease a release ended (this call sent
        -- again after its reply was lost, or an earlier call by the same holder), answers 'ok' with
        -- that release's event, even if the resource changed hands since. Only a refusal looks (the
        -- indexed lease_id column), so a release costs the same.
        CREATE FUNCTION ${s}.lease_release(p_resource text, p_lease_id text, p_after_loss boolean,
          OUT verdict text, OUT id bigint, OUT at timestamptz, OUT owner text, OUT task text, OUT fencing_token bigint,
          OUT hold_ms bigint, OUT renewals integer, OUT kind text)
        LANGUAGE plpgsql AS $f$
        #variable_conflict use_column
        DECLARE
          e record;
          r record;
        BEGIN
          WITH d AS (
            DELETE FROM ${s}.leases l WHERE l.resource = p_resource AND l.lease_id::text = p_lease_id
            RETURNING l.*, clock_timestamp() AS now
          ), ev AS (
            INSERT INTO ${s}.lease_events AS x (at, kind, resource, lease_id, owner, task, fencing_token, hold_ms, detail)
            SELECT d.now, CASE WHEN d.lapsed OR p_after_loss THEN 'expired' ELSE 'released' END, d.resource, d.lease_id, d.owner, d.task, d.fencing_token,
                   CASE WHEN d.lapsed THEN ${heldMs("d.expires_at", "d.acquired_at")} ELSE ${heldMs("d.now", "d.acquired_at")} END,
                   CASE WHEN d.lapsed THEN ${lapsedDetail("d", "release")}
                        WHEN p_after_loss THEN jsonb_build_object('renewals', d.renewals, 'recordedBy', 'release_after_deadline')
                        ELSE jsonb_build_object('renewals', d.renewals) END
            FROM (SELECT d.*, d.expires_at <= d.now AS lapsed FROM d) d
            RETURNING x.id, x.at, x.kind, x.owner, x.task, x.fencing_token, x.hold_ms
          )
          SELECT ev.*, d.renewals, d.expires_at <= d.now AS lapsed INTO e FROM ev, d;
          IF e.kind IS NOT NULL AND NOT e.lapsed THEN
            verdict := 'ok'; id := e.id; at := e.at; owner := e.owner; task := e.task; fencing_token := e.fencing_token;
            hold_ms := e.hold_ms; renewals := e.renewals; kind := e.kind;
            RETURN;
          END IF;
          IF e.kind IS NULL AND p_lease_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
            SELECT x.id, x.at, x.owner, x.task, x.fencing_token, x.hold_ms, (x.detail->>'renewals')::integer AS renewals INTO r
            FROM ${s}.lease_events x
            WHERE x.lease_id = p_lease_id::uuid AND x.kind = 'released' AND x.resource = p_resource
            LIMIT 1;
            IF r.id IS NOT NULL THEN
              verdict := 'ok'; id := r.id; at := r.at; owner := r.owner; task := r.task; fencing_token := r.fencing_token;
              hold_ms := r.hold_ms; renewals := coalesce(r.renewals, 0); kind := 'released';
              RETURN;
            END IF;
          END IF;
          verdict := CASE WHEN e.kind = 'expired' THEN 'expired' ELSE 'not_owner' END;
          INSERT INTO ${s}.lease_release_failures AS f (reason, n) VALUES (verdict, 1) ON CONFLICT (reason) DO UPDATE SET n = f.n + 1;
        END
        $f$;
      `;
    },
  },
  {
    version: 16,
    name: "hourly counts per prefix group",
    sql: (schema) => {
      const s = quoteSchema(schema);
      const counters = COUNTER_COLUMNS.map((c) => `${c} bigint NOT NULL DEFAULT 0`).join(",\n          ");
      const groups = buildGroupRollupStatements(schema);
      return `
        -- A prefix view over days reads these instead of the events (prefix-groups.ts): one row per
        -- hour and group that had events, recomputed by the rollup refresh like the hour rollups.
        CREATE TABLE ${s}.lease_group_stats_hour (
          bucket_start   timestamptz NOT NULL,
          grp            text COLLATE "C" NOT NULL,
          ${counters},
          hold_histogram bigint[] NOT NULL CHECK (cardinality(hold_histogram) = ${HISTOGRAM_SIZE}),
          hold_ms_sum    bigint NOT NULL DEFAULT 0,
          PRIMARY KEY (bucket_start, grp)
        );
        -- From when the rows are complete: the events already dropped by retention are not in them.
        CREATE TABLE ${s}.lease_group_stats_state (
          id           boolean PRIMARY KEY DEFAULT true CHECK (id),
          covered_from timestamptz
        );
        INSERT INTO ${s}.lease_group_stats_state (covered_from) SELECT dropped_until FROM ${s}.lease_event_retention
          UNION ALL SELECT NULL WHERE NOT EXISTS (SELECT 1 FROM ${s}.lease_event_retention) LIMIT 1;
        ${groups.refreshGroupHours.replace("$1::timestamptz", "'-infinity'::timestamptz")};
      `;
    },
  },
  {
    version: 17,
    name: "event kinds checked by a function",
    sql: (schema) => {
      const s = quoteSchema(schema);
      return `
        -- The same rule as the CHECK (kind IN (...)) it replaces, cheaper to enforce. Postgres reads
        -- a CHECK's stored expression tree back from text on every INSERT statement (not once per
        -- session), and an IN list of every kind is a large tree: 7 % of the server's time for
        -- acquires and releases through the lock API. A call of this function is a small tree, and
        -- plpgsql keeps the function compiled for the session. A new kind is a CREATE OR REPLACE of it.
        CREATE FUNCTION ${s}.lease_event_kind_is_known(kind text) RETURNS boolean
          LANGUAGE plpgsql IMMUTABLE STRICT AS $f$ BEGIN RETURN kind IN (${KIND_CHECK}); END $f$;
        DO $d$
        DECLARE c text;
        BEGIN
          FOR c IN SELECT conname FROM pg_constraint
            WHERE conrelid = '${s}.lease_events'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE 'CHECK ((kind = ANY (ARRAY[%'
          LOOP
            EXECUTE format('ALTER TABLE ${s}.lease_events DROP CONSTRAINT %I', c);
          END LOOP;
        END
        $d$;
        -- NOT VALID skips a scan of every partition under this migration's exclusive lock: the rows
        -- already there were checked by the constraint dropped above, against the same kinds.
        -- New rows, and partitions created from now on, are checked.
        ALTER TABLE ${s}.lease_events ADD CONSTRAINT lease_events_kind_is_known
          CHECK (${s}.lease_event_kind_is_known(kind)) NOT VALID;
      `;
    },
  },
  {
    version: 18,
    name: "lease_acquire and lease_acquire_once return at most one row",
    sql: (schema) => {
      const s = quoteSchema(schema);
      return `
        -- The truth, told to the planner, which otherwise assumes 1000 rows from a set-returning
        -- function. With it the grouped calls (leaseCallsMany in sql.ts) keep one generic plan.
        -- Without it a statement of fewer calls than
        -- the generic plan assumes (ten) looked cheaper planned afresh, so every one was.
        ALTER FUNCTION ${s}.lease_acquire(text, text, text, integer, uuid) ROWS 1;
        ALTER FUNCTION ${s}.lease_acquire_once(text, text, text, integer, uuid) ROWS 1;
      `;
    },
  },
  {
    version: 19,
    name: "look-ups by lease id read the lease id index, whatever the statistics",
    sql: (schema) => {
      const earlier = (version: number) => MIGRATIONS.find((m) => m.version === version)!.sql(schema);
      const acquireOnce = [
        ["CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"],
        ["RETURNS SETOF record LANGUAGE", "RETURNS SETOF record ROWS 1 LANGUAGE"],
        ["AND e.kind = 'acquired')", "AND (e.kind = 'acquired') IS TRUE)"],
      ].reduce((sql, [from, to]) => replaceOnce(sql, from!, to!), earlier(14));
      const release = [
        ["CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"],
        ["AND x.kind = 'released' AND x.resource = p_resource", "AND (x.kind = 'released' AND x.resource = p_resource) IS TRUE"],
      ].reduce((sql, [from, to]) => replaceOnce(sql, from!, to!), earlier(15));
      return `
        -- lease_acquire_once (migration 14) and lease_release (migration 15), unchanged but for
        -- their look-ups of a lease id's earlier events. Those tested kind (and resource) beside the
        -- lease id, and on a partition without statistics (a new installation, a day's partition
        -- until it is first analyzed) the planner rated the kind index as good as the lease id
        -- index and could take it: every event of that kind read, one by one, for each call, ever
        -- slower as the day fills (an acquire with a chosen id fell from ~2 800 to ~900 a second
        -- within 24 s on a new schema). Tested as one expression (IS TRUE), kind and resource are a
        -- filter and not an index condition, so the lease id index is the only one to read.
        ${acquireOnce}
        ${release}
      `;
    },
  },
  {
    version: 20,
    name: "the calls of one statement as a few set-based statements",
    sql: (schema) => {
      const s = quoteSchema(schema);
      const answer = `${s}.lease_call_answer`;
      const events = `${s}.lease_events (at, kind, resource, lease_id, owner, task, fencing_token, hold_ms, detail)`;
      /** An answer row: `n`, then an acquire's columns or a release's (the rest NULL). */
      const acquireAnswer = (n: string, a: string) =>
        `ROW(${n}, ${a}.outcome, ${a}.took_over, ${a}.lease_id, ${a}.owner, ${a}.task, ${a}.fencing_token, ${a}.acquired_at, ${a}.expires_at, NULL, NULL, NULL, NULL, NULL, NULL)::${answer}`;
      const releaseAnswer = (n: string, r: string) =>
        `ROW(${n}, NULL, NULL, NULL, ${r}.owner, ${r}.task, ${r}.fencing_token, NULL, NULL, ${r}.verdict, ${r}.id, ${r}.at, ${r}.hold_ms, ${r}.renewals, ${r}.kind)::${answer}`;
      return `
        -- The grouped calls of the store (leaseCallsMany in sql.ts) ran one function call each, and
        -- each call set up its own statements: opening the leases table, the event partition and
        -- their indexes, and an executor, per call. That was about half of the server's time for an
        -- acquire+release pair. lease_calls does the common cases for all of its calls at once:
        --   1. every resource's advisory lock (lease_acquire's), in lock-key order;
        --   2. releases by the lease id holding the resource: one DELETE and one INSERT of events;
        --   3. the first acquire of each free resource (with a lease id the caller chose, one never
        --      granted before): one INSERT of leases and one of events;
        --   4. every other call, one by one in resource order, by the functions a call alone runs
        --      (contention, takeovers, chosen ids, repeats, refusals): acquires first, then releases;
        --   5. the count of refusals met in step 2.
        -- Each step is a statement of its own, so each sees what committed before it (a statement's
        -- snapshot is taken before it waits for a lock), and the same rows and events are written
        -- as the functions write them. A resource's leases are only ever granted under its
        -- advisory lock, all of which this call holds from step 1: no row of its resources appears
        -- under it, and the lease rows it waits for (a release, renew or sweep of one lease still
        -- ending) are held by transactions that wait for nothing it holds. The refusal counter
        -- rows, shared by every refusal, are only touched once no row lock is left to wait for,
        -- so the counter never closes a cycle of waits.
        CREATE TYPE ${answer} AS (
          n bigint, outcome text, took_over boolean, lease_id uuid, owner text, task text, fencing_token bigint,
          acquired_at timestamptz, expires_at timestamptz, verdict text, id bigint, at timestamptz, hold_ms bigint,
          renewals integer, kind text
        );
        CREATE FUNCTION ${s}.lease_calls(p_resource text[], p_call text[], p_owner text[], p_task text[], p_ttl_ms integer[],
          p_lease_id text[], p_after_loss boolean[])
        RETURNS SETOF ${answer} LANGUAGE plpgsql AS $f$
        #variable_conflict use_column
        DECLARE
          released ${answer}[];
          granted ${answer}[];
          answered bigint[];
          lapsed_releases bigint;
          c record;
        BEGIN
          PERFORM pg_advisory_xact_lock(hashtext('${schema}'), k.key)
          FROM (SELECT DISTINCT hashtext(r) AS key FROM unnest(p_resource) AS r) k
          ORDER BY k.key;

          -- The first release of each resource in the call order; a lease it ends answers as
          -- lease_release's would: 'ok', or 'expired' (refused) for a lease that had lapsed. A step
          -- with no calls of its kind is skipped: even with no rows, it would open the tables.
          released := '{}';
          lapsed_releases := 0;
          IF 'release' = ANY (p_call) THEN
            WITH r AS (
              SELECT DISTINCT ON (x.resource) x.n, x.resource, x.lease_id, x.after_loss
              FROM ${LEASE_CALLS_ROWS}
              WHERE x.call = 'release'
              ORDER BY x.resource, x.n
            ), d AS (
              DELETE FROM ${s}.leases l USING r
              WHERE l.resource = r.resource AND l.lease_id::text = r.lease_id
              RETURNING l.*, r.n, r.after_loss, clock_timestamp() AS now
            ), dl AS (
              SELECT d.*, d.expires_at <= d.now AS lapsed FROM d
            ), ev AS (
              INSERT INTO ${s}.lease_events AS e (at, kind, resource, lease_id, owner, task, fencing_token, hold_ms, detail)
              SELECT d.now, CASE WHEN d.lapsed OR d.after_loss THEN 'expired' ELSE 'released' END, d.resource, d.lease_id, d.owner, d.task, d.fencing_token,
                     CASE WHEN d.lapsed THEN ${heldMs("d.expires_at", "d.acquired_at")} ELSE ${heldMs("d.now", "d.acquired_at")} END,
                     CASE WHEN d.lapsed THEN ${lapsedDetail("d", "release")}
                          WHEN d.after_loss THEN jsonb_build_object('renewals', d.renewals, 'recordedBy', 'release_after_deadline')
                          ELSE jsonb_build_object('renewals', d.renewals) END
              FROM dl d
              RETURNING e.id, e.at, e.kind, e.resource, e.owner, e.task, e.fencing_token, e.hold_ms
            )
            SELECT coalesce(array_agg(CASE WHEN d.lapsed THEN ROW(d.n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'expired', NULL, NULL, NULL, NULL, NULL)::${answer}
                                           ELSE ROW(d.n, NULL, NULL, NULL, e.owner, e.task, e.fencing_token, NULL, NULL, 'ok', e.id, e.at, e.hold_ms, d.renewals, e.kind)::${answer} END),
                            '{}'),
                   count(*) FILTER (WHERE d.lapsed)
            INTO released, lapsed_releases
            FROM dl d JOIN ev e ON e.resource = d.resource;
          END IF;

          -- The first acquire of each resource in the call order, when the resource is free and, for
          -- a lease id the caller chose, no lease of that id was ever granted (lease_acquire_once's
          -- look-up, which reads the lease id index only, as migration 19 made it): the row locks
          -- first (waiting for a lease still ending), then the clock, as lease_acquire.
          granted := '{}';
          IF 'acquire' = ANY (p_call) OR 'acquire_once' = ANY (p_call) THEN
            WITH f AS MATERIALIZED (
              SELECT a.* FROM (
                SELECT DISTINCT ON (x.resource) x.* FROM ${LEASE_CALLS_ROWS}
                WHERE x.call IN ('acquire', 'acquire_once')
                ORDER BY x.resource, x.n
              ) a
              WHERE a.call = 'acquire'
                 OR NOT EXISTS (SELECT 1 FROM ${s}.lease_events e WHERE e.lease_id = a.lease_id::uuid AND (e.kind = 'acquired') IS TRUE)
            ), cur AS MATERIALIZED (
              SELECT l.resource FROM ${s}.leases l WHERE l.resource IN (SELECT f.resource FROM f) FOR UPDATE OF l
            ), clk AS MATERIALIZED (
              SELECT clock_timestamp() AS now FROM (SELECT count(*) FROM cur) k
            ), ins AS (
              INSERT INTO ${s}.leases AS l (resource, lease_id, owner, task, fencing_token, acquired_at, renewed_at, expires_at, ttl_ms, renewals)
              SELECT f.resource, f.lease_id::uuid, f.owner, f.task, nextval('${s}.lease_fencing_seq'), c.now, c.now,
                     c.now + f.ttl_ms * interval '1 millisecond', f.ttl_ms, 0
              FROM f, clk c
              WHERE f.resource NOT IN (SELECT cur.resource FROM cur)
              ON CONFLICT (resource) DO NOTHING
              RETURNING l.*
            ), ev AS (
              INSERT INTO ${events}
              SELECT i.acquired_at, 'acquired', i.resource, i.lease_id, i.owner, i.task, i.fencing_token, NULL, jsonb_build_object('ttlMs', i.ttl_ms) FROM ins i
            )
            SELECT coalesce(array_agg(ROW(f.n, 'acquired', false, i.lease_id, i.owner, i.task, i.fencing_token, i.acquired_at, i.expires_at,
                                          NULL, NULL, NULL, NULL, NULL, NULL)::${answer}), '{}')
            INTO granted
            FROM ins i JOIN f ON f.resource = i.resource;
          END IF;

          RETURN QUERY SELECT * FROM unnest(released || granted);

          IF cardinality(released) + cardinality(granted) < cardinality(p_resource) THEN
            answered := ARRAY(SELECT a.n FROM unnest(released || granted) a);
            FOR c IN SELECT x.* FROM ${LEASE_CALLS_ROWS}
                     WHERE x.call <> 'release' AND x.n <> ALL (answered) ORDER BY x.resource COLLATE "C", x.n LOOP
              IF c.call = 'acquire' THEN
                RETURN QUERY SELECT (${acquireAnswer("c.n", "a")}).* FROM ${s}.lease_acquire(c.resource, c.owner, c.task, c.ttl_ms, c.lease_id::uuid) a;
              ELSE
                RETURN QUERY SELECT (${acquireAnswer("c.n", "a")}).* FROM ${s}.lease_acquire_once(c.resource, c.owner, c.task, c.ttl_ms, c.lease_id::uuid) a;
              END IF;
            END LOOP;
            FOR c IN SELECT x.* FROM ${LEASE_CALLS_ROWS}
                     WHERE x.call = 'release' AND x.n <> ALL (answered) ORDER BY x.resource COLLATE "C", x.n LOOP
              RETURN QUERY SELECT (${releaseAnswer("c.n", "r")}).* FROM ${s}.lease_release(c.resource, c.lease_id, c.after_loss) r;
            END LOOP;
          END IF;

          IF lapsed_releases > 0 THEN
            INSERT INTO ${s}.lease_release_failures AS f (reason, n) VALUES ('expired', lapsed_releases)
            ON CONFLICT (reason) DO UPDATE SET n = f.n + EXCLUDED.n;
          END IF;
        END
        $f$;
      `;
    },
  },
  {
    version: 21,
    name: "refused acquires of a shared statement as one set-based statement",
    sql: (schema) => {
      const s = quoteSchema(schema);
      const answer = `${s}.lease_call_answer`;
      const earlier = MIGRATIONS.find((m) => m.version === 20)!.sql(schema);
      // Migration 20 also created the answer type, which stays as it is.
      const typeDefinition = /CREATE TYPE [^;]*;/.exec(earlier);
      if (!typeDefinition) throw new Error("migration text: expected migration 20 to create the answer type");
      const withoutType = replaceOnce(earlier, typeDefinition[0], "");
      const contendedStep = `
          -- Acquires of a resource a live lease holds (one granted just above included), each
          -- refused as lease_acquire refuses it: its 'contended' event names the requester and the
          -- holder, the answer the holder. Rows locked in resource order, then the clock, as above.
          -- A lapsed lease (a takeover) and the holder's own lease id are left to lease_acquire.
          contended := '{}';
          IF 'acquire' = ANY (p_call) AND cardinality(released) + cardinality(granted) < cardinality(p_resource) THEN
            answered := ARRAY(SELECT a.n FROM unnest(released || granted) a);
            WITH q AS MATERIALIZED (
              SELECT x.* FROM ${LEASE_CALLS_ROWS} WHERE x.call = 'acquire' AND x.n <> ALL (answered)
            ), cur AS MATERIALIZED (
              SELECT l.* FROM ${s}.leases l WHERE l.resource IN (SELECT q.resource FROM q) ORDER BY l.resource COLLATE "C" FOR UPDATE OF l
            ), clk AS MATERIALIZED (
              SELECT clock_timestamp() AS now FROM (SELECT count(*) FROM cur) k
            ), held AS MATERIALIZED (
              SELECT q.n, q.owner AS requester_owner, q.task AS requester_task, o.resource, o.lease_id, o.owner, o.task, o.fencing_token,
                     o.acquired_at, o.expires_at, c.now
              FROM q JOIN cur o ON o.resource = q.resource AND o.lease_id::text <> q.lease_id, clk c
              WHERE o.expires_at > c.now
            ), ev AS (
              INSERT INTO ${s}.lease_events (at, kind, resource, lease_id, owner, task, fencing_token, hold_ms, detail)
              SELECT h.now, 'contended', h.resource, h.lease_id, h.requester_owner, h.requester_task, h.fencing_token, NULL,
                     jsonb_build_object('holderOwner', h.owner, 'holderTask', h.task)
              FROM held h ORDER BY h.resource COLLATE "C", h.n
            )
            SELECT coalesce(array_agg(ROW(h.n, 'contended', false, h.lease_id, h.owner, h.task, h.fencing_token, h.acquired_at, h.expires_at,
                                          NULL, NULL, NULL, NULL, NULL, NULL)::${answer}), '{}')
            INTO contended
            FROM held h;
          END IF;

          RETURN QUERY SELECT * FROM unnest(released || granted || contended);

          IF cardinality(released) + cardinality(granted) + cardinality(contended) < cardinality(p_resource) THEN
            answered := ARRAY(SELECT a.n FROM unnest(released || granted || contended) a);`;
      const body = [
        ["CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"],
        [`granted ${answer}[];`, `granted ${answer}[];\n          contended ${answer}[];`],
        [
          `
          RETURN QUERY SELECT * FROM unnest(released || granted);

          IF cardinality(released) + cardinality(granted) < cardinality(p_resource) THEN
            answered := ARRAY(SELECT a.n FROM unnest(released || granted) a);`,
          contendedStep,
        ],
      ].reduce((sql, [from, to]) => replaceOnce(sql, from!, to!), withoutType);
      return `
        -- lease_calls (migration 20) with one more set-based step: an acquire of a resource a live
        -- lease holds ran lease_acquire on its own, which cost the server about twice a granted
        -- acquire (its executor setup, a second locking read). Those are now refused together, as
        -- lease_acquire would refuse each, before the calls left over run one by one.
        ${body}
      `;
    },
  },
];

export interface MigrateResult {
  /** Versions applied by this call (empty when already up to date). */
  applied: number[];
  /** Schema version after the call. */
  version: number;
}

/**
 * Applies pending migrations in one transaction. The transaction-scoped advisory
 * lock (keyed by schema) makes concurrent migrate() calls — several processes
 * starting at once — run one after another; the later ones find nothing to do.
 */
export async function runMigrations(pool: pg.Pool, schema: string, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrateResult> {
  const sql = buildMigrationStatements(schema);
  return inTransaction(pool, async (client) => {
    await client.query(sql.lock, [internalLockKey("migrate", schema)]);
    await client.query(sql.createSchema);
    await client.query(sql.createLedger);
    return applyPendingMigrations(client, sql, migrations, schema);
  });
}

/** What a ledger has applied of a migration list, and what it still lacks. */
export interface MigrationStatus {
  /** The highest version applied (0: none). */
  version: number;
  pending: Array<{ version: number; name: string }>;
}

/**
 * Reads what a ledger (`appliedVersions`, e.g. buildMigrationStatements(schema).appliedVersions)
 * has applied of `migrations`, changing nothing: a schema or ledger that does not exist yet has
 * applied nothing.
 */
export async function readMigrationStatus(db: Pick<pg.Pool, "query">, appliedVersions: string, migrations: readonly Migration[]): Promise<MigrationStatus> {
  const have = await db.query<{ version: number }>(appliedVersions).then(
    (r) => new Set(r.rows.map((row) => row.version)),
    (error: unknown) => {
      // 42P01 undefined_table, 3F000 invalid_schema_name: never migrated.
      const code = (error as { code?: string }).code;
      if (code === "42P01" || code === "3F000") return new Set<number>();
      throw error;
    },
  );
  return { version: Math.max(0, ...have), pending: pendingOf(migrations, have).map(({ version, name }) => ({ version, name })) };
}

/** The migrations a ledger that has applied `have` still lacks, in version order. */
function pendingOf<M extends Migration>(migrations: readonly M[], have: ReadonlySet<number>): M[] {
  return [...migrations].sort((a, b) => a.version - b.version).filter((m) => !have.has(m.version));
}

/** Where a migration list records what it applied (`buildMigrationStatements` gives a schema's `schema_migrations`). */
export interface MigrationLedger {
  appliedVersions: string;
  /** $1 version, $2 name. */
  recordVersion: string;
}

/**
 * Inside a migrating transaction that holds its lock and has its ledger: applies, in version
 * order, each migration the ledger has not recorded, and records it. `schemaArgument` is what
 * every migration's `sql` is called with.
 */
export async function applyPendingMigrations(
  client: pg.ClientBase,
  ledger: MigrationLedger,
  migrations: readonly Migration[],
  schemaArgument: string,
): Promise<MigrateResult> {
  const done = await client.query<{ version: number }>(ledger.appliedVersions);
  const have = new Set(done.rows.map((r) => r.version));
  const applied: number[] = [];
  for (const migration of pendingOf(migrations, have)) {
    await client.query(migration.sql(schemaArgument));
    await client.query(ledger.recordVersion, [migration.version, migration.name]);
    applied.push(migration.version);
    have.add(migration.version);
  }
  return { applied, version: Math.max(0, ...have) };
}
