import pg from "pg";
import { createConsolePool } from "@/lib/server/console-db-pool";
import { inTransaction, quoteSchema } from "@leasewatch/lease/internal";
import { GENESIS_HASH, hashEntry, type AuditOutcome } from "./chain";
import { hashedFields, toAuditEntry, type AuditDraft, type AuditEntry } from "./entry";
import { runAuditMigrations, type AuditMigrateResult } from "./migrations";
import { buildAuditStatements, chainLockKey, type AuditStatements } from "./sql";
import { normaliseDraft } from "./text";
import { verifyAuditChain, type ChainPosition, type VerifyResult } from "./verify";

export interface AuditLogOptions {
  /** Exactly one of connectionString or pool. */
  connectionString?: string;
  /** A pool you own: close() leaves it open. */
  pool?: pg.Pool;
  schema: string;
  /** HMAC key of the chain (≥ 32 characters; see config.ts). */
  key: string;
  /** "transaction": connectionString is a pooler in transaction mode (see lib/server/console-db-pool.ts). */
  pooler?: "transaction";
}

/** Each statement gets this long; an audit database that hangs fails the write (and so the release). */
const STATEMENT_TIMEOUT_MS = 10_000;

/** The lease-state columns the force_release() function returns. */
export interface ForceReleaseRow {
  verdict: "ok" | "lease_changed" | "expired" | "not_found";
  leaseId: string | null;
  owner: string | null;
  task: string | null;
  fencingToken: string | null;
  expiresAt: Date | null;
  eventId: string | null;
}

/** Appends inside one transaction that holds the chain lock (see AuditLog.inChain). */
export class AuditTransaction {
  constructor(
    private readonly client: pg.PoolClient,
    private readonly sql: AuditStatements,
    private readonly key: string,
  ) {}

  /** This transaction's connection, for a change that must commit or roll back with its entry (API token create and revoke). */
  get db(): pg.PoolClient {
    return this.client;
  }

  /**
   * Appends one entry after the current head, its text normalised first (see
   * ./text.ts) so the hash covers exactly what is stored. Returns null when the
   * entry gives the outcome of a `requested` entry that already has one (recorded elsewhere).
   */
  async append(draft: AuditDraft): Promise<AuditEntry | null> {
    const { rows } = await this.client.query<{ now: Date; prev_hash: string | null }>(this.sql.head);
    const head = rows[0]!;
    const prevHash = head.prev_hash ?? GENESIS_HASH;
    const fields = hashedFields({ ...normaliseDraft(draft), at: head.now });
    const hash = hashEntry(this.key, prevHash, fields);
    const inserted = await this.client.query<{ id: string }>(this.sql.insert, [
      fields.at,
      fields.requestId,
      fields.actorSub,
      fields.actorEmail,
      fields.actorRoles,
      fields.action,
      fields.store,
      fields.resource,
      fields.leaseId,
      fields.owner,
      fields.task,
      fields.fencingToken,
      fields.reason,
      fields.outcome,
      fields.newHolder === null ? null : JSON.stringify(fields.newHolder),
      fields.ip,
      fields.userAgent,
      fields.resolvesId,
      fields.detail,
      prevHash,
      hash,
    ]);
    const id = inserted.rows[0]?.id;
    return id === undefined ? null : { ...fields, id, prevHash, hash };
  }

  /** Runs the database's force_release() for a `requested` entry of this transaction. */
  async forceRelease(input: { requestId: string; leaseSchema: string; resource: string; leaseId: string; actor: string; reason: string }): Promise<ForceReleaseRow> {
    const { rows } = await this.client.query(this.sql.forceRelease, [
      input.requestId,
      input.leaseSchema,
      input.resource,
      input.leaseId,
      input.actor,
      input.reason,
    ]);
    const row = rows[0]!;
    return {
      verdict: row.verdict,
      leaseId: row.l_lease_id,
      owner: row.l_owner,
      task: row.l_task,
      fencingToken: row.l_fencing_token,
      expiresAt: row.l_expires_at,
      eventId: row.e_id,
    };
  }
}

/**
 * The audit log in Postgres: append-only (a trigger refuses UPDATE, DELETE and
 * TRUNCATE) and HMAC-chained. Appends take a transaction-scoped advisory lock,
 * so writers in any number of processes extend one chain, never fork it.
 */
export class AuditLog {
  readonly schema: string;
  readonly connectionString: string | undefined;
  readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly key: string;
  private readonly sql: AuditStatements;
  private readonly onPoolError = () => {
    // An idle connection dropped (server restart); the next query reconnects or fails closed.
  };

  constructor(options: AuditLogOptions) {
    if ((options.connectionString === undefined) === (options.pool === undefined)) throw new Error("AuditLog: give exactly one of connectionString or pool");
    quoteSchema(options.schema);
    this.schema = options.schema;
    this.key = options.key;
    this.connectionString = options.connectionString;
    this.ownsPool = options.pool === undefined;
    this.pool =
      options.pool ??
      createConsolePool({ url: options.connectionString, max: 5, statementTimeoutMs: STATEMENT_TIMEOUT_MS, ...(options.pooler ? { pooler: options.pooler } : {}) });
    this.pool.on("error", this.onPoolError);
    this.sql = buildAuditStatements(this.schema);
  }

  migrate(leaseSchemas: readonly string[] = []): Promise<AuditMigrateResult> {
    return runAuditMigrations(this.pool, this.schema, leaseSchemas);
  }

  /** Runs `work` in one transaction holding the chain lock; COMMIT when it returns, ROLLBACK when it throws. */
  inChain<T>(work: (tx: AuditTransaction) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, async (client) => {
      await client.query(this.sql.lockChain, [chainLockKey(this.schema)]);
      return work(new AuditTransaction(client, this.sql, this.key));
    });
  }

  /** Appends one entry in its own transaction. */
  append(draft: AuditDraft): Promise<AuditEntry | null> {
    return this.inChain((tx) => tx.append(draft));
  }

  /** `requested` entries older than `graceMs` that have no outcome yet, oldest first. */
  async pendingRequests(graceMs: number, limit = 100): Promise<AuditEntry[]> {
    const { rows } = await this.pool.query(this.sql.pending, [Math.max(0, Math.round(graceMs)), limit]);
    return rows.map(toAuditEntry);
  }

  /** Force-release entries by outcome over the whole log (`requested` left out: each has, or will get, an outcome). */
  async countForceReleasesByOutcome(): Promise<Map<AuditOutcome, number>> {
    const { rows } = await this.pool.query<{ outcome: AuditOutcome; n: string }>(this.sql.countByOutcome);
    return new Map(rows.map((r) => [r.outcome, Number(r.n)]));
  }

  /** Walks the chain (all of it, or after an entry already walked) under this log's key; see ./verify.ts. */
  verifyChain(options: { after?: ChainPosition | null; maxEntries?: number } = {}): Promise<VerifyResult> {
    return verifyAuditChain({ pool: this.pool, schema: this.schema, key: this.key, ...options });
  }

  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
    else this.pool.off("error", this.onPoolError);
  }
}
