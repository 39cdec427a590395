import { z } from "zod";
import { parseStoresConfig, type TStoreConfig } from "@/lib/server/store-config";
import { isLoopbackHost } from "@/lib/auth/env";
import { SCHEMA_PATTERN } from "@leasewatch/lease/internal";

/**
 * Where the audit log lives and how it is chained, from the environment:
 * - LEASEWATCH_AUDIT_URL: a postgres:// URL; default the first Postgres store's.
 *   Redis stores are audited in Postgres too.
 * - LEASEWATCH_AUDIT_SCHEMA: default LEASEWATCH_CONSOLE_SCHEMA (the schema of the
 *   console's own tables, such as its sessions), else "leasewatch_console".
 * - LEASEWATCH_AUDIT_KEY: the HMAC key of the chain, ≥ 32 characters. Kept out of
 *   the database on purpose: whoever can rewrite the table cannot re-forge the chain.
 */
export const DEFAULT_AUDIT_SCHEMA = "leasewatch_console";
export const MIN_AUDIT_KEY_LENGTH = 32;
/** The demo's chain key (scripts/stack.ts): public, so it proves nothing outside the local demo. */
export const DEMO_AUDIT_KEY = "leasewatch-demo-audit-key-local-only-000000";

export class AuditConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AuditConfigError";
  }
}

export interface AuditLocation {
  url: string;
  schema: string;
  /** "transaction" when `url` is a pooler in transaction mode (see lib/server/console-db-pool.ts). */
  pooler?: "transaction";
}
export interface AuditConfig extends AuditLocation {
  key: string;
}

const ZAuditEnv = z.object({
  LEASEWATCH_AUDIT_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, { error: "LEASEWATCH_AUDIT_URL must be a postgres:// URL" })
    .optional(),
  LEASEWATCH_AUDIT_POOLER: z.literal("transaction", { error: 'LEASEWATCH_AUDIT_POOLER must be "transaction" (or unset for a direct connection)' }).optional(),
  LEASEWATCH_AUDIT_SCHEMA: z
    .string()
    .regex(SCHEMA_PATTERN, { error: "LEASEWATCH_AUDIT_SCHEMA must be a lower-case identifier: a-z, 0-9, _ (max 63)" })
    .optional(),
  LEASEWATCH_CONSOLE_SCHEMA: z
    .string()
    .regex(SCHEMA_PATTERN, { error: "LEASEWATCH_CONSOLE_SCHEMA must be a lower-case identifier: a-z, 0-9, _ (max 63)" })
    .optional(),
});
const ZAuditKeyEnv = z.object({
  LEASEWATCH_AUDIT_KEY: z
    .string({ error: "LEASEWATCH_AUDIT_KEY is required (e.g. `openssl rand -base64 48`)" })
    .min(MIN_AUDIT_KEY_LENGTH, { error: `LEASEWATCH_AUDIT_KEY must be at least ${MIN_AUDIT_KEY_LENGTH} characters (e.g. \`openssl rand -base64 48\`)` }),
});

type Env = Readonly<Record<string, string | undefined>>;

function parseOrThrow<T>(schema: z.ZodType<T>, env: Env): T {
  // Empty strings count as unset.
  const input = Object.fromEntries(
    Object.entries(env).filter(([k, v]) => (k.startsWith("LEASEWATCH_AUDIT_") || k === "LEASEWATCH_CONSOLE_SCHEMA") && v !== undefined && v !== ""),
  );
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw new AuditConfigError(`The audit log is not configured: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  return parsed.data;
}

/** Where the audit log lives (what a migration needs; no key). */
export function parseAuditLocation(env: Env = process.env, stores?: readonly TStoreConfig[]): AuditLocation {
  const e = parseOrThrow(ZAuditEnv, env);
  const firstPostgres = e.LEASEWATCH_AUDIT_URL ? undefined : (stores ?? parseStoresConfig(env as NodeJS.ProcessEnv)).find((s) => s.kind === "postgres");
  const url = e.LEASEWATCH_AUDIT_URL ?? firstPostgres?.url;
  if (url === undefined) {
    throw new AuditConfigError("The audit log is not configured: set LEASEWATCH_AUDIT_URL (no Postgres store is configured to default to)");
  }
  // With the first store's database, the way that store reaches it (through its pooler, if it has one).
  const pooler = e.LEASEWATCH_AUDIT_URL ? e.LEASEWATCH_AUDIT_POOLER : firstPostgres?.kind === "postgres" ? firstPostgres.pooler : undefined;
  return { url, schema: e.LEASEWATCH_AUDIT_SCHEMA ?? e.LEASEWATCH_CONSOLE_SCHEMA ?? DEFAULT_AUDIT_SCHEMA, ...(pooler ? { pooler } : {}) };
}

/**
 * Production must not chain its audit log with the public demo key (anyone holding it
 * can rewrite the log and re-forge the chain). Only the local demo may: LEASEWATCH_DEMO=1
 * with the console and the IdP on this machine. Throws an AuditConfigError saying what to set.
 */
export function assertNoDemoAuditKeyInProduction(env: Env = process.env): void {
  if (env.NODE_ENV !== "production" || env.LEASEWATCH_AUDIT_KEY !== DEMO_AUDIT_KEY) return;
  const onThisMachine = (url: string | undefined) => url !== undefined && URL.canParse(url) && isLoopbackHost(new URL(url).hostname);
  if (env.LEASEWATCH_DEMO === "1" && onThisMachine(env.NEXTAUTH_URL) && onThisMachine(env.OIDC_ISSUER)) return;
  throw new AuditConfigError(
    "Refusing to start in production: LEASEWATCH_AUDIT_KEY is the public demo key, so the audit chain would prove nothing; set LEASEWATCH_AUDIT_KEY to a secret of your own (e.g. `openssl rand -base64 48`)",
  );
}

/** Parse the audit configuration or throw an AuditConfigError that says what to fix. Pure: no caching. */
export function parseAuditConfig(env: Env = process.env, stores?: readonly TStoreConfig[]): AuditConfig {
  const { LEASEWATCH_AUDIT_KEY: key } = parseOrThrow(ZAuditKeyEnv, env);
  return { ...parseAuditLocation(env, stores), key };
}

/**
 * Whether two Postgres URLs name the same database (host, port, database), so an
 * audit entry and a release can share one transaction. Conservative: spellings
 * that differ (localhost vs 127.0.0.1) count as different, which only costs the
 * two-step path, never correctness.
 */
export function isSameDatabase(a: string, b: string): boolean {
  const key = (raw: string) => {
    try {
      const u = new URL(raw);
      const user = decodeURIComponent(u.username) || "postgres";
      const database = decodeURIComponent(u.pathname.replace(/^\//, "")) || user;
      const host = u.searchParams.get("host") ?? u.hostname;
      return `${host.toLowerCase()}:${u.port || "5432"}/${database}`;
    } catch {
      return null;
    }
  };
  const ka = key(a);
  return ka !== null && ka === key(b);
}
