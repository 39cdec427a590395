import { createHash, randomUUID } from "node:crypto";
import type pg from "pg";
import { z } from "zod";
import { LeaseError } from "../errors";
import { parseAcquireInput, parseReleaseInput, parseRenewInput } from "../input-fast-path";
import type {
  AcquireInput,
  AcquireResult,
  EventQuery,
  EventRetention,
  FencingRejectionInput,
  ForceReleaseInput,
  HeldAtQuery,
  HeldAtResult,
  ForceReleaseResult,
  Lease,
  LeaseEvent,
  LeasePage,
  LeaseStore,
  ListQuery,
  LostInput,
  Page,
  ReleaseInput,
  ReleaseResult,
  RenewInput,
  ReadSignal,
  RenewResult,
  GroupTotals,
  GroupTotalsQuery,
  LifetimeTotals,
  RenewalSlackQuery,
  RenewalSlackRow,
  PrefixStats,
  PrefixStatsQuery,
  StatsBucket,
  StatsQuery,
  StoreHealth,
  TtlAdviceQuery,
  TtlAdviceReport,
  ConnectionUsage,
} from "../types";
import {
  buildTtlAdviceReport,
  emptySlackHistogram,
  isSlackGroupInPrefix,
  mergeSlackRows,
  parseRenewalSlackQuery,
  resolveAdviceWindow,
  slackGroupOf,
  slackHours,
  type EventTally,
} from "../slack";
import { buildAdviceEventsQuery, buildSlackRowsQuery } from "./slack-sql";
import {
  MAX_BIGINT,
  parseOrThrow,
  ZGroupTotalsQuery,
  ZEventQuery,
  ZFencingRejectionInput,
  ZHeldAtQuery,
  ZForceReleaseInput,
  ZListQuery,
  ZLostInput,
  ZResource,
  ZStoreName,
} from "../validation";
import { readHeldAt } from "./held-at";
import { MIGRATIONS, readMigrationStatus, runMigrations, type MigrateResult, type MigrationStatus } from "./migrations";
import { readBounded, DEFAULT_STATEMENT_TIMEOUT_MS } from "./bounded-read";
import { loadPg } from "./driver";
import { maintainPartitions, readDroppedUntil, type PartitionMaintenanceResult } from "./partitions";
import { readGroupTotals, readLifetimeTotals, readPrefixStats, readStats, refreshRollups, type RefreshRollupsResult } from "./rollups";
import {
  decodeEventCursor,
  decodeListCursor,
  encodeEventCursor,
  encodeListCursor,
  hasColumn,
  prefixUpperBound,
  toEvent,
  toGrantedLease,
  toLease,
  toReleasedEvent,
  uuidOrNull,
} from "./rows";
import { buildEventsQuery, buildMigrationStatements, buildLeaseStatements, buildListMatchCountQuery, buildListQuery, DEFAULT_SCHEMA, LIST_GATHER_MAX, SCHEMA_PATTERN, type LeaseStatements } from "./sql";
import { CallBatch } from "./call-batch";

export interface PostgresLeaseStoreOptions {
  /** Store name shown in the console and stamped on every lease and event. */
  name: string;
  /** Exactly one of connectionString or pool. */
  connectionString?: string;
  /** A pool you own: close() leaves it open. */
  pool?: pg.Pool;
  /** Schema holding the tables (default "leasewatch"); lower-case identifier. */
  schema?: string;
  /** Reads (get, list, events, stats, totals, counts) are stopped by Postgres after this long (default 2000). */
  statementTimeoutMs?: number;
  /**
   * Raw events older than this many whole days (UTC) are dropped a day-partition at a time by
   * maintainPartitions(), once the stats rollups hold them. 0 or unset keeps every event.
   */
  eventRetentionDays?: number;
  /**
   * "transaction": the connection string points at a pooler in transaction mode (PgBouncer,
   * RDS Proxy), so consecutive statements may run on different server sessions. The store
   * then sends no named prepared statements (a session would miss them, or already hold
   * them under the same name) and keeps no state in a session beyond one transaction.
   * Default: a direct connection, where the lease statements are prepared once per session.
   */
  pooler?: "transaction";
  /**
   * Default true: the acquires and releases this store is asked for in one event-loop turn
   * go to Postgres as one statement and one commit, each answered as if sent alone, and so do
   * its renews (a statement of their own); while such
   * a statement is out, the calls of the turns after it wait for its answer (5 ms at most) and go
   * together as the next (./call-batch.ts). false: every call is its own statement, so a call
   * that waits for a row lock (the previous holder's release still committing) delays no other
   * call, at the cost of a round trip and a commit per call.
   */
  groupCommit?: boolean;
}

