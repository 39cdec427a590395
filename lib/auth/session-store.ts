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
import { parseStoresConfig } from "@/lib/console/config";
import { EnvError } from "@/lib/env";
import { createSchemaInTransaction } from "@/lib/lease/postgres/transaction";

export const DEFAULT_CONSOLE_SCHEMA = "leasewatch_console";
const ZSchemaName = z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, { error: "LEASEWATCH_CONSOLE_SCHEMA must be a lower-case SQL identifier" });

export interface ConsoleDbConfig {
  url: string;
  schema: string;
}

/** Where the console keeps its own tables. Throws EnvError when there is nowhere to keep them. */
export function resolveConsoleDbConfig(env: Readonly<Record<string, string | undefined>> = process.env): ConsoleDbConfig {
  const parsedSchema = ZSchemaName.safeParse(env.LEASEWATCH_CONSOLE_SCHEMA || DEFAULT_CONSOLE_SCHEMA);
  if (!parsedSchema.success) throw new EnvError(parsedSchema.error.issues[0]?.message ?? "LEASEWATCH_CONSOLE_SCHEMA is invalid");
  const explicit = env.LEASEWATCH_AUDIT_URL?.trim();
  if (explicit) {
    if (!/^postgres(ql)?:\/\//.test(explicit)) throw new EnvError("LEASEWATCH_AUDIT_URL must be a postgres:// URL");
    return { url: explicit, schema: parsedSchema.data };
  }
  const firstPostgres = parseStoresConfig(env as NodeJS.ProcessEnv).find((store) => store.kind === "postgres");
  if (!firstPostgres) {
    throw new EnvError("Sessions need a PostgreSQL database: set LEASEWATCH_AUDIT_URL (no Postgres store is configured to default to)");
  }
  return { url: firstPostgres.url, schema: parsedSchema.data };
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

export class SessionStore {
  private readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly s: string;
  private migrated: Promise<void> | undefined;

  constructor(
    private readonly options: { schema: string; secret: string; url?: string; pool?: pg.Pool },
  ) {
    this.s = quote(ZSchemaName.parse(options.schema));
    this.ownsPool = options.pool === undefined;
    this.pool = options.pool ?? new pg.Pool({ connectionString: options.url, max: 4, connectionTimeoutMillis: 5_000, statement_timeout: 5_000 });
    // A database restart must not crash the console; the failing query reports it.
    this.pool.on("error", () => {});
  }

  /**
   * Creates the table on first use. Applied in one transaction under an advisory lock
   * of its own (distinct from the lease stores' and the audit log's), recorded in
   * `console_sessions_migrations` so it never collides with another component's ledger.
   */
  migrate(): Promise<void> {
    this.migrated ??= this.runMigrations().catch((error: unknown) => {
      this.migrated = undefined;
      throw error;
    });
    return this.migrated;
  }

  private async runMigrations(): Promise<void> {
    const s = this.s;
    // Fast path (and the only one a restricted role can take): already up to date.
    const current = await this.pool
      .query<{ version: number }>(`SELECT max(version) AS version FROM ${s}.console_sessions_migrations`)
      .then((r) => r.rows[0]?.version ?? 0)
      .catch(() => 0);
    const latest = Math.max(...MIGRATIONS.map((m) => m.version));
    if (current >= latest) return;
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1::text))", [`leasewatch.console-sessions.migrate:${this.options.schema}`]);
      await createSchemaInTransaction(client, this.options.schema);
      await client.query(`CREATE TABLE IF NOT EXISTS ${s}.console_sessions_migrations (
        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())`);
      const done = new Set((await client.query<{ version: number }>(`SELECT version FROM ${s}.console_sessions_migrations`)).rows.map((r) => r.version));
      for (const migration of MIGRATIONS) {
        if (done.has(migration.version)) continue;
        await client.query(migration.sql(s));
        await client.query(`INSERT INTO ${s}.console_sessions_migrations (version, name) VALUES ($1::int, $2::text)`, [migration.version, migration.name]);
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
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

  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }
}
