/**
 * The console's migration: creates or upgrades every configured Postgres store's schema
 * and the console's audit schema (with force_release() registered for the lease
 * schemas in the audit log's database). Run it as a role that owns those schemas;
 * the console itself can then run as the least-privilege role (ops/console-role.sql)
 * without LEASEWATCH_MIGRATE. Reads LEASEWATCH_STORES and LEASEWATCH_AUDIT_*.
 */
import pg from "pg";
import { tokenTablesStatus } from "../../lib/api/tokens";
import { parseAuditLocation } from "../../lib/audit/config";
import { leaseSchemasInDatabase } from "../../lib/audit/context";
import { auditMigrationStatus, runAuditMigrations } from "../../lib/audit/migrations";
import { resolveConsoleDbConfig, sessionTablesStatus } from "../../lib/auth/session-store";
import { parseStoresConfig } from "../../lib/server/store-config";
import { PostgresLeaseStore } from "@leasewatch/lease";
import type { MigrationStatus } from "@leasewatch/lease/internal";

export const MIGRATE_USAGE = `Usage: leasewatch migrate            (in the console's installation; also: npm run migrate)
       leasewatch migrate --status   (what is applied and what is pending; changes nothing)
       leasewatch migrate --store URL  (one store; see leasewatch migrate --store x --help)

Creates or upgrades every Postgres store in LEASEWATCH_STORES and the console's audit
log schema (LEASEWATCH_AUDIT_URL / LEASEWATCH_AUDIT_SCHEMA), and registers force_release()
for the lease schemas in the audit log's database. Run it as a role that owns those
schemas. The console's session and API token tables migrate themselves on first use;
--status lists them too. Exit 0 done (--status: nothing pending), 1 failed (--status:
something pending, or a schema could not be read).`;

export async function migrateConsole(args: readonly string[]): Promise<number> {
  if (args.length === 1 && args[0] === "--status") return printMigrationStatus();
  if (args.length > 0) {
    console.error(`migrate: unexpected argument "${args[0]}"\n\n${MIGRATE_USAGE}`);
    return 2;
  }
  try {
    const stores = parseStoresConfig();
    await forEachPostgresStore(stores, async (store) => {
      const { applied, version } = await store.migrate();
      console.log(`${store.name}: schema at version ${version}${applied.length ? ` (applied ${applied.join(", ")})` : ""}`);
    });
    const audit = parseAuditLocation(process.env, stores);
    const pool = openPool(audit.url);
    try {
      const { applied, version, registered } = await runAuditMigrations(pool, audit.schema, leaseSchemasInDatabase(audit.url));
      console.log(
        `audit log (${audit.schema}): schema at version ${version}${applied.length ? ` (applied ${applied.join(", ")})` : ""}` +
          (registered.length ? `; force_release() registered for ${registered.join(", ")}` : ""),
      );
    } finally {
      await pool.end();
    }
    return 0;
  } catch (error) {
    console.error(`migration failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

/** Each configured Postgres store in turn, opened for `visit` and closed after it. */
async function forEachPostgresStore(stores: ReturnType<typeof parseStoresConfig>, visit: (store: PostgresLeaseStore) => Promise<void>): Promise<void> {
  for (const config of stores) {
    if (config.kind !== "postgres") continue;
    const store = new PostgresLeaseStore({ name: config.name, connectionString: config.url, schema: config.schema });
    try {
      await visit(store);
    } finally {
      await store.close();
    }
  }
}

function openPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 5_000 });
  pool.on("error", () => {});
  return pool;
}

function describeStatus(what: string, status: MigrationStatus): string {
  if (status.pending.length === 0) return `${what}: version ${status.version}, up to date`;
  return `${what}: version ${status.version}, pending ${status.pending.map((m) => `${m.version} (${m.name})`).join(", ")}`;
}

/** Every schema the console migrates, read without changing anything: the lease stores, the audit log, sessions, API tokens. */
async function printMigrationStatus(): Promise<number> {
  let isUpToDate = true;
  const report = async (what: string, read: () => Promise<MigrationStatus>) => {
    try {
      const status = await read();
      console.log(describeStatus(what, status));
      if (status.pending.length > 0) isUpToDate = false;
    } catch (error) {
      console.log(`${what}: could not be read (${error instanceof Error ? error.message : String(error)})`);
      isUpToDate = false;
    }
  };
  try {
    const stores = parseStoresConfig();
    await forEachPostgresStore(stores, (store) => report(`${store.name} (schema ${store.schema})`, () => store.migrationStatus()));
    const audit = parseAuditLocation(process.env, stores);
    const consoleDb = resolveConsoleDbConfig();
    const auditPool = openPool(audit.url);
    const consolePool = openPool(consoleDb.url);
    try {
      await report(`audit log (schema ${audit.schema})`, () => auditMigrationStatus(auditPool, audit.schema));
      await report(`console sessions (schema ${consoleDb.schema})`, () => sessionTablesStatus(consolePool, consoleDb.schema));
      await report(`API tokens (schema ${consoleDb.schema})`, () => tokenTablesStatus(consolePool, consoleDb.schema));
    } finally {
      await Promise.all([auditPool.end(), consolePool.end()]);
    }
  } catch (error) {
    console.error(`migrate --status failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  return isUpToDate ? 0 : 1;
}