const isPoolLike = (v: unknown): v is pg.Pool =>
  typeof v === "object" && v !== null && ["query", "connect", "on", "end"].every((m) => typeof (v as Record<string, unknown>)[m] === "function");

const ZPostgresLeaseStoreOptions = z
  .strictObject({
    name: ZStoreName,
    connectionString: z.string().min(1, { error: "connectionString must not be empty" }).optional(),
    pool: z.custom<pg.Pool>(isPoolLike, { error: "pool must be a pg.Pool" }).optional(),
    schema: z.string().regex(SCHEMA_PATTERN, { error: "schema must be a lower-case identifier: a-z, 0-9, _ (max 63)" }).optional(),
    statementTimeoutMs: z.number().int().min(1).max(600_000, { error: "statementTimeoutMs must be at most 600000 (10 minutes)" }).optional(),
    eventRetentionDays: z.number().int().min(0, { error: "eventRetentionDays must be 0 (keep everything) or more" }).max(36_500).optional(),
    pooler: z.literal("transaction", { error: 'pooler must be "transaction" (or left out for a direct connection)' }).optional(),
    groupCommit: z.boolean({ error: "groupCommit must be true or false" }).optional(),
  })
  .refine((o) => (o.connectionString === undefined) !== (o.pool === undefined), {
    error: "give exactly one of connectionString or pool",
  });

const DEFAULT_LIST_LIMIT = 100;
const DEFAULT_EVENTS_LIMIT = 100;
const DEFAULT_HELD_AT_LIMIT = 100;
/**
 * acquire re-runs only when its insert met a lapsed row its locking read could not see (a
 * live one is answered as contention in the same call). The acquire function reads after
 * the advisory lock with a fresh snapshot, so this needs a session whose snapshot outlives
 * the statement; the bound keeps such a loop finite.
 */
const MAX_ACQUIRE_ATTEMPTS = 5;
const SWEEP_BATCH = 5_000;
const MAX_SWEEP_BATCHES = 20;
/** sweep() refreshes rollups at most this often per store instance (stats read the raw tail meanwhile). */
const ROLLUP_REFRESH_INTERVAL_MS = 10_000;
const HEALTH_TIMEOUT_MS = 3_000;
/** sweep() runs partition upkeep at most this often per store instance (it is daily work). */
const PARTITION_MAINTENANCE_INTERVAL_MS = 10 * 60_000;

/**
 * Leases in PostgreSQL. Every operation is one statement (see ./sql.ts for the
 * invariants), which acquires or releases made in the same event-loop turn share
 * (./call-batch.ts); expiry is decided on the database clock; fencing tokens come from
 * a sequence. Call migrate() once before use (idempotent, safe to race).
 */
