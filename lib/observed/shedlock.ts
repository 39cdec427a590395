import type pg from "pg";

/**
 * A ShedLock table in its documented JDBC layout, read-only:
 * `shedlock(name VARCHAR(64) PRIMARY KEY, lock_until TIMESTAMP, locked_at TIMESTAMP, locked_by VARCHAR(255))`.
 *
 * ShedLock never deletes a row. Taking the lock sets `lock_until` to
 * `locked_at + lockAtMostFor`; releasing it moves `lock_until` back to now (or
 * to `locked_at + lockAtLeastFor`). So a row whose `lock_until` is in the future
 * is held, and one whose `lock_until` has passed is free, unless it passed at
 * exactly `locked_at + lockAtMostFor`: then nobody released it, the holder died
 * or overran, and the lock lapsed. That last case needs `lockAtMostFor`, which
 * lives in the application's annotations; give it per name (or one default) to
 * tell lapsed from free.
 */

export type ShedLockState = "held" | "lapsed" | "free";

export interface ShedLockRow {
  name: string;
  state: ShedLockState;
  lockUntil: Date;
  lockedAt: Date;
  lockedBy: string;
}

export interface ShedLockOptions {
  /** Schema-qualified table name; default `shedlock`. */
  table?: string;
  /** lockAtMostFor per lock name, in ms, and a default for the rest: tells a lapsed lock from a released one. */
  lockAtMostForMs?: { default?: number; byName?: Record<string, number> };
  /** At most this many rows are read. */
  limit?: number;
}

export interface ShedLockSnapshot {
  rows: ShedLockRow[];
  total: number;
  truncated: boolean;
  /** The database's clock at the read (ShedLock's JDBC provider writes the database's time when `usingDbTime()`, else the app's). */
  at: Date;
}

export const DEFAULT_SHEDLOCK_READ_LIMIT = 5_000;

/** `schema.table` or `table`, each an unquoted SQL identifier, quoted for use in a statement. */
export function quoteShedLockTable(table: string): string {
  const parts = table.split(".");
  if (parts.length > 2 || !parts.every((p) => /^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(p))) {
    throw new Error(`ShedLock table "${table}" must be a table name or schema.table, letters, digits and _ only`);
  }
  return parts.map((p) => `"${p}"`).join(".");
}

/** The state a row is in at `now`. */
export function shedLockState(row: { name: string; lockUntil: Date; lockedAt: Date }, now: Date, lockAtMostForMs?: ShedLockOptions["lockAtMostForMs"]): ShedLockState {
  if (row.lockUntil.getTime() > now.getTime()) return "held";
  const atMost = lockAtMostForMs?.byName?.[row.name] ?? lockAtMostForMs?.default;
  if (atMost !== undefined && row.lockUntil.getTime() - row.lockedAt.getTime() >= atMost) return "lapsed";
  return "free";
}

export async function readShedLocks(db: pg.Pool | pg.Client, options: ShedLockOptions = {}): Promise<ShedLockSnapshot> {
  const table = quoteShedLockTable(options.table ?? "shedlock");
  const limit = options.limit ?? DEFAULT_SHEDLOCK_READ_LIMIT;
  // TIMESTAMP (no zone) columns: read them as UTC text so the pg driver's local-time parsing cannot shift them.
  const { rows } = await db.query<{ name: string; lock_until: string; locked_at: string; locked_by: string; total: string; db_now: Date }>(
    `SELECT name, to_char(lock_until, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS lock_until,
            to_char(locked_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS locked_at, locked_by,
            count(*) OVER () AS total, now() AS db_now
       FROM ${table} ORDER BY lock_until DESC, name LIMIT $1`,
    [limit],
  );
  const at = rows[0]?.db_now ?? new Date();
  const out = rows.map((r) => {
    const row = { name: r.name, lockUntil: new Date(r.lock_until), lockedAt: new Date(r.locked_at), lockedBy: r.locked_by };
    return { ...row, state: shedLockState(row, at, options.lockAtMostForMs) };
  });
  const total = rows.length > 0 ? Number(rows[0]!.total) : 0;
  return { rows: out, total, truncated: total > rows.length, at };
}

/**
 * Force-release of one ShedLock row, as ShedLock's own unlock does (lock_until = now),
 * only if the row still shows the holder that was shown (`locked_at` and `locked_by`).
 * Returns whether it changed the row.
 */
export async function releaseShedLock(db: pg.Pool | pg.Client, input: { table?: string; name: string; lockedAt: Date; lockedBy: string }): Promise<boolean> {
  const table = quoteShedLockTable(input.table ?? "shedlock");
  const result = await db.query(
    `UPDATE ${table} SET lock_until = (now() AT TIME ZONE 'UTC')
      WHERE name = $1 AND locked_by = $2
        AND to_char(locked_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') = $3
        AND lock_until > (now() AT TIME ZONE 'UTC')`,
    [input.name, input.lockedBy, input.lockedAt.toISOString()],
  );
  return (result.rowCount ?? 0) === 1;
}
