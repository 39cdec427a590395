/**
 * Server-side session records (`<schema>.console_sessions`), so a session can be
 * taken away: sign-out revokes the record, and a copied cookie whose record is
 * revoked, missing or past its absolute lifetime is no session at all.
 *
 * The record also holds what the console needs to re-ask the IdP for the user's
 * groups (the access and refresh tokens, encrypted with a key derived from
 * NEXTAUTH_SECRET) and the groups last read, so roles are mapped per request.
 *
 * Lives in the console database: LEASEWATCH_AUDIT_URL, default the first Postgres
 * store's URL; schema LEASEWATCH_CONSOLE_SCHEMA (default `leasewatch_console`).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import pg from "pg";
import { z } from "zod";
import { ConsoleTableStore, readConsoleTablesStatus } from "@/lib/server/console-tables";
import { parseStoresConfig } from "@/lib/server/store-config";
import { EnvError } from "@/lib/auth/env";
import { internalLockKey, zSqlIdentifier, type MigrationStatus } from "@leasewatch/lease/internal";

export const DEFAULT_CONSOLE_SCHEMA = "leasewatch_console";
const ZSchemaName = zSqlIdentifier("LEASEWATCH_CONSOLE_SCHEMA");

export interface ConsoleDbConfig {
  url: string;
  schema: string;
  /** "transaction" when `url` is a pooler in transaction mode (see lib/server/console-db-pool.ts). */
  pooler?: "transaction";
}

const ZPooler = z.literal("transaction", { error: 'LEASEWATCH_AUDIT_POOLER must be "transaction" (or unset for a direct connection)' });

/** Where the console keeps its own tables. Throws EnvError when there is nowhere to keep them. */
export function resolveConsoleDbConfig(env: Readonly<Record<string, string | undefined>> = process.env): ConsoleDbConfig {
  const parsedSchema = ZSchemaName.safeParse(env.LEASEWATCH_CONSOLE_SCHEMA || DEFAULT_CONSOLE_SCHEMA);
  if (!parsedSchema.success) throw new EnvError(parsedSchema.error.issues[0]?.message ?? "LEASEWATCH_CONSOLE_SCHEMA is invalid");
  const explicit = env.LEASEWATCH_AUDIT_URL?.trim();
  if (explicit) {
    if (!/^postgres(ql)?:\/\//.test(explicit)) throw new EnvError("LEASEWATCH_AUDIT_URL must be a postgres:// URL");
    const pooler = env.LEASEWATCH_AUDIT_POOLER?.trim() ? ZPooler.safeParse(env.LEASEWATCH_AUDIT_POOLER.trim()) : null;
    if (pooler && !pooler.success) throw new EnvError(pooler.error.issues[0]!.message);
    return { url: explicit, schema: parsedSchema.data, ...(pooler ? { pooler: pooler.data } : {}) };
  }
  const firstPostgres = parseStoresConfig(env as NodeJS.ProcessEnv).find((store) => store.kind === "postgres");
  if (!firstPostgres) {
    throw new EnvError("Sessions need a PostgreSQL database: set LEASEWATCH_AUDIT_URL (no Postgres store is configured to default to)");
  }
  // The first store's database, reached the same way (through its pooler, if it has one).
  return { url: firstPostgres.url, schema: parsedSchema.data, ...(firstPostgres.pooler ? { pooler: firstPostgres.pooler } : {}) };
}

export interface SessionRecord {
  id: string;
  subject: string;
  signedInAt: Date;
  /** When the IdP last authenticated the user (id token `auth_time`); null when it did not say. */
  authTime: Date | null;
  expiresAt: Date;
  groups: string[];
  groupsCheckedAt: Date;
  accessToken: string | null;
  accessTokenExpiresAt: Date | null;
  refreshToken: string | null;
  revokedAt: Date | null;
}

export interface NewSessionRecord {
  id: string;
  subject: string;
  email: string | null;
  signedInAt: Date;
  authTime: Date | null;
  expiresAt: Date;
  groups: string[];
  accessToken: string | null;
  accessTokenExpiresAt: Date | null;
  refreshToken: string | null;
}

const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: (s: string) => string }> = [
  {
    version: 1,
    name: "console sessions",
    sql: (s) => `
      CREATE TABLE ${s}.console_sessions (
        id                      uuid PRIMARY KEY,
        subject                 text        NOT NULL,
        email                   text,
        signed_in_at            timestamptz NOT NULL,
        auth_time               timestamptz,
        expires_at              timestamptz NOT NULL,
        groups                  text[]      NOT NULL,
        groups_checked_at       timestamptz NOT NULL,
        -- AES-256-GCM under a key derived from NEXTAUTH_SECRET: a database dump alone does not hold usable IdP tokens.
        access_token            text,
        access_token_expires_at timestamptz,
        refresh_token           text,
        revoked_at              timestamptz,
        revoked_reason          text
      );
      CREATE INDEX console_sessions_expires_at_idx ON ${s}.console_sessions (expires_at);
      CREATE INDEX console_sessions_subject_idx ON ${s}.console_sessions (subject);
    `,
  },
];

const quote = (schema: string) => `"${schema}"`;

function deriveKey(secret: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "leasewatch", "console-session-tokens", 32));
}

export function sealToken(plain: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", deriveKey(secret), iv);
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return `v1.${iv.toString("base64url")}.${cipher.getAuthTag().toString("base64url")}.${body.toString("base64url")}`;
}