export class PostgresLeaseStore implements LeaseStore {
  readonly name: string;
  readonly kind = "postgres" as const;
  readonly schema: string;
  private readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly sql: LeaseStatements;
  private readonly onPoolError = () => {
    // An idle client lost its connection (server restart, network). The pool drops it
    // and the next query reconnects; without a listener Node would crash on 57P01.
  };
  private lastRollupRefreshAt = Number.NEGATIVE_INFINITY;
  private rollupRefresh: Promise<RefreshRollupsResult> | null = null;
  private lastPartitionMaintenanceAt = Number.NEGATIVE_INFINITY;
  private partitionMaintenance: Promise<PartitionMaintenanceResult> | null = null;
  /** Why the last partition upkeep run by sweep() failed (sweep itself must not fail for it); null when it worked. */
  lastPartitionMaintenanceError: string | null = null;
  readonly eventRetentionDays: number;
  private isClosed = false;
  private readonly statementTimeoutMs: number;
  private readonly statementNames = new Map<keyof LeaseStatements, string>();
  /** Behind a transaction pooler statements go unnamed: parsed on every call, but valid on any server session. */
  private readonly isBehindPooler: boolean;
  /** The server settings acquire relies on were read and hold (see checkServer). */
  private isServerChecked = false;
  private serverCheck: Promise<void> | null = null;
  /**
   * The acquires and releases of one turn as one statement (./call-batch.ts): leaseCallsMany takes
   * every resource's advisory lock, in one global order, before any row lock (migration 20). Each
   * call's values are [resource, call, owner, task, ttlMs, leaseId, afterDeadlineLoss], the
   * columns of leaseCallsMany. With groupCommit false, each call goes alone, as its own statement.
   */
  private readonly leaseCalls: CallBatch<pg.QueryResultRow>;
  /**
   * The renews of one turn as one statement (renewMany): each call's values are [resource,
   * leaseId, ttlMs, slack group]. It answers only the renews that succeed; the batch runs any
   * other again alone (the renew statement), which records its refusal. With groupCommit false, each goes alone.
   */
  private readonly renewCalls: CallBatch<pg.QueryResultRow>;

  /**
   * Runs one of the fixed lease statements as a named prepared statement: each
   * pooled connection parses and plans it once instead of on every call, which is
   * most of the cost of these CTEs. The name hashes the text (it includes the schema).
   */
  private run(statement: keyof LeaseStatements, values: unknown[], db: pg.Pool | pg.PoolClient = this.pool): Promise<pg.QueryResult> {
    const text = this.sql[statement];
    if (this.isBehindPooler) return db.query(text, values);
    let name = this.statementNames.get(statement);
    if (name === undefined) {
      name = `lw_${statement}_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`;
      this.statementNames.set(statement, name);
    }
    return db.query({ name, text, values });
  }

  /** A console read: read-only, bounded by statement_timeout, cancelled on the server when `signal` aborts. */
  private read<T>(what: string, signal: AbortSignal | undefined, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return readBounded(this.pool, { statementTimeoutMs: this.statementTimeoutMs, signal, what: `${this.name} ${what}` }, work);
  }

  constructor(options: PostgresLeaseStoreOptions) {
    const o = parseOrThrow(ZPostgresLeaseStoreOptions, options, "PostgresLeaseStore options");
    this.name = o.name;
    this.schema = o.schema ?? DEFAULT_SCHEMA;
    this.ownsPool = o.pool === undefined;
    this.pool = o.pool ?? new (loadPg().Pool)({ connectionString: o.connectionString, max: 10, connectionTimeoutMillis: 5_000 });
    this.pool.on("error", this.onPoolError);
    this.sql = buildLeaseStatements(this.schema);
    this.statementTimeoutMs = o.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
    this.eventRetentionDays = o.eventRetentionDays ?? 0;
    this.isBehindPooler = o.pooler === "transaction";
    const isGrouping = o.groupCommit ?? true;
    this.leaseCalls = new CallBatch<pg.QueryResultRow>(
      {
        runOne: async ([resource, call, owner, task, ttlMs, leaseId, afterLoss]) => {
          const { rows } =
            call === "release"
              ? await this.run("release", [resource, leaseId, afterLoss])
              : await this.run(call === "acquire" ? "acquire" : "acquireOnce", [resource, owner, task, ttlMs, leaseId]);
          return rows[0];
        },
        runMany: async (columns) => (await this.run("leaseCallsMany", columns)).rows as (pg.QueryResultRow & { n: string })[],
      },
      isGrouping,
    );
    this.renewCalls = new CallBatch<pg.QueryResultRow>(
      {
        // One renew as its own statement: it answers every outcome, and records a refusal's events.
        runOne: async ([resource, leaseId, ttlMs, group]) => (await this.run("renew", [resource, leaseId, ttlMs, uuidOrNull(String(leaseId)), group])).rows[0],
        runMany: async (columns) => (await this.run("renewMany", columns)).rows as (pg.QueryResultRow & { n: string })[],
      },
      isGrouping,
    );
  }

