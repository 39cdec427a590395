import pg from "pg";
import type { ViewerScope } from "@/lib/auth/scope";
import { isResourceInScope } from "@/lib/auth/scope";
import { parseAuditLocation } from "@/lib/audit/config";
import { observeIntervalMs, parseObservedConfig, type TObservedConfig } from "@/lib/observed/config";
import { quoteHistorySchema, readObservedEvents, type ObservedEventKind, type ObservedLock } from "@/lib/observed/observer";
import { observedHistorySchema } from "@/lib/observed/runtime";
import { toPublicStoreError } from "@/lib/server/public-error";

/**
 * The observed stores as the console shows them: what the observer recorded at
 * its last sample (never a live read of the observed system from a page, so a
 * database with 100,000 advisory locks costs a page one indexed read), and each
 * lock's recent observed events. Holds shorter than the sampling interval may
 * be missed; the view carries the interval so the page says so.
 */

export interface ObservedLockView extends ObservedLock {
  /** When the observer first recorded the current holder (null: before the history kept). */
  since: string | null;
}

export interface ObservedStoreView {
  name: string;
  kind: TObservedConfig["kind"];
  /** Null: the observer has not recorded a sample of this store yet. */
  sampledAt: string | null;
  /** The last sample is older than three intervals: the observer is not running or cannot read the store. */
  stale: boolean;
  locks: ObservedLockView[];
  /** Locks outside the viewer's scope, left out. */
  hidden: number;
  /** The last sample read only part of the store (its read bound was reached): locks it did not reach keep their earlier state. */
  partial: boolean;
  /** The store has a `releaseUrl`: operators may force-release its locks (audited). */
  releasable: boolean;
  error: string | null;
}

export interface ObservedView {
  /** When this view was read (ISO). */
  readAt: string;
  intervalMs: number;
  stores: ObservedStoreView[];
}

export interface ObservedEventView {
  id: string;
  resource: string;
  kind: ObservedEventKind;
  holder: string | null;
  previousHolder: string | null;
  waiters: number;
  at: string;
}

const POOL_KEY = Symbol.for("leasewatch.console.observed-history-pool");

/** Where the observed history is read: the console's Postgres and schema unless a caller (a test) brings its own. */
export interface ObservedReadOptions {
  env?: NodeJS.ProcessEnv;
  pool?: pg.Pool;
  schema?: string;
}

/**
 * What every read of the observed history starts from: the configured observed stores, the
 * sampling interval, the history schema (quoted when asked for) and the pool (opened when asked
 * for: a console without observed stores never connects for them).
 */
export function openObservedRead(options: ObservedReadOptions) {
  return {
    configs: parseObservedConfig(options.env),
    intervalMs: observeIntervalMs(options.env),
    schema: (): string => quoteHistorySchema(options.schema ?? observedHistorySchema(options.env)),
    pool: (): pg.Pool => options.pool ?? historyPool(),
  };
}

/** A history table that does not exist yet reads as "nothing recorded yet", not as an outage. */
export const isNoHistory = (error: unknown): boolean => (error as { code?: string }).code === "42P01";

/** SQL: `column` starts with one of the prefixes in parameter `$n` (null: every name), so a scoped viewer reads only names under them. */
export const inScopeSql = (n: number, column = "resource"): string =>
  `($${n}::text[] IS NULL OR EXISTS (SELECT 1 FROM unnest($${n}::text[]) AS p WHERE starts_with(${column}, p)))`;

/** The viewer's prefixes as that parameter. */
export const scopePrefixes = (scope: ViewerScope): string[] | null => (scope.kind === "all" ? null : [...scope.prefixes]);

/** The observer's last sample of one store, with the database's clock; undefined: none yet. */
export interface ObservedStateRow {
  locks: ObservedLock[];
  sampled_at: Date;
  complete: boolean;
  now: Date;
}

