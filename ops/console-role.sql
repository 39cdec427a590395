-- Leasewatch console: least-privilege database role.
-- Run as the role that owns the schemas (the one that runs `npm run migrate`), after migrating.
-- Then start the console with this role in its URLs and without LEASEWATCH_MIGRATE / LEASEWATCH_SWEEP.
CREATE ROLE "leasewatch_console" LOGIN;
-- Give it a password: \password leasewatch_console (psql), or ALTER ROLE "leasewatch_console" PASSWORD '…';

-- Lease store "leasewatch": read only (leases, events, rollups). No INSERT, UPDATE or DELETE:
-- the console never writes lease state except through force_release() below.
GRANT USAGE ON SCHEMA "leasewatch" TO "leasewatch_console";
GRANT SELECT ON ALL TABLES IN SCHEMA "leasewatch" TO "leasewatch_console";
-- Tables later migrations add are readable too (applies to tables created by the role running this).
ALTER DEFAULT PRIVILEGES IN SCHEMA "leasewatch" GRANT SELECT ON TABLES TO "leasewatch_console";

-- Audit log "leasewatch_console": append and read only. A trigger also refuses UPDATE, DELETE and TRUNCATE for everyone.
GRANT USAGE ON SCHEMA "leasewatch_console" TO "leasewatch_console";
GRANT SELECT, INSERT ON "leasewatch_console".audit_log TO "leasewatch_console";
GRANT USAGE ON SEQUENCE "leasewatch_console".audit_log_id_seq TO "leasewatch_console";

-- The one way to change lease state: force-release, together with its audit entry.
GRANT EXECUTE ON FUNCTION "leasewatch_console".force_release(bigint, text, text, text, text, text) TO "leasewatch_console";

-- Sign-in sessions ("leasewatch_console".console_sessions): read, create, revoke and prune expired
-- records (deleting one only ends a session), and read the sessions' migration ledger.
-- Granted only once the tables exist; re-run this block after the migration that creates them.
DO $$
BEGIN
  IF to_regclass('"leasewatch_console".console_sessions') IS NOT NULL THEN
    GRANT USAGE ON SCHEMA "leasewatch_console" TO "leasewatch_console";
    GRANT SELECT, INSERT, UPDATE, DELETE ON "leasewatch_console".console_sessions TO "leasewatch_console";
  END IF;
  IF to_regclass('"leasewatch_console".console_sessions_migrations') IS NOT NULL THEN
    GRANT SELECT ON "leasewatch_console".console_sessions_migrations TO "leasewatch_console";
  END IF;
END
$$;

-- Lock API tokens ("leasewatch_console".api_tokens, created by `npm run api` or `npm run api:token`): list,
-- create and revoke from /tokens. Only revoked_at may change; a token row is never deleted.
DO $$
BEGIN
  IF to_regclass('"leasewatch_console".api_tokens') IS NOT NULL THEN
    GRANT USAGE ON SCHEMA "leasewatch_console" TO "leasewatch_console";
    GRANT SELECT, INSERT ON "leasewatch_console".api_tokens TO "leasewatch_console";
    GRANT UPDATE (revoked_at) ON "leasewatch_console".api_tokens TO "leasewatch_console";
  END IF;
  IF to_regclass('"leasewatch_console".api_tokens_migrations') IS NOT NULL THEN
    GRANT SELECT ON "leasewatch_console".api_tokens_migrations TO "leasewatch_console";
  END IF;
END
$$;