  /** Creates or upgrades the schema, then prepares the event partitions. Returns the versions applied by this call. */
  async migrate(): Promise<MigrateResult> {
    const result = await runMigrations(this.pool, this.schema);
    await this.maintainPartitions();
    // Read here, so the first acquire sends only its own statement; a refusal is the acquire's to throw.
    await this.checkServer().catch(() => undefined);
    return result;
  }

  /** What migrate() would apply, read without changing anything. */
  migrationStatus(): Promise<MigrationStatus> {
    return readMigrationStatus(this.pool, buildMigrationStatements(this.schema).appliedVersions, MIGRATIONS);
  }

  /**
   * Creates the coming days' event partitions, moves rows out of the DEFAULT partition and,
   * with a retention, drops whole days past it once the rollups hold them (./partitions.ts).
   * Concurrent calls share one run.
   */
  maintainPartitions(): Promise<PartitionMaintenanceResult> {
    if (this.partitionMaintenance) return this.partitionMaintenance;
    const running = maintainPartitions(this.pool, this.schema, this.eventRetentionDays).finally(() => {
      this.lastPartitionMaintenanceAt = performance.now();
      if (this.partitionMaintenance === running) this.partitionMaintenance = null;
    });
    this.partitionMaintenance = running;
    return running;
  }

  /** What raw history this store keeps: the configured retention, and where retained events begin. */
  async eventRetention(options: ReadSignal = {}): Promise<EventRetention> {
    const droppedUntil = await this.read("retention", options.signal, (client) => readDroppedUntil(client, this.schema));
    return { retentionDays: this.eventRetentionDays > 0 ? this.eventRetentionDays : null, retainedFrom: droppedUntil };
  }

  async acquire(input: AcquireInput): Promise<AcquireResult> {
    const { resource, owner, task, ttlMs, leaseId: chosen } = parseAcquireInput(input);
    const leaseId = chosen ?? randomUUID();
    if (!this.isServerChecked) await this.checkServer();
    const values = [resource, chosen === undefined ? "acquire" : "acquire_once", owner, task, ttlMs, leaseId, null];
    for (let attempt = 0; attempt < MAX_ACQUIRE_ATTEMPTS; attempt++) {
      const row = await this.leaseCalls.run(values);
      // No row: the insert met a lapsed row our snapshot could not see, and wrote nothing.
      // Re-run: a new snapshot sees the row and takes it over.
      if (!row) continue;
      if (row.outcome === "ended") throw new LeaseError(`acquire of "${resource}" with lease id ${leaseId}: that lease has already ended`, "lease_ended");
      if (row.outcome === "acquired") {
        const lease = toGrantedLease(this.name, resource, ttlMs, row);
        return row.took_over ? { acquired: true, lease, tookOverExpired: true } : { acquired: true, lease };
      }
      return {
        acquired: false,
        holder: {
          owner: String(row.owner),
          task: String(row.task),
          leaseId: String(row.lease_id),
          expiresAt: row.expires_at as Date,
          fencingToken: String(row.fencing_token),
        },
      };
    }
    throw new LeaseError(`acquire of "${resource}" kept meeting lapsed leases it could not see yet; try again`, "contention");
  }

  /**
   * At migrate() or before the first grant, as the Redis store checks its eviction policy: refuses (LeaseError
   * "misconfigured") a session whose `synchronous_commit` is off — a crash may then lose grants
   * already answered and the sequence's advance past their tokens, so a resource could be
   * granted twice and a token issued again — and a token sequence with CACHE > 1, which hands
   * each session a range of its own, so tokens would no longer follow grant order. Read on one
   * pooled session (the setting usually comes from the server, database or role). While refused,
   * every acquire reads them again, so fixing the setting is enough.
   */
  private checkServer(): Promise<void> {
    this.serverCheck ??= this.runServerCheck().finally(() => {
      this.serverCheck = null;
    });
    return this.serverCheck;
  }