export async function readObservedState(db: pg.Pool, s: string, store: string): Promise<ObservedStateRow | undefined> {
  const { rows } = await db.query<ObservedStateRow>(`SELECT locks, sampled_at, complete, now() FROM ${s}.observed_state WHERE store = $1`, [store]);
  return rows[0];
}

/** The sample is older than three intervals: the observer is not running or cannot read the store. */
export const isSampleStale = (state: ObservedStateRow, intervalMs: number): boolean => state.now.getTime() - state.sampled_at.getTime() > intervalMs * 3;

/** The console's Postgres (where the audit log lives), read-only here. */
export function historyPool(): pg.Pool {
  const g = globalThis as typeof globalThis & { [POOL_KEY]?: pg.Pool };
  if (!g[POOL_KEY]) {
    const pool = new pg.Pool({ connectionString: parseAuditLocation().url, max: 4, application_name: "leasewatch-console", statement_timeout: 4_000 });
    pool.on("error", () => {});
    g[POOL_KEY] = pool;
  }
  return g[POOL_KEY];
}

export async function getObservedView(options: ObservedReadOptions & { scope: ViewerScope }): Promise<ObservedView> {
  const read = openObservedRead(options);
  const s = read.schema();
  const { configs, intervalMs } = read;
  const readAt = new Date().toISOString();
  if (configs.length === 0) return { readAt, intervalMs, stores: [] };
  const pool = read.pool();
  const stores = await Promise.all(
    configs.map(async (config): Promise<ObservedStoreView> => {
      const base = { name: config.name, kind: config.kind, sampledAt: null, stale: true, locks: [], hidden: 0, partial: false, releasable: config.releaseUrl !== undefined };
      try {
        const state = await readObservedState(pool, s, config.name);
        if (!state) return { ...base, error: null };
        const visible = state.locks.filter((l) => isResourceInScope(options.scope, l.resource));
        // When the current holder was first recorded: the latest appeared/holder_changed event per resource.
        const since = await pool.query<{ resource: string; at: Date }>(
          `SELECT DISTINCT ON (resource) resource, at FROM ${s}.observed_events
            WHERE store = $1 AND resource = ANY($2::text[]) AND kind IN ('appeared', 'holder_changed')
            ORDER BY resource, at DESC, id DESC`,
          [config.name, visible.map((l) => l.resource)],
        );
        const sinceBy = new Map(since.rows.map((r) => [r.resource, r.at.toISOString()]));
        return {
          ...base,
          sampledAt: state.sampled_at.toISOString(),
          stale: isSampleStale(state, intervalMs),
          locks: visible
            .map((l) => ({ ...l, since: sinceBy.get(l.resource) ?? null }))
            .sort((a, b) => b.waiters - a.waiters || (a.since ?? "").localeCompare(b.since ?? "") || a.resource.localeCompare(b.resource)),
          hidden: state.locks.length - visible.length,
          partial: !state.complete,
          error: null,
        };
      } catch (error) {
        if (isNoHistory(error)) return { ...base, error: null };
        return { ...base, error: toPublicStoreError(error, config.name) };
      }
    }),
  );
  return { readAt, intervalMs, stores };
}

/** One observed lock's recorded changes, newest first; null when the store is not configured or the name is out of scope. */
export async function getObservedLockHistory(options: { store: string; resource: string; scope: ViewerScope; limit?: number } & ObservedReadOptions): Promise<ObservedEventView[] | null> {
  const read = openObservedRead(options);
  if (!read.configs.some((c) => c.name === options.store)) return null;
  if (!isResourceInScope(options.scope, options.resource)) return null;
  const events = await readObservedEvents(read.pool(), options.schema ?? observedHistorySchema(options.env), { store: options.store, resource: options.resource, limit: options.limit ?? 200, newestFirst: true });
  return events.map((e) => ({ id: e.id, resource: e.resource, kind: e.kind, holder: e.holder, previousHolder: e.previousHolder, waiters: e.waiters, at: e.at.toISOString() }));
}

