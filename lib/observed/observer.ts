import type pg from "pg";
import type { LeaseStore } from "@leasewatch/lease";
import { SQL_IDENTIFIER } from "@leasewatch/lease/internal";

/**
 * History for locks that keep none. The observer samples an observed store every
 * few seconds and records what changed since the last recorded sample — a lock
 * appeared, changed holder, is gone, its waiters changed — as observed events in
 * the console's Postgres.
 *
 * With several replicas, one samples each store at a time: it holds a lease of
 * its own per observed store and writes each sample fenced by that lease's
 * token, in one transaction with the sample it diffed against. A replica that
 * lost its lease (paused, partitioned) is refused by the token, and the one that
 * took over diffs against what was recorded, not against its own memory, so a
 * failover neither doubles nor loses a change. Holds shorter than the interval
 * can still be missed: that is what sampling means, and the console says so.
 */

/** One lock as an observed store shows it, reduced to what changes are recorded for. */
export interface ObservedLock {
  resource: string;
  /** Who holds it, in the store's terms (`pid 4711 · billing-close-job`, a redlock value, ShedLock's locked_by). */
  holder: string;
  /** How many wait for it (0 where the store cannot tell). */
  waiters: number;
  /** Store-specific facts shown with the event (pid, application name, TTL, …). JSON. */
  detail?: Record<string, unknown>;
}

export interface ObservedSource {
  /** The observed store's configured name. */
  readonly name: string;
  readonly kind: "pg-advisory" | "shedlock" | "redis-keys";
  /** One bounded read of every lock it shows now; `complete: false` when the read was cut short. */
  sample(): Promise<{ locks: ObservedLock[]; complete: boolean }>;
}

export type ObservedEventKind = "appeared" | "holder_changed" | "gone" | "waiters_changed";

export interface ObservedEvent {
  id: string;
  store: string;
  resource: string;
  kind: ObservedEventKind;
  holder: string | null;
  previousHolder: string | null;
  waiters: number;
  detail: Record<string, unknown> | null;
  at: Date;
}


/** The history schema as a quoted identifier, or an error that says what a valid one is. */
export function quoteHistorySchema(schema: string): string {
  if (!SQL_IDENTIFIER.test(schema)) throw new Error(`observed history schema "${schema}" must be lowercase letters, digits and _`);
  return `"${schema}"`;
}

/** Creates the observed history's tables (idempotent). */
export async function migrateObservedHistory(db: pg.Pool, schema: string): Promise<void> {
  const s = quoteHistorySchema(schema);
  await db.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
  await db.query(`CREATE TABLE IF NOT EXISTS ${s}.observed_state (
    store text PRIMARY KEY,
    locks jsonb NOT NULL,
    fencing_token numeric NOT NULL,
    sampled_at timestamptz NOT NULL
  )`);
  // False: the last read was cut short by its bound, so the recorded state may lack locks it did not reach.
  await db.query(`ALTER TABLE ${s}.observed_state ADD COLUMN IF NOT EXISTS complete boolean NOT NULL DEFAULT true`);
  await db.query(`CREATE TABLE IF NOT EXISTS ${s}.observed_events (
    id bigserial PRIMARY KEY,
    store text NOT NULL,
    resource text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('appeared', 'holder_changed', 'gone', 'waiters_changed')),
    holder text,
    previous_holder text,
    waiters integer NOT NULL DEFAULT 0,
    detail jsonb,
    at timestamptz NOT NULL
  )`);
  await db.query(`CREATE INDEX IF NOT EXISTS observed_events_store_at ON ${s}.observed_events (store, at)`);
  await db.query(`CREATE INDEX IF NOT EXISTS observed_events_resource_at ON ${s}.observed_events (store, resource, at)`);
  // A full copy of a store's locks now and then: the state at an instant is the copy before it
  // plus the changes since, so reading it never scans the whole history.
  await db.query(`CREATE TABLE IF NOT EXISTS ${s}.observed_checkpoints (
    store text NOT NULL,
    at timestamptz NOT NULL,
    locks jsonb NOT NULL,
    PRIMARY KEY (store, at)
  )`);
  await db.query(`ALTER TABLE ${s}.observed_state ADD COLUMN IF NOT EXISTS checkpointed_at timestamptz`);
}

