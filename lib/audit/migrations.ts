import type pg from "pg";
import { applyPendingMigrations, buildLeaseStatements, buildMigrationStatements, createSchemaInTransaction, inTransaction, readMigrationStatus, type MigrationStatus } from "@leasewatch/lease/internal";
import { auditLogTableSql, auditTokenActionsSql, forceReleaseActorIsSubjectSql, forceReleaseFunctionSql, migrateLockKey, registerForceReleaseSql } from "./sql";

/**
 * The console's own schema (default `leasewatch_console`), versioned like the
 * lease store's (lib/lease/postgres/migrations.ts): one transaction under an
 * advisory lock of its own, recorded in the schema's `schema_migrations`.
 * Never edit a released migration: append a new one.
 */
export interface AuditMigration {
  version: number;
  name: string;
  sql: (schema: string) => string;
}

export const AUDIT_MIGRATIONS: readonly AuditMigration[] = [
  { version: 1, name: "append-only, hash-chained audit_log", sql: auditLogTableSql },
  { version: 2, name: "force_release(): the console's one way to change lease state", sql: forceReleaseFunctionSql },
  { version: 3, name: "token create and revoke entries in the same log", sql: auditTokenActionsSql },
  { version: 4, name: "force_release() records the actor's stable id", sql: forceReleaseActorIsSubjectSql },
];

export interface AuditMigrateResult {
  applied: number[];
  version: number;
  /** Lease schemas whose force-release statement was (re)registered by this call. */
  registered: string[];
}

/**
 * Applies pending migrations, then registers the lease library's force-release
 * statement for each lease schema in this database (re-registered when the
 * library's SQL changed), all in one transaction. Needs a role that may create
 * objects; the console's least-privilege role never runs this.
 */
export async function runAuditMigrations(pool: pg.Pool, schema: string, leaseSchemas: readonly string[] = []): Promise<AuditMigrateResult> {
  const sql = buildMigrationStatements(schema);
  return inTransaction(pool, async (client) => {
    await client.query(sql.lock, [migrateLockKey(schema)]);
    await createSchemaInTransaction(client, schema);
    await client.query(sql.createLedger);
    const { applied, version } = await applyPendingMigrations(client, sql, AUDIT_MIGRATIONS, schema);
    const registered: string[] = [];
    for (const leaseSchema of new Set(leaseSchemas)) {
      const { rowCount } = await client.query(registerForceReleaseSql(schema), [leaseSchema, buildLeaseStatements(leaseSchema).forceRelease]);
      if ((rowCount ?? 0) > 0) registered.push(leaseSchema);
    }
    return { applied, version, registered };
  });
}

/** What runAuditMigrations would apply to the audit schema, read without changing anything. */
export function auditMigrationStatus(pool: pg.Pool, schema: string): Promise<MigrationStatus> {
  return readMigrationStatus(pool, buildMigrationStatements(schema).appliedVersions, AUDIT_MIGRATIONS);
}