/** One observed store's figures for `/api/metrics`, from the observer's last recorded sample. */
export interface ObservedStoreCounts {
  name: string;
  kind: TObservedConfig["kind"];
  /** False: the console could not read the recorded state (the history database is down or refused). */
  ok: boolean;
  /** Seconds from the last recorded sample to now (database clock); null: never sampled. */
  sampleAgeSeconds: number | null;
  held: number;
  waiters: number;
  /** Seconds since the longest current holder was first seen; null: nothing held (or no holder's start is kept). */
  oldestHoldSeconds: number | null;
  /** The same, among locks with at least one waiter. */
  oldestBlockingHoldSeconds: number | null;
  /** The last sample read only part of the store (its read bound was reached). */
  partial: boolean;
}

/**
 * Counts per observed store for the metrics endpoint: one aggregate query per store,
 * no lock sent to the console. A lock's hold starts at its latest appeared or
 * holder_changed event (one index probe per held lock); a lock whose start predates
 * the kept history counts as held but not in the oldest hold. Only locks within
 * `scope` are counted.
 */
export async function getObservedCounts(options: ObservedReadOptions & { scope: ViewerScope }): Promise<{ intervalMs: number; stores: ObservedStoreCounts[] }> {
  const read = openObservedRead(options);
  const { configs, intervalMs } = read;
  if (configs.length === 0) return { intervalMs, stores: [] };
  const s = read.schema();
  const pool = read.pool();
  const prefixes = scopePrefixes(options.scope);
  const stores = await Promise.all(
    configs.map(async (config): Promise<ObservedStoreCounts> => {
      const empty = { name: config.name, kind: config.kind, sampleAgeSeconds: null, held: 0, waiters: 0, oldestHoldSeconds: null, oldestBlockingHoldSeconds: null, partial: false };
      try {
        const { rows } = await pool.query<{ age: number; complete: boolean; held: number; waiters: number; oldest: number | null; oldest_blocking: number | null }>(
          `SELECT extract(epoch FROM now() - st.sampled_at)::float8 AS age, st.complete, agg.held, agg.waiters,
                  extract(epoch FROM now() - agg.oldest)::float8 AS oldest,
                  extract(epoch FROM now() - agg.oldest_blocking)::float8 AS oldest_blocking
             FROM ${s}.observed_state st
             CROSS JOIN LATERAL (
               SELECT count(*)::int AS held, coalesce(sum(cur.waiters), 0)::int AS waiters,
                      min(since.at) AS oldest, min(since.at) FILTER (WHERE cur.waiters > 0) AS oldest_blocking
                 FROM (SELECT l->>'resource' AS resource, coalesce((l->>'waiters')::int, 0) AS waiters
                         FROM jsonb_array_elements(st.locks) AS l) AS cur
                 LEFT JOIN LATERAL (
                   SELECT max(e.at) AS at FROM ${s}.observed_events e
                    WHERE e.store = st.store AND e.resource = cur.resource AND e.kind IN ('appeared', 'holder_changed')
                 ) AS since ON true
                WHERE ${inScopeSql(2, "cur.resource")}
             ) AS agg
            WHERE st.store = $1`,
          [config.name, prefixes],
        );
        const row = rows[0];
        if (!row) return { ...empty, ok: true };
        return {
          ...empty,
          ok: true,
          sampleAgeSeconds: Math.max(0, row.age),
          partial: !row.complete,
          held: row.held,
          waiters: row.waiters,
          oldestHoldSeconds: row.oldest === null ? null : Math.max(0, row.oldest),
          oldestBlockingHoldSeconds: row.oldest_blocking === null ? null : Math.max(0, row.oldest_blocking),
        };
      } catch (error) {
        if (isNoHistory(error)) return { ...empty, ok: true };
        return { ...empty, ok: false };
      }
    }),
  );
  return { intervalMs, stores };
}