/** How often recordSample keeps a full copy of a store's locks (observed_checkpoints). */
export const OBSERVED_CHECKPOINT_EVERY_MS = 60 * 60_000;

/** What changed between two samples, one event per changed lock. */
export function diffSamples(before: ObservedLock[], after: ObservedLock[]): Array<Omit<ObservedEvent, "id" | "store" | "at">> {
  const old = new Map(before.map((l) => [l.resource, l]));
  const out: Array<Omit<ObservedEvent, "id" | "store" | "at">> = [];
  for (const lock of after) {
    const prev = old.get(lock.resource);
    old.delete(lock.resource);
    const base = { resource: lock.resource, holder: lock.holder, waiters: lock.waiters, detail: lock.detail ?? null };
    if (!prev) out.push({ ...base, kind: "appeared", previousHolder: null });
    else if (prev.holder !== lock.holder) out.push({ ...base, kind: "holder_changed", previousHolder: prev.holder });
    else if (prev.waiters !== lock.waiters) out.push({ ...base, kind: "waiters_changed", previousHolder: null });
  }
  for (const gone of old.values()) out.push({ resource: gone.resource, kind: "gone", holder: null, previousHolder: gone.holder, waiters: 0, detail: null });
  return out;
}

export interface RecordResult {
  /** False when a newer lease's token had already written: this observer is stale and wrote nothing. */
  accepted: boolean;
  events: number;
}

/**
 * Records one sample, fenced: diffs it against the last recorded sample of the
 * store and writes the events and the new state in one transaction, only if
 * `fencingToken` is not older than the token of the last write.
 */