/** null when the value was sealed under another secret or is damaged: the token is simply unusable. */
export function openToken(sealed: string, secret: string): string | null {
  const [version, iv, tag, body] = sealed.split(".");
  if (version !== "v1" || !iv || !tag || body === undefined) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", deriveKey(secret), Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}

interface SessionRow {
  id: string;
  subject: string;
  signed_in_at: Date;
  auth_time: Date | null;
  expires_at: Date;
  groups: string[];
  groups_checked_at: Date;
  access_token: string | null;
  access_token_expires_at: Date | null;
  refresh_token: string | null;
  revoked_at: Date | null;
}

const SESSIONS_LEDGER = "console_sessions_migrations";

/** What the session table's migrations would apply in `schema`, read without changing anything. */
export function sessionTablesStatus(pool: pg.Pool, schema: string): Promise<MigrationStatus> {
  return readConsoleTablesStatus(pool, { schema: ZSchemaName.parse(schema), ledger: SESSIONS_LEDGER, migrations: MIGRATIONS });
}

export class SessionStore extends ConsoleTableStore {
  private readonly s: string;

  /**
   * The table is created on first use (migrate()): in one transaction under an advisory lock
   * of its own (distinct from the lease stores' and the audit log's), recorded in
   * `console_sessions_migrations` so it never collides with another component's ledger.
   */
  constructor(private readonly options: { schema: string; secret: string; url?: string; pool?: pg.Pool; pooler?: "transaction" }) {
    const schema = ZSchemaName.parse(options.schema);
    super({ ...options, schema }, { ledger: SESSIONS_LEDGER, lockKey: internalLockKey("console-sessions.migrate", schema), migrations: MIGRATIONS });
    this.s = quote(schema);
  }

  private seal(value: string | null): string | null {
    return value === null ? null : sealToken(value, this.options.secret);
  }

  async create(record: NewSessionRecord): Promise<void> {
    await this.migrate();
    await this.pool.query(
      `INSERT INTO ${this.s}.console_sessions
         (id, subject, email, signed_in_at, auth_time, expires_at, groups, groups_checked_at, access_token, access_token_expires_at, refresh_token)
       VALUES ($1::uuid, $2::text, $3::text, $4::timestamptz, $5::timestamptz, $6::timestamptz, $7::text[], $4::timestamptz, $8::text, $9::timestamptz, $10::text)`,
      [
        record.id,
        record.subject,
        record.email,
        record.signedInAt,
        record.authTime,
        record.expiresAt,
        record.groups,
        this.seal(record.accessToken),
        record.accessTokenExpiresAt,
        this.seal(record.refreshToken),
      ],
    );
    // Housekeeping off the request's critical path: records a day past their end are of no use.
    void this.pool.query(`DELETE FROM ${this.s}.console_sessions WHERE expires_at < now() - interval '1 day'`).catch(() => {});
  }

  async get(id: string): Promise<SessionRecord | null> {
    await this.migrate();
    const result = await this.pool.query<SessionRow>(
      `SELECT id, subject, signed_in_at, auth_time, expires_at, groups, groups_checked_at, access_token, access_token_expires_at, refresh_token, revoked_at
         FROM ${this.s}.console_sessions WHERE id = $1::uuid`,
      [id],
    );
    const row = result.rows[0];
    if (!row) return null;
    const open = (v: string | null) => (v === null ? null : openToken(v, this.options.secret));
    return {
      id: row.id,
      subject: row.subject,
      signedInAt: row.signed_in_at,
      authTime: row.auth_time,
      expiresAt: row.expires_at,
      groups: row.groups,
      groupsCheckedAt: row.groups_checked_at,
      accessToken: open(row.access_token),
      accessTokenExpiresAt: row.access_token_expires_at,
      refreshToken: open(row.refresh_token),
      revokedAt: row.revoked_at,
    };
  }

  /** Records groups just read from the IdP, and the tokens when they were refreshed. */
  async updateGroups(
    id: string,
    update: { groups: string[]; checkedAt: Date; tokens?: { accessToken: string; accessTokenExpiresAt: Date | null; refreshToken: string | null } },
  ): Promise<void> {
    const t = update.tokens;
    await this.pool.query(
      `UPDATE ${this.s}.console_sessions
          SET groups = $2::text[], groups_checked_at = $3::timestamptz,
              access_token = COALESCE($4::text, access_token),
              access_token_expires_at = CASE WHEN $4::text IS NULL THEN access_token_expires_at ELSE $5::timestamptz END,
              refresh_token = COALESCE($6::text, refresh_token)
        WHERE id = $1::uuid AND revoked_at IS NULL`,
      [id, update.groups, update.checkedAt, t ? this.seal(t.accessToken) : null, t?.accessTokenExpiresAt ?? null, t ? this.seal(t.refreshToken) : null],
    );
  }

  /** Ends the session for good (sign-out, or the IdP no longer knows it). Returns whether a live record was revoked. */
  async revoke(id: string, reason: string): Promise<boolean> {
    await this.migrate();
    const result = await this.pool.query(
      `UPDATE ${this.s}.console_sessions SET revoked_at = now(), revoked_reason = $2::text,
              access_token = NULL, refresh_token = NULL
        WHERE id = $1::uuid AND revoked_at IS NULL`,
      [id, reason],
    );
    return (result.rowCount ?? 0) > 0;
  }
}
