/**
 * `npm run migrate`: creates or upgrades every configured Postgres store's schema
 * and the console's audit schema (with force_release() registered for the lease
 * schemas in the audit log's database). Run it as a role that owns those schemas;
 * the console itself can then run as the least-privilege role (ops/console-role.sql)
 * without LEASEWATCH_MIGRATE. Reads LEASEWATCH_STORES and LEASEWATCH_AUDIT_*.
 */
import { parseAuditLocation } from "../lib/audit/config";
import { leaseSchemasInDatabase } from "../lib/audit/context";
import { runAuditMigrations } from "../lib/audit/migrations";
import { parseStoresConfig } from "../lib/console/config";
import { PostgresLeaseStore } from "../lib/lease/postgres/store";
import pg from "pg";

async function main(): Promise<void> {
  const stores = parseStoresConfig();
  for (const config of stores) {
    if (config.kind !== "postgres") continue;
    const store = new PostgresLeaseStore({ name: config.name, connectionString: config.url, schema: config.schema });
    try {
      const { applied, version } = await store.migrate();
      console.log(`${config.name}: schema at version ${version}${applied.length ? ` (applied ${applied.join(", ")})` : ""}`);
    } finally {
      await store.close();
    }
  }
  const audit = parseAuditLocation(process.env, stores);
  const pool = new pg.Pool({ connectionString: audit.url, max: 1, connectionTimeoutMillis: 5_000 });
  pool.on("error", () => {});
  try {
    const { applied, version, registered } = await runAuditMigrations(pool, audit.schema, leaseSchemasInDatabase(audit.url));
    console.log(
      `audit log (${audit.schema}): schema at version ${version}${applied.length ? ` (applied ${applied.join(", ")})` : ""}` +
        (registered.length ? `; force_release() registered for ${registered.join(", ")}` : ""),
    );
  } finally {
    await pool.end();
  }
}

main().catch((error: unknown) => {
  console.error(`migration failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