  private async runServerCheck(): Promise<void> {
    const { rows } = await this.pool.query<{ synchronous_commit: string; cache_size: string | null }>(
      `SELECT current_setting('synchronous_commit') AS synchronous_commit,
              (SELECT cache_size::text FROM pg_sequences WHERE schemaname = $1 AND sequencename = 'lease_fencing_seq') AS cache_size`,
      [this.schema],
    );
    const settings = rows[0];
    if (settings?.synchronous_commit === "off") {
      throw new LeaseError(
        `postgres store "${this.name}": synchronous_commit is off, so a crash can lose grants already answered and reissue their fencing tokens; ` +
          "set it to on for the store's database or role",
        "misconfigured",
      );
    }
    if (settings?.cache_size && Number(settings.cache_size) > 1) {
      throw new LeaseError(
        `postgres store "${this.name}": sequence ${this.schema}.lease_fencing_seq has CACHE ${settings.cache_size}, so tokens drawn by different sessions ` +
          `are out of grant order; run ALTER SEQUENCE ${this.schema}.lease_fencing_seq CACHE 1`,
        "misconfigured",
      );
    }
    this.isServerChecked = true;
  }

  async renew(input: RenewInput): Promise<RenewResult> {
    const { resource, leaseId, ttlMs } = parseRenewInput(input);
    const group = slackGroupOf(resource);
    const row = (await this.renewCalls.run([resource, leaseId, ttlMs, group]))!;
    if (row.verdict === "ok") return { renewed: true, expiresAt: row.expires_at as Date, renewals: Number(row.renewals) };
    return { renewed: false, reason: row.verdict as "not_owner" | "expired" };
  }

  async release(input: ReleaseInput): Promise<ReleaseResult> {
    const { resource, leaseId, afterDeadlineLoss } = parseReleaseInput(input);
    const row = (await this.leaseCalls.run([resource, "release", null, null, null, leaseId, afterDeadlineLoss === true]))!;
    if (row.verdict === "ok" && hasColumn(row, "id")) {
      const event = toReleasedEvent(this.name, resource, leaseId, row);
      return { released: true, holdMs: event.holdMs ?? 0, event };
    }
    return { released: false, reason: row.verdict === "expired" ? "expired" : "not_owner" };
  }

  async forceRelease(input: ForceReleaseInput): Promise<ForceReleaseResult> {
    const { resource, leaseId, actor, reason } = parseOrThrow(ZForceReleaseInput, input, "forceRelease");
    const { rows } = await this.run("forceRelease", [resource, leaseId, actor, reason]);
    const row = rows[0]!;
    if (row.verdict === "ok" && hasColumn(row, "id", "e_")) {
      const event = toEvent(this.name, row, "e_");
      return { released: true, holdMs: event.holdMs ?? 0, event, lease: toLease(this.name, row, "l_") };
    }
    if (row.verdict === "lease_changed") return { released: false, reason: "lease_changed", current: toLease(this.name, row, "l_") };
    // Absent, or that lease had already lapsed (its expiry is now recorded): nothing holds the resource.
    return { released: false, reason: "not_found", current: null };
  }

  async get(resource: string, options: ReadSignal = {}): Promise<Lease | null> {
    const r = parseOrThrow(ZResource, resource, "get");
    const { rows } = await this.read("get", options.signal, (client) => this.run("get", [r], client));
    return rows[0] ? toLease(this.name, rows[0]) : null;
  }

  async list(query: ListQuery = {}): Promise<LeasePage> {
    const { signal, ...rest } = query;
    const q = parseOrThrow(ZListQuery, rest, "list");
    const sort = q.sort ?? "expires";
    const limit = q.limit ?? DEFAULT_LIST_LIMIT;
    const after = q.cursor !== undefined ? decodeListCursor(q.cursor, sort) : undefined;
    const input = {
      ...(q.prefix !== undefined ? { prefix: { value: q.prefix, upper: prefixUpperBound(q.prefix) } } : {}),
      ...(q.owner !== undefined ? { owner: q.owner } : {}),
      ...(q.task !== undefined ? { task: q.task } : {}),
      ...(q.state !== undefined ? { state: q.state } : {}),
      ...(after ? { after } : {}),
      sort,
      limit: limit + 1,
    };
    const { rows } = await this.read("list", signal, async (client) => {
      // Owner and task indexes are in acquire order; sorted by expiry, a filter's leases are either
      // gathered and sorted (few: counted along the index first) or met walking the expiry order
      // (many). Left to the planner, an owner absent from its statistics walked all of it.
      let isGathered = false;
      if (sort === "expires" && (q.owner !== undefined || q.task !== undefined)) {
        const count = buildListMatchCountQuery(this.schema, input);
        isGathered = Number((await client.query<{ n: number }>(count.text, count.values)).rows[0]!.n) <= LIST_GATHER_MAX;
      }
      const { text, values } = buildListQuery(this.schema, { ...input, isGathered });
      return client.query(text, values);
    });
    const now = rows[0]!.db_now as Date;
    const found = rows.filter((r) => r.resource !== null);
    const page = found.slice(0, limit);
    const last = page[page.length - 1];
    const nextCursor = found.length > limit && last ? encodeListCursor(sort, String(last.sort_micros), String(last.resource)) : undefined;
    return { items: page.map((r) => toLease(this.name, r)), now, ...(nextCursor ? { nextCursor } : {}) };
  }

