/**
 * The least-privilege database role the console can run as (ops/console-role.sql
 * is this, rendered with the default names). It reads the lease tables, appends to
 * and reads the audit log, and changes lease state only through force_release(),
 * which releases only against a `requested` audit entry of the same transaction.
 * Run it as the role that migrated the schemas, after `npm run migrate`.
 */
import { DEFAULT_SCHEMA as DEFAULT_LEASE_SCHEMA, quoteSchema, SQL_IDENTIFIER } from "@leasewatch/lease/internal";
import { DEFAULT_AUDIT_SCHEMA } from "./config";

export const DEFAULT_CONSOLE_ROLE = "leasewatch_console";

export interface ConsoleRoleOptions {
  role?: string;
  /** Omitted: the role is assumed to exist (or a password is set separately). */
  password?: string;
  leaseSchemas?: readonly string[];
  auditSchema?: string;
  /** Schema of the console's sessions table (LEASEWATCH_CONSOLE_SCHEMA); default the audit schema. */
  sessionsSchema?: string;
}

export function consoleRoleSql(options: ConsoleRoleOptions = {}): string {
  const role = options.role ?? DEFAULT_CONSOLE_ROLE;
  if (!SQL_IDENTIFIER.test(role)) throw new Error(`invalid role name ${JSON.stringify(role)}`);
  const r = `"${role}"`;
  const a = quoteSchema(options.auditSchema ?? DEFAULT_AUDIT_SCHEMA);
  const c = quoteSchema(options.sessionsSchema ?? options.auditSchema ?? DEFAULT_AUDIT_SCHEMA);
  const leaseSchemas = options.leaseSchemas ?? [DEFAULT_LEASE_SCHEMA];
  const password = options.password === undefined ? "" : ` PASSWORD '${options.password.replace(/'/g, "''")}'`;
  const lease = leaseSchemas
    .map((schema) => {
      const s = quoteSchema(schema);
      return `
-- Lease store ${s}: read only (leases, events, rollups). No INSERT, UPDATE or DELETE:
-- the console never writes lease state except through force_release() below.
GRANT USAGE ON SCHEMA ${s} TO ${r};
GRANT SELECT ON ALL TABLES IN SCHEMA ${s} TO ${r};
-- Tables later migrations add are readable too (applies to tables created by the role running this).
ALTER DEFAULT PRIVILEGES IN SCHEMA ${s} GRANT SELECT ON TABLES TO ${r};`;
    })
    .join("\n");
  return `-- Leasewatch console: least-privilege database role.
-- Run as the role that owns the schemas (the one that runs \`npm run migrate\`), after migrating.
-- Then start the console with this role in its URLs and without LEASEWATCH_MIGRATE / LEASEWATCH_SWEEP.
CREATE ROLE ${r} LOGIN${password};${options.password === undefined ? `
-- Give it a password: \\password ${role} (psql), or ALTER ROLE ${r} PASSWORD '…';` : ""}
${lease}

-- Audit log ${a}: append and read only. A trigger also refuses UPDATE, DELETE and TRUNCATE for everyone.
GRANT USAGE ON SCHEMA ${a} TO ${r};
GRANT SELECT, INSERT ON ${a}.audit_log TO ${r};
GRANT USAGE ON SEQUENCE ${a}.audit_log_id_seq TO ${r};

-- The one way to change lease state: force-release, together with its audit entry.
GRANT EXECUTE ON FUNCTION ${a}.force_release(bigint, text, text, text, text, text) TO ${r};

-- Sign-in sessions (${c}.console_sessions): read, create, revoke and prune expired
-- records (deleting one only ends a session), and read the sessions' migration ledger.
-- Granted only once the tables exist; re-run this block after the migration that creates them.
DO $$
BEGIN
  IF to_regclass('${c}.console_sessions') IS NOT NULL THEN
    GRANT USAGE ON SCHEMA ${c} TO ${r};
    GRANT SELECT, INSERT, UPDATE, DELETE ON ${c}.console_sessions TO ${r};
  END IF;
  IF to_regclass('${c}.console_sessions_migrations') IS NOT NULL THEN
    GRANT SELECT ON ${c}.console_sessions_migrations TO ${r};
  END IF;
END
$$;

-- Lock API tokens (${c}.api_tokens, created by \`npm run api\` or \`npm run api:token\`): list,
-- create and revoke from /tokens. Only revoked_at may change; a token row is never deleted.
DO $$
BEGIN
  IF to_regclass('${c}.api_tokens') IS NOT NULL THEN
    GRANT USAGE ON SCHEMA ${c} TO ${r};
    GRANT SELECT, INSERT ON ${c}.api_tokens TO ${r};
    GRANT UPDATE (revoked_at) ON ${c}.api_tokens TO ${r};
  END IF;
  IF to_regclass('${c}.api_tokens_migrations') IS NOT NULL THEN
    GRANT SELECT ON ${c}.api_tokens_migrations TO ${r};
  END IF;
END
$$;
`;
}
