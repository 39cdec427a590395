/**
 * Every SQL statement of the audit log, as pure functions of a validated schema
 * name. Values are always bind parameters; only the schema identifier (checked
 * and quoted by quoteSchema) and constants from this module are spliced in.
 */
import { internalLockKey, quoteSchema } from "@leasewatch/lease/internal";
import { AUDIT_ACTIONS, AUDIT_OUTCOMES } from "./chain";

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(", ");

/** Columns in hashing order; `id`, `prev_hash` and `hash` are the chain's own. */
export const AUDIT_COLUMNS = [
  "id",
  "at",
  "request_id",
  "actor_sub",
  "actor_email",
  "actor_roles",
  "action",
  "store",
  "resource",
  "lease_id",
  "owner",
  "task",
  "fencing_token",
  "reason",
  "outcome",
  "new_holder",
  "ip",
  "user_agent",
  "resolves_id",
  "detail",
  "prev_hash",
  "hash",
] as const;
const INSERT_COLUMNS = AUDIT_COLUMNS.filter((c) => c !== "id");
/** `resolves_id` and `id` come back as text: bigint does not fit a JS number. */
export const SELECT_COLUMNS = AUDIT_COLUMNS.map((c) => (c === "id" || c === "resolves_id" ? `a.${c}::text AS ${c}` : `a.${c}`)).join(", ");

/** The advisory lock that serialises appends, so concurrent writers never fork the chain. */
export function chainLockKey(schema: string): string {
  return internalLockKey("audit.chain", schema);
}
export function migrateLockKey(schema: string): string {
  return internalLockKey("audit.migrate", schema);
}

export interface AuditStatements {
  /** $1 lock key. Held until the transaction ends. */
  lockChain: string;
  /** Under the chain lock: the head's hash and the database clock (to the millisecond, so a JS Date holds it exactly). */
  head: string;
  /** $1..$21 in INSERT_COLUMNS order. ON CONFLICT: an outcome for an entry that already has one is dropped, not doubled. */
  insert: string;
  /** $1 grace interval in ms, $2 limit: `requested` entries without an outcome, oldest first. */
  pending: string;
  /** $1 request id (bigint text), $2 lease schema, $3 resource, $4 lease id, $5 actor, $6 reason. */
  forceRelease: string;
  /** Force-release outcomes counted over the whole log. */
  countByOutcome: string;
}

export function buildAuditStatements(schema: string): AuditStatements {
  const a = quoteSchema(schema);
  return {
    lockChain: "SELECT pg_advisory_xact_lock(hashtext($1::text))",
    head: `
      SELECT date_trunc('milliseconds', clock_timestamp()) AS now,
             (SELECT h.hash FROM ${a}.audit_log h ORDER BY h.id DESC LIMIT 1) AS prev_hash`,
    insert: `
      INSERT INTO ${a}.audit_log (${INSERT_COLUMNS.join(", ")})
      VALUES ($1::timestamptz, $2::text, $3::text, $4::text, $5::text[], $6::text, $7::text, $8::text, $9::text, $10::text,
              $11::text, $12::text, $13::text, $14::text, $15::jsonb, $16::text, $17::text, $18::bigint, $19::text, $20::text, $21::text)
      ON CONFLICT (resolves_id) WHERE resolves_id IS NOT NULL DO NOTHING
      RETURNING id::text AS id`,
    pending: `
      SELECT ${SELECT_COLUMNS} FROM ${a}.audit_log a
      WHERE a.outcome = 'requested'
        AND a.at < clock_timestamp() - $1::int * interval '1 millisecond'
        AND NOT EXISTS (SELECT 1 FROM ${a}.audit_log o WHERE o.resolves_id = a.id)
      ORDER BY a.id
      LIMIT $2::int`,
    forceRelease: `SELECT * FROM ${a}.force_release($1::bigint, $2::text, $3::text, $4::text, $5::text, $6::text)`,
    countByOutcome: `SELECT a.outcome, count(*)::bigint AS n FROM ${a}.audit_log a WHERE a.action = 'force_release' AND a.outcome <> 'requested' GROUP BY a.outcome`,
  };
}

