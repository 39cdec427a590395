import type pg from "pg";
import { INTERNAL_LOCK_JOBS } from "@leasewatch/lease/internal";

/**
 * Postgres advisory locks, read-only: who holds which key, since when, and who
 * waits behind whom. Reads `pg_locks` joined to `pg_stat_activity` for the
 * current database; any role with `pg_read_all_stats` (or the superuser) sees
 * every backend, another role sees only its own sessions' details
 * (docs/observed-locks.md gives the least-privilege role).
 *
 * Postgres keeps no record of when an advisory lock was taken, or whether it is
 * a session or a transaction lock. What the holder's row can say: when its
 * backend started and, inside a transaction, when that began. The observer adds
 * "first seen" from its samples. Leasewatch's own transaction locks (a lease store's grants,
 * migrations, rollups, the audit chain) are left out: they are not a team's locks.
 */

/** A key as `pg_advisory_lock(bigint)` or `pg_advisory_lock(int, int)` took it. */
export type AdvisoryKey = { form: "bigint"; key: string } | { form: "pair"; key1: number; key2: number };

export interface AdvisorySession {
  pid: number;
  applicationName: string;
  user: string | null;
  clientAddr: string | null;
  backendStart: Date | null;
  /** Start of the session's open transaction; null outside one. */
  xactStart: Date | null;
  /** `active`, `idle`, `idle in transaction`, … */
  state: string | null;
  /** The session's current or last statement; only when asked for (`includeQuery`). */
  query?: string | null;
}

export interface AdvisoryWaiter extends AdvisorySession {
  /** When the waiting statement started. */
  waitingSince: Date | null;
  /** The sessions it waits for directly (pg_blocking_pids). */
  blockedBy: number[];
}

export interface AdvisoryLock {
  /** The name the naming map gives this key, else `advisory:<key>` / `advisory:<k1>,<k2>`. */
  resource: string;
  key: AdvisoryKey;
  mode: "exclusive" | "shared";
  holders: AdvisorySession[];
  waiters: AdvisoryWaiter[];
}

export interface AdvisoryNaming {
  /** A resource name per key, e.g. `{ name: "billing-close", hashtext: "billing-close" }` or `{ name: "reports", key: "424242" }`. */
  names?: Array<{ name: string; key?: string; pair?: [number, number]; hashtext?: string }>;
}

export interface ReadAdvisoryOptions {
  /** At most this many lock rows are read (holders and waiters together); the rest is counted, not read. */
  limit?: number;
  /** The holders' and waiters' statement text (operators only; off by default). */
  includeQuery?: boolean;
  /** Keys mapped to names, resolved by {@link resolveAdvisoryNames}. */
  names?: ReadonlyMap<string, string>;
}

export interface AdvisorySnapshot {
  locks: AdvisoryLock[];
  /** Lock rows in the database, read or not (Leasewatch's own left out). */
  total: number;
  /** True when more rows exist than `limit` allowed to read. */
  truncated: boolean;
  /** The database's clock at the read. */
  at: Date;
}

export const DEFAULT_ADVISORY_READ_LIMIT = 5_000;

/** The text form the naming map and the resource name use for a key. */
export function advisoryKeyText(key: AdvisoryKey): string {
  return key.form === "bigint" ? key.key : `${key.key1},${key.key2}`;
}

/** Turns the configured names into key → name, asking Postgres for hashtext() values. */
export async function resolveAdvisoryNames(db: pg.Pool | pg.Client, naming: AdvisoryNaming): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of naming.names ?? []) {
    if (entry.hashtext !== undefined) {
      const { rows } = await db.query<{ k: string }>("SELECT hashtext($1)::bigint::text AS k", [entry.hashtext]);
      out.set(rows[0]!.k, entry.name);
    } else if (entry.pair !== undefined) {
      out.set(`${entry.pair[0]},${entry.pair[1]}`, entry.name);
    } else if (entry.key !== undefined) {
      out.set(BigInt(entry.key).toString(), entry.name);
    }
  }
  return out;
}

// objsubid 1: one bigint key split over classid (high 32 bits) and objid (low 32 bits);
// objsubid 2: two int4 keys, in classid and objid. Both columns are oids (unsigned).
const READ_SQL = `
WITH advisory AS (
  SELECT l.pid, l.granted, l.mode, l.objsubid,
         CASE WHEN l.objsubid = 1 THEN ((l.classid::bigint << 32) | l.objid::bigint)::text END AS big_key,
         CASE WHEN l.objsubid = 2 THEN (l.classid::bigint - CASE WHEN l.classid::bigint >= 2147483648 THEN 4294967296 ELSE 0 END)::int END AS key1,
         CASE WHEN l.objsubid = 2 THEN (l.objid::bigint - CASE WHEN l.objid::bigint >= 2147483648 THEN 4294967296 ELSE 0 END)::int END AS key2
    FROM pg_locks l
   WHERE l.locktype = 'advisory'
     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
),
-- Leasewatch's own transaction locks (lib/lease/postgres/lock-keys.ts): a lease grant's
-- (hashtext(schema), hashtext(resource)) on a schema with a lease event table, and a job's
-- hashtext('leasewatch.<job>:<schema>') on any schema. Not a team's locks, so not listed.
own_grant AS (
  SELECT hashtext(n.nspname) AS key1
    FROM pg_namespace n
   WHERE EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid AND c.relname = 'lease_events')
),
own_job AS (
  SELECT hashtext('leasewatch.' || job || ':' || n.nspname)::bigint::text AS big_key
    FROM pg_namespace n CROSS JOIN unnest($3::text[]) AS job
),
listed AS (
  SELECT * FROM advisory a
   WHERE NOT (a.objsubid = 2 AND a.key1 IN (SELECT key1 FROM own_grant))
     AND NOT (a.objsubid = 1 AND a.big_key IN (SELECT big_key FROM own_job))
)
SELECT a.*, s.application_name, s.usename, host(s.client_addr) AS client_addr, s.backend_start, s.xact_start,
       s.query_start, s.state, CASE WHEN $2::boolean THEN s.query END AS query,
       CASE WHEN NOT a.granted THEN pg_blocking_pids(a.pid) END AS blocked_by,
       count(*) OVER () AS total, now() AS db_now
  FROM listed a
  LEFT JOIN pg_stat_activity s ON s.pid = a.pid
 ORDER BY a.objsubid, a.big_key, a.key1, a.key2, a.granted DESC, s.query_start NULLS LAST, a.pid
 LIMIT $1`;

