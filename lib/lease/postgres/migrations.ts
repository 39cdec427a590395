import type pg from "pg";
import { HOLD_HISTOGRAM_BOUNDS_MS, SLACK_BUCKET_COUNT } from "../types";
import { TOP_PREFIXES_PER_BUCKET } from "./rollups";
import { KIND_CHECK, COUNTER_COLUMNS, PARTITION_DAYS_AHEAD, SLACK_SHARDS, buildDayRollupStatements, buildHoldSpansInsert, buildMigrationStatements, quoteSchema } from "./sql";
import { inTransaction } from "./transaction";

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
    version: 12,
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
    await client.query(sql.lock, [`leasewatch.migrate:${schema}`]);
    await client.query(sql.createSchema);
    await client.query(sql.createLedger);
    const done = await client.query<{ version: number }>(sql.appliedVersions);
    const have = new Set(done.rows.map((r) => r.version));
    const applied: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (have.has(migration.version)) continue;
      await client.query(migration.sql(schema));
      await client.query(sql.recordVersion, [migration.version, migration.name]);
      applied.push(migration.version);
      have.add(migration.version);
    }
    return { applied, version: Math.max(0, ...have) };
  });
}