/** Migration 1's lists, frozen: a released migration never changes; later lists come in by migration 3. */
const V1_ACTIONS = ["force_release"] as const;
const V1_OUTCOMES = ["requested", "released", "lease_changed", "denied_role", "reauth_required", "rate_limited", "invalid_input", "failed"] as const;

/** Versioned schema of the audit log (see migrations.ts). */
export function auditLogTableSql(schema: string): string {
  const a = quoteSchema(schema);
  return `
    CREATE TABLE ${a}.audit_log (
      id            bigserial PRIMARY KEY,
      at            timestamptz NOT NULL,
      request_id    text,
      actor_sub     text        NOT NULL,
      actor_email   text,
      actor_roles   text[]      NOT NULL,
      action        text        NOT NULL CHECK (action IN (${list(V1_ACTIONS)})),
      store         text        NOT NULL,
      -- COLLATE "C" plus text_pattern_ops: prefix filters are index range scans.
      resource      text COLLATE "C" NOT NULL,
      lease_id      text,
      owner         text,
      task          text,
      fencing_token text,
      reason        text,
      outcome       text        NOT NULL CHECK (outcome IN (${list(V1_OUTCOMES)})),
      new_holder    jsonb,
      ip            text,
      user_agent    text,
      resolves_id   bigint REFERENCES ${a}.audit_log (id),
      detail        text,
      prev_hash     text        NOT NULL,
      hash          text        NOT NULL
    );
    CREATE UNIQUE INDEX audit_log_hash_idx ON ${a}.audit_log (hash);
    -- At most one outcome per requested entry, whoever records it.
    CREATE UNIQUE INDEX audit_log_resolves_idx ON ${a}.audit_log (resolves_id) WHERE resolves_id IS NOT NULL;
    CREATE INDEX audit_log_pending_idx ON ${a}.audit_log (id) WHERE outcome = 'requested';
    CREATE INDEX audit_log_actor_sub_idx ON ${a}.audit_log (actor_sub, id);
    CREATE INDEX audit_log_actor_email_idx ON ${a}.audit_log (actor_email, id);
    CREATE INDEX audit_log_resource_idx ON ${a}.audit_log (resource text_pattern_ops, id);
    CREATE INDEX audit_log_store_resource_idx ON ${a}.audit_log (store, resource, id);
    CREATE INDEX audit_log_outcome_idx ON ${a}.audit_log (outcome, id);
    CREATE INDEX audit_log_at_idx ON ${a}.audit_log (at, id);

    -- Append-only in the database itself, whoever connects: rows are never changed or removed.
    CREATE FUNCTION ${a}.audit_log_refuse_change() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
    BEGIN
      RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
    END
    $fn$;
    CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON ${a}.audit_log
      FOR EACH ROW EXECUTE FUNCTION ${a}.audit_log_refuse_change();
    CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON ${a}.audit_log
      FOR EACH STATEMENT EXECUTE FUNCTION ${a}.audit_log_refuse_change();
  `;
}

/**
 * The one way a least-privilege console changes lease state: a SECURITY DEFINER
 * function that runs the lease library's own force-release statement (registered
 * per lease schema in force_release_statements by the migration, from
 * lib/lease/postgres/sql.ts, so the SQL is not restated here) — and only when a
 * matching `requested` audit entry was written in the same transaction. The
 * caller then appends the outcome in that transaction: both rows and the release
 * commit together or not at all.
 */
export function forceReleaseFunctionSql(schema: string): string {
  const a = quoteSchema(schema);
  return `
    CREATE TABLE ${a}.force_release_statements (
      lease_schema text PRIMARY KEY,
      statement    text NOT NULL,
      updated_at   timestamptz NOT NULL DEFAULT clock_timestamp()
    );
${forceReleaseFunction(a, "CREATE", "coalesce(req.actor_email, req.actor_sub)")}`;
}

/**
 * Migration 4: force_release() takes the actor the store records as the requested
 * entry's stable id (actor_sub: the IdP's subject with its issuer), never its email.
 */
export function forceReleaseActorIsSubjectSql(schema: string): string {
  return forceReleaseFunction(quoteSchema(schema), "CREATE OR REPLACE", "req.actor_sub");
}

