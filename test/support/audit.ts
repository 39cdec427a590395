/**
 * An audit log of its own per test: a fresh schema (dropped afterwards) in the
 * shared test database, migrated, with force_release() registered for the lease
 * schemas given.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { AuditLog } from "@/lib/audit/log";
import type { AuditDeps, AuditTarget } from "@/lib/audit/force-release";
import { freshPgSchema, TEST_DATABASE_URL } from "@/lib/lease/testing/isolation";
import type { LeaseStore } from "@/lib/lease/types";

export const TEST_AUDIT_KEY = `test-audit-key-${randomBytes(24).toString("hex")}`;

export interface AuditFixture {
  schema: string;
  url: string;
  key: string;
  log: AuditLog;
  /** A superuser pool for the test's own checks and tampering. */
  admin: pg.Pool;
  cleanup(): Promise<void>;
}

export async function createAuditFixture(leaseSchemas: readonly string[] = [], url: string = TEST_DATABASE_URL): Promise<AuditFixture> {
  const fresh = freshPgSchema(url);
  const log = new AuditLog({ connectionString: url, schema: fresh.schema, key: TEST_AUDIT_KEY });
  await log.migrate(leaseSchemas);
  const admin = new pg.Pool({ connectionString: url, max: 2 });
  admin.on("error", () => {});
  return {
    schema: fresh.schema,
    url,
    key: TEST_AUDIT_KEY,
    log,
    admin,
    async cleanup() {
      await log.close();
      await admin.end();
      await fresh.drop();
    },
  };
}

/** Deps for forceReleaseAudited over the test's own audit log and stores. */
export function auditDeps(log: AuditLog, targets: Record<string, AuditTarget | LeaseStore>, pendingGraceMs?: number): AuditDeps {
  return {
    getAuditLog: async () => log,
    getTarget: (name) => {
      const t = targets[name];
      if (!t) return undefined;
      return "store" in t ? t : { store: t };
    },
    ...(pendingGraceMs !== undefined ? { pendingGraceMs } : {}),
  };
}

/** A signed-in operator as the console names them: the IdP's `sub` with its issuer, and the verified email. */
export const ALICE = { id: "https://sso.example.test#alice", email: "alice@example.test", roles: ["operator"] };
export const REQUEST = { requestId: "req-1", ip: "203.0.113.7", userAgent: "vitest" };