interface Row {
  pid: number;
  granted: boolean;
  mode: string;
  objsubid: number;
  big_key: string | null;
  key1: number | null;
  key2: number | null;
  application_name: string | null;
  usename: string | null;
  client_addr: string | null;
  backend_start: Date | null;
  xact_start: Date | null;
  query_start: Date | null;
  state: string | null;
  query: string | null;
  blocked_by: number[] | null;
  total: string;
  db_now: Date;
}

/** One bounded read of every advisory lock in the connected database. */
export async function readAdvisoryLocks(db: pg.Pool | pg.Client, options: ReadAdvisoryOptions = {}): Promise<AdvisorySnapshot> {
  const limit = options.limit ?? DEFAULT_ADVISORY_READ_LIMIT;
  const includeQuery = options.includeQuery ?? false;
  const { rows } = await db.query<Row>(READ_SQL, [limit, includeQuery, INTERNAL_LOCK_JOBS]);
  const byKey = new Map<string, AdvisoryLock>();
  for (const row of rows) {
    const key: AdvisoryKey = row.objsubid === 2 ? { form: "pair", key1: row.key1!, key2: row.key2! } : { form: "bigint", key: row.big_key! };
    const text = advisoryKeyText(key);
    let lock = byKey.get(text);
    if (!lock) {
      lock = { resource: options.names?.get(text) ?? `advisory:${text}`, key, mode: "exclusive", holders: [], waiters: [] };
      byKey.set(text, lock);
    }
    const session: AdvisorySession = {
      pid: row.pid,
      applicationName: row.application_name ?? "",
      user: row.usename,
      clientAddr: row.client_addr,
      backendStart: row.backend_start,
      xactStart: row.xact_start,
      state: row.state,
      ...(includeQuery ? { query: row.query } : {}),
    };
    if (row.granted) {
      lock.holders.push(session);
      if (row.mode === "ShareLock") lock.mode = "shared";
    } else {
      lock.waiters.push({ ...session, waitingSince: row.query_start, blockedBy: row.blocked_by ?? [] });
    }
  }
  const total = rows.length > 0 ? Number(rows[0]!.total) : 0;
  const at = rows[0]?.db_now ?? new Date();
  return { locks: [...byKey.values()], total, truncated: total > rows.length, at };
}

/**
 * The wait chain starting at `pid`: `[pid, the session it waits for, the one that
 * one waits for, …]`, following the first blocker at each step, from a snapshot.
 * Stops at a session that waits for nobody, or at a cycle (a deadlock Postgres is
 * about to break), whose first repeated pid ends the list.
 */
export function waitChain(snapshot: AdvisorySnapshot, pid: number): number[] {
  const blockers = new Map<number, number[]>();
  for (const lock of snapshot.locks) for (const w of lock.waiters) blockers.set(w.pid, [...(blockers.get(w.pid) ?? []), ...w.blockedBy]);
  const chain = [pid];
  const seen = new Set([pid]);
  for (;;) {
    const next = blockers.get(chain[chain.length - 1]!)?.[0];
    if (next === undefined) return chain;
    chain.push(next);
    if (seen.has(next)) return chain;
    seen.add(next);
  }
}

/**
 * Force-release of an advisory lock: ends the holding backend's whole session
 * (Postgres has no way to take one lock from another session), and only if that
 * same backend (pid and start time to the millisecond, so a reused pid never matches) still holds
 * that same key. Needs `pg_signal_backend` on the observer's role. Returns
 * whether a backend was terminated.
 */
export async function terminateAdvisoryHolder(
  db: pg.Pool | pg.Client,
  input: { key: AdvisoryKey; pid: number; backendStart: Date },
): Promise<boolean> {
  const keyMatch =
    input.key.form === "bigint"
      ? "l.objsubid = 1 AND ((l.classid::bigint << 32) | l.objid::bigint) = $3::bigint"
      : "l.objsubid = 2 AND l.classid = ($3::int)::oid AND l.objid = ($4::int)::oid";
  const keyParams = input.key.form === "bigint" ? [input.key.key] : [input.key.key1, input.key.key2];
  const { rows } = await db.query<{ terminated: boolean }>(
    `SELECT pg_terminate_backend(l.pid) AS terminated
       FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.pid = $1 AND date_trunc('milliseconds', s.backend_start) = $2 AND ${keyMatch}
      LIMIT 1`,
    [input.pid, input.backendStart, ...keyParams],
  );
  return rows[0]?.terminated === true;
}
