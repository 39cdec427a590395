/**
 * The console's own tables kept outside the audit log's ledger (sessions, API tokens). Each
 * component applies its migrations in one transaction under an advisory lock of its own and
 * records them in a ledger of its own (`<schema>.<ledger>`), so components sharing a schema
 * never collide; a released migration is never edited, only followed by a new one.
 */
import type pg from "pg";
import { applyPendingMigrations, createSchemaInTransaction, inTransaction, quoteSchema, readMigrationStatus, type Migration, type MigrationStatus } from "@leasewatch/lease/internal";
import { resolveConsolePool } from "./console-db-pool";

export interface ConsoleTableMigrations {
  schema: string;
  /** The ledger table's name, e.g. `api_tokens_migrations`. */
  ledger: string;
  /** Key of the advisory lock the migrating transaction holds. */
  lockKey: string;
  /** Each `sql` is called with the quoted schema name. */
  migrations: readonly Migration[];
}

/** The component's ledger table, schema-qualified. */
const ledgerOf = (options: Pick<ConsoleTableMigrations, "schema" | "ledger">): string => `${quoteSchema(options.schema)}.${options.ledger}`;

export async function migrateConsoleTables(pool: pg.Pool, options: ConsoleTableMigrations): Promise<void> {
  const ledger = ledgerOf(options);
  // Fast path (and the only one a restricted role can take): already up to date.
  const status = await readConsoleTablesStatus(pool, options).catch(() => null);
  if (status && status.pending.length === 0) return;
  await inTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1::text))", [options.lockKey]);
    await createSchemaInTransaction(client, options.schema);
    await client.query(`CREATE TABLE IF NOT EXISTS ${ledger} (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())`);
    await applyPendingMigrations(
      client,
      { appliedVersions: `SELECT version FROM ${ledger}`, recordVersion: `INSERT INTO ${ledger} (version, name) VALUES ($1::int, $2::text)` },
      options.migrations,
      quoteSchema(options.schema),
    );
  });
}

/** What migrateConsoleTables would apply, read without changing anything. */
export function readConsoleTablesStatus(pool: pg.Pool, options: Pick<ConsoleTableMigrations, "schema" | "ledger" | "migrations">): Promise<MigrationStatus> {
  return readMigrationStatus(pool, `SELECT version FROM ${ledgerOf(options)}`, options.migrations);
}

/**
 * A component's tables in the console database: its pool (the caller's, or a small one of its
 * own that close() ends), its migrations applied on first use, and its health.
 */
export abstract class ConsoleTableStore {
  protected readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly schema: string;
  private migrated: Promise<void> | undefined;

  constructor(
    options: { schema: string; url?: string; pool?: pg.Pool; pooler?: "transaction" },
    private readonly tables: Omit<ConsoleTableMigrations, "schema">,
  ) {
    ({ pool: this.pool, ownsPool: this.ownsPool } = resolveConsolePool(options));
    this.schema = options.schema;
  }

  /** Applies the migrations on the first call, shared by concurrent callers; after a failure the next call tries again. */
  migrate(): Promise<void> {
    this.migrated ??= migrateConsoleTables(this.pool, { schema: this.schema, ...this.tables }).catch((error: unknown) => {
      this.migrated = undefined;
      throw error;
    });
    return this.migrated;
  }

  /** The database answers (readiness). */
  async health(): Promise<boolean> {
    try {
      await this.pool.query("SELECT 1");
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }
}