export async function recordSample(
  db: pg.Pool,
  schema: string,
  input: { store: string; fencingToken: string; locks: ObservedLock[]; complete: boolean; at?: Date; checkpointEveryMs?: number },
): Promise<RecordResult> {
  const s = quoteHistorySchema(schema);
  const client = await db.connect();
  try {
    await client.query("BEGIN");
    // Serialises writers of one store; the first sample of a store creates its row.
    await client.query(`INSERT INTO ${s}.observed_state (store, locks, fencing_token, sampled_at) VALUES ($1, '[]', 0, now()) ON CONFLICT (store) DO NOTHING`, [input.store]);
    const { rows } = await client.query<{ locks: ObservedLock[]; fencing_token: string; checkpointed_at: Date | null }>(
      `SELECT locks, fencing_token::text, checkpointed_at FROM ${s}.observed_state WHERE store = $1 FOR UPDATE`,
      [input.store],
    );
    const state = rows[0]!;
    if (BigInt(state.fencing_token) > BigInt(input.fencingToken)) {
      await client.query("ROLLBACK");
      return { accepted: false, events: 0 };
    }
    let locks = input.locks;
    if (!input.complete) {
      // A cut-short read cannot say a lock is gone: keep what it did not get to.
      const seen = new Set(locks.map((l) => l.resource));
      locks = [...locks, ...state.locks.filter((l) => !seen.has(l.resource))];
    }
    const changes = diffSamples(state.locks, locks);
    const at = input.at ?? new Date();
    if (changes.length > 0) {
      await client.query(
        `INSERT INTO ${s}.observed_events (store, resource, kind, holder, previous_holder, waiters, detail, at)
         SELECT $1, c.resource, c.kind, c.holder, c.previous_holder, c.waiters, c.detail, $3
           FROM jsonb_to_recordset($2::jsonb) AS c(resource text, kind text, holder text, previous_holder text, waiters int, detail jsonb)`,
        [input.store, JSON.stringify(changes.map((c) => ({ ...c, previous_holder: c.previousHolder }))), at],
      );
    }
    await client.query(`UPDATE ${s}.observed_state SET locks = $2::jsonb, fencing_token = $3::numeric, sampled_at = $4, complete = $5 WHERE store = $1`, [
      input.store,
      JSON.stringify(locks),
      input.fencingToken,
      at,
      input.complete,
    ]);
    const checkpointEveryMs = input.checkpointEveryMs ?? OBSERVED_CHECKPOINT_EVERY_MS;
    if (state.checkpointed_at === null || at.getTime() - state.checkpointed_at.getTime() >= checkpointEveryMs) {
      await client.query(`INSERT INTO ${s}.observed_checkpoints (store, at, locks) VALUES ($1, $2, $3::jsonb) ON CONFLICT (store, at) DO UPDATE SET locks = EXCLUDED.locks`, [
        input.store,
        at,
        JSON.stringify(locks),
      ]);
      await client.query(`UPDATE ${s}.observed_state SET checkpointed_at = $2 WHERE store = $1`, [input.store, at]);
    }
    await client.query("COMMIT");
    return { accepted: true, events: changes.length };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/**
 * Drops a store's observed history before `before`, keeping the last checkpoint at or before
 * it (and what follows), so the state at any instant still kept is rebuilt exactly. History
 * older than a store's first checkpoint is kept until a later checkpoint passes `before`.
 */
export async function pruneObservedHistory(db: pg.Pool, schema: string, input: { store: string; before: Date }): Promise<{ events: number; checkpoints: number }> {
  const s = quoteHistorySchema(schema);
  const { rows } = await db.query<{ events: number; checkpoints: number }>(
    `WITH kept AS (SELECT max(at) AS at FROM ${s}.observed_checkpoints WHERE store = $1 AND at <= $2),
          events AS (DELETE FROM ${s}.observed_events WHERE store = $1 AND at <= (SELECT at FROM kept) RETURNING 1),
          checkpoints AS (DELETE FROM ${s}.observed_checkpoints WHERE store = $1 AND at < (SELECT at FROM kept) RETURNING 1)
     SELECT (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM checkpoints)::int AS checkpoints`,
    [input.store, input.before],
  );
  return rows[0]!;
}

/** Observed events of a store in a window, oldest first (bounded). */
export async function readObservedEvents(
  db: pg.Pool,
  schema: string,
  query: { store: string; resource?: string; from?: Date; to?: Date; limit?: number; newestFirst?: boolean },
): Promise<ObservedEvent[]> {
  const s = quoteHistorySchema(schema);
  const { rows } = await db.query<{ id: string; store: string; resource: string; kind: ObservedEventKind; holder: string | null; previous_holder: string | null; waiters: number; detail: Record<string, unknown> | null; at: Date }>(
    `SELECT id::text, store, resource, kind, holder, previous_holder, waiters, detail, at FROM ${s}.observed_events
      WHERE store = $1 AND ($2::text IS NULL OR resource = $2) AND ($3::timestamptz IS NULL OR at >= $3) AND ($4::timestamptz IS NULL OR at <= $4)
      ORDER BY at ${query.newestFirst ? "DESC" : "ASC"}, id ${query.newestFirst ? "DESC" : "ASC"} LIMIT $5`,
    [query.store, query.resource ?? null, query.from ?? null, query.to ?? null, query.limit ?? 1_000],
  );
  return rows.map((r) => ({ id: r.id, store: r.store, resource: r.resource, kind: r.kind, holder: r.holder, previousHolder: r.previous_holder, waiters: r.waiters, detail: r.detail, at: r.at }));
}

/** What the observer recorded of one lock after an instant: its holder at the last sample, and its changes since. */
export interface RecordAfter {
  /** The last sample of the store; null: never sampled. */
  sampledAt: Date | null;
  /** The lock's holder at that sample; null: not held then. */
  holder: string | null;
  /** Its recorded changes from `after` on, oldest first (bounded). */
  changes: ObservedEvent[];
}

/** One lock's record after an instant (the audit resolver asks what happened after a force-release was requested). */
export async function readRecordAfter(db: pg.Pool, schema: string, query: { store: string; resource: string; after: Date }): Promise<RecordAfter> {
  const s = quoteHistorySchema(schema);
  const noHistory = (error: unknown) => {
    // No history tables yet: the observer never ran, so there is no record, not an error.
    if ((error as { code?: string }).code === "42P01") return null;
    throw error;
  };
  const read = await Promise.all([
    db.query<{ sampled_at: Date; holder: string | null }>(
      `SELECT sampled_at, (SELECT l->>'holder' FROM jsonb_array_elements(locks) AS l WHERE l->>'resource' = $2 LIMIT 1) AS holder
         FROM ${s}.observed_state WHERE store = $1`,
      [query.store, query.resource],
    ),
    readObservedEvents(db, schema, { store: query.store, resource: query.resource, from: query.after, limit: 50 }),
  ]).catch(noHistory);
  if (!read) return { sampledAt: null, holder: null, changes: [] };
  const [state, changes] = read;
  const row = state.rows[0];
  return { sampledAt: row?.sampled_at ?? null, holder: row?.holder ?? null, changes };
}

export interface ObserverOptions {
  source: ObservedSource;
  /** The console's Postgres, where observed history is kept. */
  history: pg.Pool;
  schema: string;
  /** The lease store that hands out the observer's own lease (one per observed store). */
  leases: LeaseStore;
  /** Who this replica is, as the lease's owner. */
  owner: string;
  intervalMs?: number;
  /** Observed history older than this many days is dropped (pruneObservedHistory); 0 or unset keeps it all. */
  retentionDays?: number;
  onError?: (error: unknown) => void;
}

export const DEFAULT_OBSERVE_INTERVAL_MS = 5_000;

/**
 * Samples one observed store every interval while it holds the store's observer
 * lease; replicas that do not hold it try again each interval. `stop()` releases
 * the lease so another replica takes over at once.
 */
export class Observer {
  private timer: NodeJS.Timeout | null = null;
  private lease: { leaseId: string; fencingToken: string; resource: string } | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = false;
  readonly intervalMs: number;

  constructor(private readonly options: ObserverOptions) {
    this.intervalMs = options.intervalMs ?? DEFAULT_OBSERVE_INTERVAL_MS;
  }

  get resource(): string {
    return `leasewatch:observer:${this.options.source.name}`;
  }

  /** Whether this replica holds the observer lease now. */
  get isSampling(): boolean {
    return this.lease !== null;
  }

  start(): void {
    if (this.timer) return;
    const tick = () => {
      if (this.stopped) return;
      this.running = this.tick().finally(() => {
        this.running = null;
        if (!this.stopped) this.timer = setTimeout(tick, this.intervalMs);
      });
    };
    tick();
  }

  /** One round: hold (take or renew) the lease, then sample and record. Exposed for tests and `leasewatch observe --once`. */
  async tick(): Promise<RecordResult | null> {
    const { source, leases, owner } = this.options;
    // The lease outlives two missed rounds, so one slow sample does not hand the store to another replica.
    const ttlMs = this.intervalMs * 3;
    try {
      if (this.lease) {
        const renewed = await leases.renew({ resource: this.resource, leaseId: this.lease.leaseId, ttlMs });
        if (!renewed.renewed) this.lease = null;
      }
      if (!this.lease) {
        const got = await leases.acquire({ resource: this.resource, owner, task: `observe ${source.kind} ${source.name}`, ttlMs });
        if (!got.acquired) return null;
        this.lease = { leaseId: got.lease.leaseId, fencingToken: String(got.lease.fencingToken), resource: this.resource };
      }
      const sample = await source.sample();
      const result = await recordSample(this.options.history, this.options.schema, {
        store: source.name,
        fencingToken: this.lease.fencingToken,
        locks: sample.locks,
        complete: sample.complete,
      });
      if (!result.accepted) this.lease = null;
      else await this.pruneNowAndThen();
      return result;
    } catch (error) {
      this.options.onError?.(error);
      return null;
    }
  }

  private prunedAtMs = 0;

  /** Drops history past the retention, at most once per checkpoint interval (new checkpoints are what let it go). */
  private async pruneNowAndThen(): Promise<void> {
    const days = this.options.retentionDays ?? 0;
    if (days <= 0 || Date.now() - this.prunedAtMs < OBSERVED_CHECKPOINT_EVERY_MS) return;
    this.prunedAtMs = Date.now();
    await pruneObservedHistory(this.options.history, this.options.schema, { store: this.options.source.name, before: new Date(Date.now() - days * 86_400_000) });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
    const lease = this.lease;
    this.lease = null;
    if (lease) await this.options.leases.release({ resource: lease.resource, leaseId: lease.leaseId }).catch(() => {});
  }
}