/** force_release() itself; `expectedActor` is the SQL expression p_actor must equal. */
function forceReleaseFunction(a: string, create: "CREATE" | "CREATE OR REPLACE", expectedActor: string): string {
  return `
    ${create} FUNCTION ${a}.force_release(p_request_id bigint, p_lease_schema text, p_resource text, p_lease_id text, p_actor text, p_reason text)
    RETURNS TABLE (verdict text, l_lease_id text, l_owner text, l_task text, l_fencing_token text,
                   l_acquired_at timestamptz, l_expires_at timestamptz, e_id text, e_at timestamptz, e_hold_ms bigint)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
    #variable_conflict use_column
    DECLARE
      req ${a}.audit_log%ROWTYPE;
      stmt text;
      r record;
    BEGIN
      -- xmin is the 32-bit id of the transaction that wrote the row: only an entry from this transaction counts.
      SELECT * INTO req FROM ${a}.audit_log a
      WHERE a.id = p_request_id AND a.xmin::text = (txid_current() % 4294967296)::text;
      IF NOT FOUND OR req.action <> 'force_release' OR req.outcome <> 'requested'
         OR req.resource <> p_resource OR req.lease_id IS DISTINCT FROM p_lease_id
         OR req.reason IS DISTINCT FROM p_reason
         OR p_actor IS DISTINCT FROM ${expectedActor} THEN
        RAISE EXCEPTION 'force_release needs a matching requested audit entry written in this transaction'
          USING ERRCODE = 'insufficient_privilege';
      END IF;
      IF EXISTS (SELECT 1 FROM ${a}.audit_log o WHERE o.resolves_id = p_request_id) THEN
        RAISE EXCEPTION 'audit entry % already has an outcome', p_request_id USING ERRCODE = 'insufficient_privilege';
      END IF;
      SELECT s.statement INTO stmt FROM ${a}.force_release_statements s WHERE s.lease_schema = p_lease_schema;
      IF stmt IS NULL THEN
        RAISE EXCEPTION 'no force-release is registered for lease schema %', p_lease_schema;
      END IF;
      EXECUTE stmt INTO r USING p_resource, p_lease_id, p_actor, p_reason;
      verdict := r.verdict;
      l_lease_id := r.l_lease_id::text;
      l_owner := r.l_owner;
      l_task := r.l_task;
      l_fencing_token := r.l_fencing_token::text;
      l_acquired_at := r.l_acquired_at;
      l_expires_at := r.l_expires_at;
      e_id := r.e_id::text;
      e_at := r.e_at;
      e_hold_ms := r.e_hold_ms;
      RETURN NEXT;
    END
    $fn$;
    -- Functions are executable by PUBLIC by default; only roles granted EXECUTE may call this one.
    REVOKE ALL ON FUNCTION ${a}.force_release(bigint, text, text, text, text, text) FROM PUBLIC;
  `;
}

/** $1 lease schema, $2 the library's force-release statement for it. */
export function registerForceReleaseSql(schema: string): string {
  const a = quoteSchema(schema);
  return `
    INSERT INTO ${a}.force_release_statements (lease_schema, statement) VALUES ($1::text, $2::text)
    ON CONFLICT (lease_schema) DO UPDATE SET statement = EXCLUDED.statement, updated_at = clock_timestamp()
    WHERE ${a}.force_release_statements.statement IS DISTINCT FROM EXCLUDED.statement`;
}

/**
 * Migration 3: token changes (create, revoke) share the force-release log and its chain.
 * Widens the action and outcome checks to today's lists and indexes the action filter of /audit.
 */
export function auditTokenActionsSql(schema: string): string {
  const a = quoteSchema(schema);
  return `
    ALTER TABLE ${a}.audit_log DROP CONSTRAINT audit_log_action_check;
    ALTER TABLE ${a}.audit_log ADD CONSTRAINT audit_log_action_check CHECK (action IN (${list(AUDIT_ACTIONS)}));
    ALTER TABLE ${a}.audit_log DROP CONSTRAINT audit_log_outcome_check;
    ALTER TABLE ${a}.audit_log ADD CONSTRAINT audit_log_outcome_check CHECK (outcome IN (${list(AUDIT_OUTCOMES)}));
    CREATE INDEX audit_log_action_idx ON ${a}.audit_log (action, id);
  `;
}
