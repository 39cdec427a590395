/**
 * API bearer tokens (`<schema>.api_tokens`, in the console database next to the
 * audit log and the sessions). Only the SHA-256 of a token is stored: the token is
 * 32 random bytes, so a fast hash is enough (nothing to brute-force) and a database
 * dump holds no usable credential.
 *
 * Lookups are cached (refreshed after TOKEN_CACHE_MS, in the background until
 * TOKEN_STALE_MS, one query per token at a time) so the hot path does not query
 * Postgres per request, while a revoked or expired token is refused within a second.
 * A bearer with no row is remembered for UNKNOWN_TOKEN_CACHE_MS, apart from the
 * tokens that exist: a flood of made-up bearers neither queries Postgres per request
 * nor pushes live tokens out of their cache. A new token is never in that cache: its
 * 32 random bytes cannot have been presented before it was created.
 */
import { hash, randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { z } from "zod";
import { ConsoleTableStore, readConsoleTablesStatus } from "@/lib/server/console-tables";
import { internalLockKey, ZStoreName, zSqlIdentifier, type MigrationStatus } from "@leasewatch/lease/internal";

export const API_ACTIONS = ["acquire", "renew", "release", "read", "report"] as const;
export type ApiAction = (typeof API_ACTIONS)[number];

/** Revocation and expiry take effect within this (the brief's bound is 1 s). */
export const TOKEN_CACHE_MS = 500;
/**
 * Between TOKEN_CACHE_MS and this age a cached answer is still used while one background
 * lookup refreshes it, so requests do not wait for the database every half second; past it
 * they wait. Ages count from when the lookup was sent, so a revocation is seen within this.
 */
export const TOKEN_STALE_MS = 900;
/** How long a bearer that matched no token is answered from memory. */
export const UNKNOWN_TOKEN_CACHE_MS = 5_000;
/** Entries per cache (tokens found, bearers not found); the least recently used goes first. */
const MAX_CACHED = 10_000;
export const TOKEN_PREFIX = "lwk_";
export const DEFAULT_RATE_PER_SEC = 200;
export const DEFAULT_MAX_CONCURRENT = 32;

const ZSchemaName = zSqlIdentifier("schema");

/** A tenant prefix: printable, non-empty, bounded like a resource. */
export const ZTenantPrefix = z
  .string()
  .min(1, { error: "a prefix must not be empty" })
  .max(256, { error: "a prefix must be at most 256 characters" })
  .regex(/^[\x21-\x7e]+$/, { error: "a prefix must be printable ASCII without spaces" });

export const ZNewToken = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, { error: "name must be 1-64 chars of A-Z, a-z, 0-9, '.', '_' or '-'" }),
  prefixes: z.array(ZTenantPrefix).min(1, { error: "give at least one prefix" }).max(32),
  stores: z.array(ZStoreName).min(1, { error: "give at least one store" }).max(32),
  actions: z.array(z.enum(API_ACTIONS)).min(1, { error: "give at least one action" }),
  expiresAt: z.date(),
  ratePerSec: z.number().int().min(1).max(100_000).default(DEFAULT_RATE_PER_SEC),
  maxConcurrent: z.number().int().min(1).max(10_000).default(DEFAULT_MAX_CONCURRENT),
  createdBy: z.string().min(1).max(256),
});
export type TNewToken = z.input<typeof ZNewToken>;

export interface ApiToken {
  id: string;
  name: string;
  prefixes: string[];
  stores: string[];
  actions: ApiAction[];
  ratePerSec: number;
  maxConcurrent: number;
  createdAt: Date;
  createdBy: string;
  expiresAt: Date;
  revokedAt: Date | null;
}

interface TokenRow {
  id: string;
  name: string;
  prefixes: string[];
  stores: string[];
  actions: string[];
  rate_per_sec: number;
  max_concurrent: number;
  created_at: Date;
  created_by: string;
  expires_at: Date;
  revoked_at: Date | null;
}

const COLUMNS = "id::text AS id, name, prefixes, stores, actions, rate_per_sec, max_concurrent, created_at, created_by, expires_at, revoked_at";

function toToken(row: TokenRow): ApiToken {
  return {
    id: row.id,
    name: row.name,
    prefixes: row.prefixes,
    stores: row.stores,
    actions: row.actions.filter((a): a is ApiAction => (API_ACTIONS as readonly string[]).includes(a)),
    ratePerSec: row.rate_per_sec,
    maxConcurrent: row.max_concurrent,
    createdAt: row.created_at,
    createdBy: row.created_by,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
  };
}

/** Expiry and revocation are checked on every request, cached or not. */
function isLive(token: ApiToken | null, now: number): token is ApiToken {
  return token !== null && token.revokedAt === null && token.expiresAt.getTime() > now;
}

export function hashToken(token: string): Buffer {
  return hash("sha256", token, "buffer");
}

