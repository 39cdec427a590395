/**
 * The pg pool of the console's own tables (sessions, audit log, API tokens), for the
 * console, the lock API and the scripts alike.
 */
import pg from "pg";

export interface ConsolePoolOptions {
  /** Unset: pg's defaults (PGHOST, PGDATABASE, …). */
  url: string | undefined;
  max: number;
  /** Postgres stops a statement after this long (a hung lock must not hold a request forever). */
  statementTimeoutMs: number;
  /** "transaction": the url is a pooler in transaction mode (PgBouncer, RDS Proxy). */
  pooler?: "transaction";
}

export function createConsolePool(options: ConsolePoolOptions): pg.Pool {
  // statement_timeout travels as a connection startup parameter, which a transaction pooler
  // refuses (PgBouncer: "unsupported startup parameter") or could not keep per client anyway.
  // Behind one, set it on the database role instead (ALTER ROLE … SET statement_timeout).
  return new pg.Pool({
    connectionString: options.url,
    max: options.max,
    connectionTimeoutMillis: 5_000,
    ...(options.pooler === "transaction" ? {} : { statement_timeout: options.statementTimeoutMs }),
  });
}

const ignoreIdleClientError = () => {};

/**
 * The caller's pool, or a small one of the component's own (`ownsPool`: it ends it on close).
 * Either way an idle client's error is ignored: a database restart must not crash the
 * process; the failing query reports it. The listener is one shared function, added once per
 * pool, so components that share a pool do not pile up listeners on it.
 */
export function resolveConsolePool(options: { pool?: pg.Pool; url?: string; pooler?: "transaction" }): { pool: pg.Pool; ownsPool: boolean } {
  const pool = options.pool ?? createConsolePool({ url: options.url, max: 4, statementTimeoutMs: 5_000, ...(options.pooler ? { pooler: options.pooler } : {}) });
  if (!pool.listeners("error").includes(ignoreIdleClientError)) pool.on("error", ignoreIdleClientError);
  return { pool, ownsPool: options.pool === undefined };
}