  async events(query: EventQuery = {}): Promise<Page<LeaseEvent>> {
    const { signal, ...rest } = query;
    const q = parseOrThrow(ZEventQuery, rest, "events");
    const order = q.order ?? "desc";
    const limit = q.limit ?? DEFAULT_EVENTS_LIMIT;
    const afterId = q.cursor !== undefined ? decodeEventCursor(q.cursor, order) : undefined;
    // lease_id is a uuid column and tokens are bigints: a value of another shape matches no event.
    const leaseUuid = q.leaseId !== undefined ? uuidOrNull(q.leaseId) : undefined;
    if (leaseUuid === null || (q.fencingToken !== undefined && BigInt(q.fencingToken) > MAX_BIGINT)) return { items: [] };
    const { text, values } = buildEventsQuery(this.schema, {
      ...(q.resource !== undefined ? { resource: q.resource } : {}),
      ...(q.prefix !== undefined ? { prefix: { value: q.prefix, upper: prefixUpperBound(q.prefix) } } : {}),
      ...(q.owner !== undefined ? { owner: q.owner } : {}),
      ...(q.task !== undefined ? { task: q.task } : {}),
      ...(leaseUuid !== undefined ? { leaseId: leaseUuid } : {}),
      ...(q.fencingToken !== undefined ? { fencingToken: q.fencingToken } : {}),
      ...(q.kinds !== undefined ? { kinds: q.kinds } : {}),
      ...(q.from !== undefined ? { from: q.from } : {}),
      ...(q.to !== undefined ? { to: q.to } : {}),
      ...(afterId !== undefined ? { afterId } : {}),
      order,
      limit: limit + 1,
    });
    const { rows } = await this.read("events", signal, (client) => client.query(text, values));
    const items = rows.slice(0, limit).map((r) => toEvent(this.name, r));
    const last = items[items.length - 1];
    return rows.length > limit && last ? { items, nextCursor: encodeEventCursor(order, last.id) } : { items };
  }

  /** What was held at a past instant: one indexed statement, see ./held-at.ts. */
  async heldAt(query: HeldAtQuery): Promise<HeldAtResult> {
    const q = parseOrThrow(ZHeldAtQuery, query, "heldAt");
    return this.read("heldAt", q.signal, (client) => readHeldAt(client, this.schema, this.name, q, q.limit ?? DEFAULT_HELD_AT_LIMIT));
  }

  /**
   * Records `expired` for every lease whose TTL has run out (in batches), then
   * refreshes the stats rollups if the last refresh from this instance is older
   * than ROLLUP_REFRESH_INTERVAL_MS, and keeps the event partitions (and retention)
   * up to date every PARTITION_MAINTENANCE_INTERVAL_MS.
   */
  async sweep(): Promise<{ expired: number }> {
    let expired = 0;
    for (let batch = 0; batch < MAX_SWEEP_BATCHES; batch++) {
      const { rows } = await this.run("sweep", [SWEEP_BATCH]);
      const n = Number(rows[0]?.expired ?? 0);
      expired += n;
      if (n < SWEEP_BATCH) break;
    }
    if (performance.now() - this.lastRollupRefreshAt >= ROLLUP_REFRESH_INTERVAL_MS) await this.refreshRollups();
    if (performance.now() - this.lastPartitionMaintenanceAt >= PARTITION_MAINTENANCE_INTERVAL_MS) {
      // After the refresh, so a day that just became final can go in this same run. A failure
      // (a lock not granted in time, a role without DDL rights) is kept for health and retried
      // next interval: expiries were recorded, and the partitions ahead cover days to come.
      try {
        await this.maintainPartitions();
        this.lastPartitionMaintenanceError = null;
      } catch (error) {
        this.lastPartitionMaintenanceError = describeError(error);
      }
    }
    return { expired };
  }