const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: (s: string) => string }> = [
  {
    version: 1,
    name: "api tokens",
    sql: (s) => `
      CREATE TABLE ${s}.api_tokens (
        id             uuid PRIMARY KEY,
        name           text        NOT NULL UNIQUE,
        token_hash     bytea       NOT NULL UNIQUE,
        prefixes       text[]      NOT NULL,
        stores         text[]      NOT NULL,
        actions        text[]      NOT NULL,
        rate_per_sec   integer     NOT NULL,
        max_concurrent integer     NOT NULL,
        created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
        created_by     text        NOT NULL,
        expires_at     timestamptz NOT NULL,
        revoked_at     timestamptz
      );
    `,
  },
  {
    version: 2,
    name: "revocation is final",
    // A revoked token must stay revoked whoever holds UPDATE on revoked_at (the console's role does):
    // the only change a row may ever get is revoked_at going from NULL to a time.
    sql: (s) => `
      CREATE FUNCTION ${s}.api_tokens_revoke_only() RETURNS trigger
      LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
      BEGIN
        IF OLD.revoked_at IS NOT NULL OR NEW.revoked_at IS NULL
           OR (NEW.id, NEW.name, NEW.token_hash, NEW.prefixes, NEW.stores, NEW.actions, NEW.rate_per_sec, NEW.max_concurrent, NEW.created_at, NEW.created_by, NEW.expires_at)
              IS DISTINCT FROM
              (OLD.id, OLD.name, OLD.token_hash, OLD.prefixes, OLD.stores, OLD.actions, OLD.rate_per_sec, OLD.max_concurrent, OLD.created_at, OLD.created_by, OLD.expires_at)
        THEN
          RAISE EXCEPTION 'api_tokens: a token can only be revoked, once; nothing else changes' USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
      END
      $fn$;
      CREATE TRIGGER api_tokens_revoke_only BEFORE UPDATE ON ${s}.api_tokens
        FOR EACH ROW EXECUTE FUNCTION ${s}.api_tokens_revoke_only();
    `,
  },
];

/** A Map kept in order of use: reading an entry moves it to the end, and the first entry goes when it is full. */
class LruCache<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly max: number) {}

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

/** A pool or one transaction's connection. */
export type Queryable = Pick<pg.Pool | pg.PoolClient, "query">;

const TOKENS_LEDGER = "api_tokens_migrations";

/** What the token table's migrations would apply in `schema`, read without changing anything. */
export function tokenTablesStatus(pool: pg.Pool, schema: string): Promise<MigrationStatus> {
  return readConsoleTablesStatus(pool, { schema: ZSchemaName.parse(schema), ledger: TOKENS_LEDGER, migrations: MIGRATIONS });
}

export class TokenStore extends ConsoleTableStore {
  private readonly s: string;
  private readonly cache = new LruCache<{ token: ApiToken; at: number }>(MAX_CACHED);
  /** Bearer hashes that matched no row, with when that was asked. */
  private readonly unknown = new LruCache<number>(MAX_CACHED);
  /** Lookups in flight by token hash: concurrent requests with the same bearer share one query. */
  private readonly lookups = new Map<string, Promise<ApiToken | null>>();

  /** Creates the table on first use (migrate()), under an advisory lock of its own and a ledger of its own. */
  constructor(options: { schema: string; url?: string; pool?: pg.Pool; pooler?: "transaction" }) {
    const schema = ZSchemaName.parse(options.schema);
    super({ ...options, schema }, { ledger: TOKENS_LEDGER, lockKey: internalLockKey("api-tokens.migrate", schema), migrations: MIGRATIONS });
    this.s = `"${schema}"`;
  }

  /**
   * Creates a token and returns it in clear text: the only time it exists outside the caller's hands.
   * `db`: a transaction's connection, so the token commits together with its audit entry.
   */
  async create(input: TNewToken, db: Queryable = this.pool): Promise<{ token: string; record: ApiToken }> {
    const data = ZNewToken.parse(input);
    await this.migrate();
    const token = TOKEN_PREFIX + randomBytes(32).toString("base64url");
    const result = await db.query<TokenRow>(
      `INSERT INTO ${this.s}.api_tokens (id, name, token_hash, prefixes, stores, actions, rate_per_sec, max_concurrent, created_by, expires_at)
       VALUES ($1::uuid, $2::text, $3::bytea, $4::text[], $5::text[], $6::text[], $7::int, $8::int, $9::text, $10::timestamptz)
       RETURNING ${COLUMNS}`,
      [randomUUID(), data.name, hashToken(token), data.prefixes, data.stores, data.actions, data.ratePerSec, data.maxConcurrent, data.createdBy, data.expiresAt],
    );
    const row = result.rows[0];
    if (!row) throw new Error("token insert returned no row");
    return { token, record: toToken(row) };
  }

  /**
   * The newest 1000 tokens; with `within`, only tokens whose every prefix starts with one of those
   * prefixes (the filter is in the query, so the 1000 are the newest of those, not of all tokens).
   */
  async list(options: { within?: readonly string[] } = {}): Promise<ApiToken[]> {
    await this.migrate();
    const where =
      options.within === undefined ? "" : "WHERE NOT EXISTS (SELECT 1 FROM unnest(prefixes) p WHERE NOT EXISTS (SELECT 1 FROM unnest($1::text[]) w WHERE starts_with(p, w)))";
    const result = await this.pool.query<TokenRow>(
      `SELECT ${COLUMNS} FROM ${this.s}.api_tokens ${where} ORDER BY created_at DESC, id LIMIT 1000`,
      options.within === undefined ? [] : [options.within],
    );
    return result.rows.map(toToken);
  }

  /** Revokes by name; returns whether a live token was revoked (revoking twice is a no-op) and which. */
  async revoke(name: string, db: Queryable = this.pool): Promise<{ revoked: boolean; token?: ApiToken }> {
    return this.revokeWhere("name = $1::text", name, db);
  }

  /** Revokes by id (what the console sends); same answer as revoke(). */
  async revokeById(id: string, db: Queryable = this.pool): Promise<{ revoked: boolean; token?: ApiToken }> {
    return this.revokeWhere("id = $1::uuid", id, db);
  }

  /** The token with this id, revoked or not; null when there is none. */
  async get(id: string, db: Queryable = this.pool): Promise<ApiToken | null> {
    await this.migrate();
    const result = await db.query<TokenRow>(`SELECT ${COLUMNS} FROM ${this.s}.api_tokens WHERE id = $1::uuid`, [id]);
    return result.rows[0] ? toToken(result.rows[0]) : null;
  }

  async getByName(name: string, db: Queryable = this.pool): Promise<ApiToken | null> {
    await this.migrate();
    const result = await db.query<TokenRow>(`SELECT ${COLUMNS} FROM ${this.s}.api_tokens WHERE name = $1::text`, [name]);
    return result.rows[0] ? toToken(result.rows[0]) : null;
  }

  private async revokeWhere(where: "name = $1::text" | "id = $1::uuid", value: string, db: Queryable): Promise<{ revoked: boolean; token?: ApiToken }> {
    await this.migrate();
    const result = await db.query<TokenRow>(
      `UPDATE ${this.s}.api_tokens SET revoked_at = clock_timestamp() WHERE ${where} AND revoked_at IS NULL RETURNING ${COLUMNS}`,
      [value],
    );
    const row = result.rows[0];
    return row ? { revoked: true, token: toToken(row) } : { revoked: false };
  }

  /**
   * The live token for a bearer value, or null (unknown, revoked or expired). Expiry is
   * checked on every call, not only when the cache is refreshed.
   */
  async authenticate(bearer: string, now = Date.now()): Promise<ApiToken | null> {
    const cached = this.authenticateCached(bearer, now);
    if (cached !== undefined) return cached;
    const token = await this.lookUp(hash("sha256", bearer, "hex"));
    return isLive(token, now) ? token : null;
  }

  /**
   * authenticate() without waiting for the database: the answer when the bearer is malformed or
   * was looked up less than TOKEN_STALE_MS ago (starting a background refresh past
   * TOKEN_CACHE_MS), undefined when only authenticate() can tell. Lets the API's hot path skip
   * a promise and a store timeout per request.
   */
  authenticateCached(bearer: string, now = Date.now()): ApiToken | null | undefined {
    if (!bearer.startsWith(TOKEN_PREFIX) || bearer.length > 128) return null;
    // One-shot hash straight to hex: this runs on every API request.
    const key = hash("sha256", bearer, "hex");
    const unknownAt = this.unknown.get(key);
    if (unknownAt !== undefined && now - unknownAt < UNKNOWN_TOKEN_CACHE_MS) return null;
    const cached = this.cache.get(key);
    if (!cached || now - cached.at >= TOKEN_STALE_MS) return undefined;
    // A failed refresh is retried by the next request; past TOKEN_STALE_MS requests wait and see the error.
    if (now - cached.at >= TOKEN_CACHE_MS) this.lookUp(key).catch(() => undefined);
    return isLive(cached.token, now) ? cached.token : null;
  }

  /** One query per token hash at a time; the answer is cached as of when the query was sent. */
  private lookUp(key: string): Promise<ApiToken | null> {
    const pending = this.lookups.get(key);
    if (pending) return pending;
    const sentAt = Date.now();
    const lookup = (async () => {
      await this.migrate();
      const result = await this.pool.query<TokenRow>(`SELECT ${COLUMNS} FROM ${this.s}.api_tokens WHERE token_hash = $1::bytea`, [Buffer.from(key, "hex")]);
      const row = result.rows[0];
      if (!row) {
        this.cache.delete(key);
        this.unknown.set(key, sentAt);
        return null;
      }
      const token = toToken(row);
      this.unknown.delete(key);
      this.cache.set(key, { token, at: sentAt });
      return token;
    })().finally(() => this.lookups.delete(key));
    this.lookups.set(key, lookup);
    return lookup;
  }
}