  /**
   * Rebuilds the stats rollups from lease_events: from the last refresh (minus a
   * safety margin), or from `since` when given (e.g. after bulk-loading old events).
   * Concurrent refreshes of one schema don't queue: the others return refreshed:false.
   */
  async refreshRollups(options: { since?: Date } = {}): Promise<RefreshRollupsResult> {
    const { since } = parseOrThrow(z.strictObject({ since: z.date().optional() }), options, "refreshRollups");
    if (this.rollupRefresh && since === undefined) return this.rollupRefresh;
    const running = refreshRollups(this.pool, this.schema, since).finally(() => {
      this.lastRollupRefreshAt = performance.now();
      if (this.rollupRefresh === running) this.rollupRefresh = null;
    });
    this.rollupRefresh = running;
    return running;
  }

  async reportFencingRejection(input: FencingRejectionInput): Promise<LeaseEvent> {
    const q = parseOrThrow(ZFencingRejectionInput, input, "reportFencingRejection");
    if (BigInt(q.fencingToken) > MAX_BIGINT) throw new LeaseError("reportFencingRejection: fencingToken is larger than any token this store issues");
    const leaseUuid = uuidOrNull(q.leaseId);
    const { rows } = await this.pool.query(this.sql.reportFencingRejection, [
      q.resource,
      q.fencingToken,
      q.seenToken,
      q.by,
      q.owner ?? null,
      q.task ?? null,
      leaseUuid,
      leaseUuid === null ? (q.leaseId ?? null) : null,
    ]);
    return toEvent(this.name, rows[0]!);
  }

  async reportLost(input: LostInput): Promise<LeaseEvent> {
    const q = parseOrThrow(ZLostInput, input, "reportLost");
    if (BigInt(q.fencingToken) > MAX_BIGINT) throw new LeaseError("reportLost: fencingToken is larger than any token this store issues");
    const leaseUuid = uuidOrNull(q.leaseId);
    const { rows } = await this.pool.query(this.sql.reportLost, [
      q.resource,
      leaseUuid,
      q.owner,
      q.task,
      q.fencingToken,
      q.reason,
      leaseUuid === null ? q.leaseId : null,
    ]);
    return toEvent(this.name, rows[0]!);
  }

  stats(query: StatsQuery): Promise<StatsBucket[]> {
    const { signal, ...rest } = query;
    return this.read("stats", signal, (client) => readStats(client, this.schema, rest));
  }

  /** Events under a prefix per hour or day, from the per-group hour rollups (rollups.ts). */
  prefixStats(query: PrefixStatsQuery): Promise<PrefixStats> {
    const { signal, ...rest } = query;
    return this.read("stats", signal, (client) => readPrefixStats(client, this.schema, rest));
  }

  lifetimeTotals(options: ReadSignal = {}): Promise<LifetimeTotals> {
    return this.read("totals", options.signal, (client) => readLifetimeTotals(client, this.schema));
  }

  /** Lifetime hold and slack histograms per prefix group: folded by the rollup refresh, see ./group-sql.ts. */
  async groupTotals(query: GroupTotalsQuery): Promise<GroupTotals> {
    const { signal, ...q } = parseOrThrow(ZGroupTotalsQuery, query, "groupTotals");
    return this.read("group totals", signal, (client) => readGroupTotals(client, this.schema, q));
  }

  async renewalSlack(query: RenewalSlackQuery): Promise<RenewalSlackRow[]> {
    const q = parseRenewalSlackQuery(query);
    return this.read("renewal slack", query.signal, (client) => this.readSlackRows(client, q.from, q.to, q.prefix));
  }

  /**
   * TTL advice for everything under `prefix` over the window (default: the last hour on the
   * database clock): slack from the renew rollup, the rest from one aggregate over the events.
   */
  async ttlAdvice(query?: TtlAdviceQuery): Promise<TtlAdviceReport> {
    const needsNow = query?.to === undefined;
    const now = needsNow ? ((await this.pool.query<{ now: Date }>("SELECT clock_timestamp() AS now")).rows[0]!.now) : new Date(0);
    const window = resolveAdviceWindow(query, now);
    const upper = window.prefix ? prefixUpperBound(window.prefix) : null;
    // Both statements share one bounded read-only transaction, one after the other on its connection.
    const [slackRows, events] = await this.read("ttl advice", query?.signal, async (client) => {
      const slack = await this.readSlackRows(client, window.from, window.to, window.prefix);
      const tally = await client.query<{ grp: string; released: string; expired: string; force_released: string; renew_failed: string; hold_histogram: string[] }>(
        buildAdviceEventsQuery(this.schema),
        [window.from, window.to, window.prefix || null, upper],
      );
      return [slack, tally] as const;
    });
    const tallies = new Map<string, EventTally>();
    for (const row of events.rows) {
      tallies.set(row.grp, {
        released: Number(row.released),
        expired: Number(row.expired),
        forceReleased: Number(row.force_released),
        renewFailed: Number(row.renew_failed),
        holdHistogram: row.hold_histogram.map(Number),
      });
    }
    return buildTtlAdviceReport(this.name, window, slackRows, tallies, false);
  }

  private async readSlackRows(client: pg.PoolClient, from: Date, to: Date, prefix: string | undefined): Promise<RenewalSlackRow[]> {
    const hours = slackHours(from, to);
    if (hours.length === 0) return [];
    const { rows } = await client.query<{ prefix: string; ttl_ms: number; slack_bucket: number; renewals: string }>(buildSlackRowsQuery(this.schema), [
      new Date(hours[0]!),
      to,
    ]);
    const out: RenewalSlackRow[] = [];
    for (const row of rows) {
      if (!isSlackGroupInPrefix(row.prefix, prefix)) continue;
      const histogram = emptySlackHistogram();
      histogram[row.slack_bucket] = Number(row.renewals);
      out.push({ group: row.prefix, ttlMs: row.ttl_ms, histogram });
    }
    return mergeSlackRows(out);
  }

  async countActive(options: ReadSignal = {}): Promise<number> {
    // Two statements in one round trip (the setting, then the count): the count's result is the last.
    const results = (await this.read("count", options.signal, (client) => client.query(this.sql.countActive))) as unknown as pg.QueryResult[];
    return Number(results[results.length - 1]!.rows[0]!.n);
  }

  /** Never throws: a store that is down reports ok:false with the reason. */
  async health(): Promise<StoreHealth> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${HEALTH_TIMEOUT_MS} ms`)), HEALTH_TIMEOUT_MS);
      });
      await Promise.race([this.pool.query(this.sql.health), timeout]);
      return { store: this.name, kind: this.kind, ok: true, latencyMs: Math.round((performance.now() - started) * 100) / 100 };
    } catch (error) {
      return {
        store: this.name,
        kind: this.kind,
        ok: false,
        latencyMs: Math.round(performance.now() - started),
        error: describeError(error),
      };
    } finally {
      clearTimeout(timer);
    }
  }

  /** The pool's connections: pg's own counts, read on demand (pool gauges). */
  connectionUsage(): ConnectionUsage | null {
    if (this.isClosed) return null;
    const { totalCount, idleCount, waitingCount } = this.pool;
    return { used: totalCount - idleCount, idle: idleCount, max: this.pool.options.max ?? 10, pending: waitingCount };
  }

  /** Ends the pool if this store created it; a pool passed in stays open for its owner. */
  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    await this.rollupRefresh?.catch(() => {});
    await this.partitionMaintenance?.catch(() => {});
    if (this.ownsPool) await this.pool.end();
    else this.pool.off("error", this.onPoolError);
  }
}

/** A readable reason for health(): pg connection failures are often AggregateErrors with an empty message. */
function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describeError(error.errors[0]);
  if (error instanceof Error) {
    const code = (error as Error & { code?: unknown }).code;
    return error.message || (typeof code === "string" ? code : error.name);
  }
  return String(error);
}
