import type { MeterProvider, TracerProvider } from "@opentelemetry/api";
import type { QueryResultRow } from "pg";
import { z } from "zod";
import { LeaseError } from "./errors";
import { LeaseTelemetry } from "./telemetry";
import type { LeaseEvent, LeaseStore } from "./types";
import { MAX_BIGINT, ZFencingRejectionInput, ZFencingToken, ZLeaseId, ZOwner, ZResource, ZStoreName, ZTask, parseOrThrow, SQL_QUALIFIED_NAME } from "./validation";

/**
 * Fencing for a Postgres-backed downstream.
 *
 * A lease alone cannot stop a holder that was paused (GC, SIGSTOP, a slow
 * network) past its TTL from writing after someone else took over. The
 * downstream must refuse it: every write carries the lease's fencing token, and
 * the downstream accepts a write only if its token is >= the highest token it
 * has already accepted for that key. Tokens strictly increase per resource, so a
 * stale holder's token is always lower than the new holder's.
 *
 * The check and the write are ONE statement (a guarded upsert), so there is no
 * window between "is my token fresh?" and "write": Postgres row locking on the
 * conflicting key serialises concurrent writers, and ON CONFLICT DO UPDATE
 * compares against the latest committed row, not the statement's snapshot.
 *
 * Equal tokens are accepted: that is the same holder writing again. The fence's
 * limit: a stale holder's write is refused only once a newer holder's write has
 * reached the downstream; before that it is accepted (no one newer has written).
 *
 * **Tokens are only comparable within one store.** Each store draws its own
 * tokens (a Postgres sequence, a Redis microsecond floor), so the same resource
 * name gets unrelated numbers in two stores: a Redis token (~10^15) would always
 * beat a Postgres one (~10^4). So the write names its store (`store`, or
 * `storeName` when no report is wanted) and, by default, the downstream row's key
 * is `<store name>/<key>`: each store fences its own rows. Store names cannot
 * contain "/", so the prefix is unambiguous. Pass `scopeToStore: false` only for a
 * downstream that one store alone will ever write. Each row also records the kind of the
 * store that wrote it (when `store` is given), and a write from a store of another kind under
 * the same name is refused (LeaseError "misconfigured"): two stores configured with one name
 * would otherwise compare tokens of different scales. A table created before that column
 * existed gets it from createFencedTable (run it again; it is idempotent).
 *
 * ```ts
 * await createFencedTable({ pool, table: "billing.invoices_state" });
 * const r = await fencedWrite({ pool, table: "billing.invoices_state", key: "tenant_123",
 *   value: { total: 42 }, fencingToken, resource, store, by: "invoices-db" });
 * if (!r.accepted) stopWork(); // a newer holder exists; `fencing_rejected` was recorded
 * ```
 */

/** The only part of pg.Pool / pg.Client we need, so callers may pass either. */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

const ZTableName = z.string().regex(SQL_QUALIFIED_NAME, {
  error: "table must be [schema.]name of lowercase letters, digits and '_' (max 63 each)",
});
const ZQueryable = z.custom<Queryable>((v) => typeof (v as Queryable | null)?.query === "function", {
  error: "pool must be a pg Pool or Client",
});
// zod runs refinements even after the regex failed, so guard BigInt() here too.
const ZToken = ZFencingToken.refine((t) => /^[0-9]+$/.test(t) && BigInt(t) <= MAX_BIGINT, {
  error: "fencingToken must fit in a Postgres bigint",
});
/**
 * Postgres text and jsonb refuse NUL (and jsonb a lone surrogate): refuse them here,
 * before anything is sent, rather than as a driver error halfway through.
 */
const isStorableText = (s: string) => !s.includes("\u0000") && s.isWellFormed();
function isStorableJson(value: unknown): boolean {
  if (typeof value === "string") return isStorableText(value);
  if (Array.isArray(value)) return value.every(isStorableJson);
  if (value !== null && typeof value === "object") return Object.entries(value).every(([k, v]) => isStorableText(k) && isStorableJson(v));
  return true;
}
const ZKey = z
  .string()
  .min(1, { error: "key must not be empty" })
  .max(1024, { error: "key must be at most 1024 characters" })
  .refine(isStorableText, { error: "key must not contain NUL characters or lone surrogates" });
const ZStoreLike = z.custom<Pick<LeaseStore, "name" | "reportFencingRejection"> & { kind?: string }>(
  (v) => typeof (v as LeaseStore | null)?.reportFencingRejection === "function" && typeof (v as LeaseStore | null)?.name === "string",
  { error: "store must be a LeaseStore" },
);

const ZCreateFencedTable = z.strictObject({ pool: ZQueryable, table: ZTableName, history: z.boolean().optional() });
const ZReadFencedHistory = z.strictObject({
  pool: ZQueryable,
  table: ZTableName,
  /** Only this store's writes, with their keys as the writer gave them (the `<store>/` prefix removed). */
  store: z.union([ZStoreName, z.custom<{ name: string }>((v) => typeof (v as { name?: unknown } | null)?.name === "string")]).optional(),
});
const ZFencedWriteFields = z.strictObject({
  pool: ZQueryable,
  table: ZTableName,
  key: ZKey,
  value: z
    .json({ error: "value must be JSON-serialisable" })
    .refine(isStorableJson, { error: "value must not contain NUL characters or lone surrogates" }),
  fencingToken: ZToken,
  resource: ZResource,
  // The store's own rule for `by`, so a refusal can always be reported.
  by: ZFencingRejectionInput.shape.by,
  /** The store that issued the token; a refusal is reported there as `fencing_rejected`. */
  store: ZStoreLike.optional(),
  /** The issuing store's name, when no `store` is passed (nothing is reported then). */
  storeName: ZStoreName.optional(),
  /** Key the row by `<store name>/<key>` (default true): tokens of different stores never meet. */
  scopeToStore: z.boolean().optional(),
  history: z.boolean().optional(),
  owner: ZOwner.optional(),
  task: ZTask.optional(),
  leaseId: ZLeaseId.optional(),
  /** OpenTelemetry (the `lease.fenced_write` span, round trip and rejections). Default: the global providers. */
  meterProvider: z.custom<MeterProvider>((v) => typeof (v as MeterProvider | null)?.getMeter === "function", { error: "meterProvider must be an OpenTelemetry MeterProvider" }).optional(),
  tracerProvider: z.custom<TracerProvider>((v) => typeof (v as TracerProvider | null)?.getTracer === "function", { error: "tracerProvider must be an OpenTelemetry TracerProvider" }).optional(),
});
const ZFencedWrite = ZFencedWriteFields.superRefine((o, ctx) => {
  if (!o.store && !o.storeName) {
    ctx.addIssue({ code: "custom", path: ["store"], message: "pass the store that issued the token (or storeName): fencing tokens are only comparable within one store" });
  } else if (o.store && o.storeName && o.store.name !== o.storeName) {
    ctx.addIssue({ code: "custom", path: ["storeName"], message: `storeName "${o.storeName}" is not the store's name "${o.store.name}"` });
  }
});

export type CreateFencedTableOptions = z.input<typeof ZCreateFencedTable>;
export type FencedWriteOptions = z.input<typeof ZFencedWrite>;

export type FencedWriteResult =
  | { accepted: true; fencingToken: string }
  | {
      accepted: false;
      /** The highest token the downstream had accepted for this key. */
      seenToken: string;
      /** The `fencing_rejected` event, when a store was given and the report succeeded. */
      event?: LeaseEvent;
      /** Why the report failed, when a store was given and it did. The write was refused either way. */
      reportError?: unknown;
    };

/**
 * The downstream key a store's write goes under: `<store name>/<key>`. Store
 * names never contain "/", so the first "/" always ends the store's name.
 */
export function fencedKey(storeName: string, key: string): string {
  return `${parseOrThrow(ZStoreName, storeName, "fencedKey")}/${key}`;
}

/** Quotes a validated [schema.]table name part by part. */
function quoteTable(table: string): string {
  return table
    .split(".")
    .map((part) => `"${part}"`)
    .join(".");
}

/** `<table>_history` in the same schema. */
function historyTable(table: string): string {
  const parts = table.split(".");
  const name = `${parts.pop()}_history`;
  if (name.length > 63) throw new LeaseError(`fencing: table name too long for a history table (${name})`);
  return quoteTable([...parts, name].join("."));
}

/** DDL for the fenced table (and optional append-only history of accepted writes). Pure. */
export function buildCreateFencedTableSql(table: string, withHistory: boolean): string[] {
  const t = quoteTable(table);
  const sql = [
    `CREATE TABLE IF NOT EXISTS ${t} (
      key text PRIMARY KEY,
      value jsonb NOT NULL,
      fencing_token bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      store_kind text
    )`,
    // The kind of store whose tokens the row holds (null: written with storeName alone).
    `ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS store_kind text`,
  ];
  if (withHistory) {
    sql.push(`CREATE TABLE IF NOT EXISTS ${historyTable(table)} (
      id bigserial PRIMARY KEY,
      key text NOT NULL,
      value jsonb NOT NULL,
      fencing_token bigint NOT NULL,
      written_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`);
  }
  return sql;
}

/**
 * The guarded upsert. One statement: the freshness check, the write, the history
 * row (if any) and the answer. A refused write still "updates" the row to itself
 * (GREATEST / CASE keep the newer token and its value), so RETURNING always
 * reports the row's current token: the one that actually won, read under the row
 * lock. A separate read of the table would see the statement's snapshot instead,
 * which under READ COMMITTED can be older than the row that refused us. A write whose store
 * kind differs from the row's changes nothing and is answered with the row's kind.
 * Params: $1 key, $2 value (json text), $3 token, $4 store kind (null: unknown). Pure.
 */
export function buildFencedWriteSql(table: string, withHistory: boolean): string {
  const t = quoteTable(table);
  const history = withHistory
    ? `, logged AS (
        INSERT INTO ${historyTable(table)} (key, value, fencing_token)
        SELECT key, value, fencing_token FROM written WHERE accepted
      )`
    : "";
  const fresher = `t.fencing_token <= EXCLUDED.fencing_token AND ${SAME_KIND}`;
  return `WITH written AS (
      INSERT INTO ${t} AS t (key, value, fencing_token, updated_at, store_kind)
      VALUES ($1, $2::jsonb, $3::bigint, clock_timestamp(), $4::text)
      ON CONFLICT (key) DO UPDATE
        SET value = CASE WHEN ${fresher} THEN EXCLUDED.value ELSE t.value END,
            updated_at = CASE WHEN ${fresher} THEN EXCLUDED.updated_at ELSE t.updated_at END,
            fencing_token = CASE WHEN ${SAME_KIND} THEN GREATEST(t.fencing_token, EXCLUDED.fencing_token) ELSE t.fencing_token END,
            store_kind = COALESCE(t.store_kind, EXCLUDED.store_kind)
      RETURNING t.key, t.value, t.fencing_token, t.store_kind,
        t.fencing_token = $3::bigint AND ($4::text IS NULL OR t.store_kind = $4::text) AS accepted
    )${history}
    SELECT accepted, fencing_token::text AS token, store_kind FROM written`;
}

/** The row and the write come from the same kind of store, or one of them does not say. */
const SAME_KIND = "(t.store_kind IS NULL OR EXCLUDED.store_kind IS NULL OR t.store_kind = EXCLUDED.store_kind)";

/** Creates the fenced table (idempotent). Returns whether it had to be created. */
export async function createFencedTable(options: CreateFencedTableOptions): Promise<{ table: string; created: boolean }> {
  const { pool, table, history } = parseOrThrow(ZCreateFencedTable, options, "createFencedTable");
  const before = await pool.query<{ exists: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS exists`, [quoteTable(table)]);
  for (const statement of buildCreateFencedTableSql(table, history ?? false)) await pool.query(statement);
  return { table, created: before.rows[0]?.exists !== true };
}

/**
 * Writes `value` under `key` only if `fencingToken` is not older than the newest
 * token already accepted for that key. When refused and a `store` is given,
 * records `fencing_rejected` there (best effort: a failing report is returned,
 * not thrown, because the refusal itself already happened).
 */
export async function fencedWrite(options: FencedWriteOptions): Promise<FencedWriteResult> {
  const o = parseOrThrow(ZFencedWrite, options, "fencedWrite");
  const sql = buildFencedWriteSql(o.table, o.history ?? false);
  // The refine above guarantees one of the two.
  const storeName = o.store?.name ?? o.storeName!;
  const key = o.scopeToStore === false ? o.key : fencedKey(storeName, o.key);
  const kind = o.store?.kind ?? null;
  const params = [key, JSON.stringify(o.value), o.fencingToken, kind];
  const telemetry = new LeaseTelemetry(o.store ?? { name: storeName }, { meterProvider: o.meterProvider, tracerProvider: o.tracerProvider });
  const loading = telemetry.ready();
  if (loading) await loading;
  const query = () => o.pool.query<{ accepted: boolean; token: string; store_kind: string | null }>(sql, params);
  const reply = await telemetry.storeCall("fenced_write", o.resource, query, (r) => (r.rows[0]?.accepted ? "accepted" : "rejected"));
  const row = reply.rows[0];
  if (!row) throw new LeaseError(`fencedWrite: no answer for key "${key}" in ${o.table}`, "fencing_unknown");
  if (row.accepted) return { accepted: true, fencingToken: row.token };
  if (kind !== null && row.store_kind !== null && row.store_kind !== kind) {
    throw new LeaseError(
      `fencedWrite: key "${key}" in ${o.table} holds tokens of a ${row.store_kind} store named "${storeName}", and this write comes from a ${kind} store ` +
        "of the same name; tokens of different stores are not comparable, so give each store its own name",
      "misconfigured",
    );
  }

  telemetry.recordFencingRejection(o.resource);
  const rejected: FencedWriteResult = { accepted: false, seenToken: row.token };
  if (o.store) {
    try {
      rejected.event = await o.store.reportFencingRejection({
        resource: o.resource,
        fencingToken: o.fencingToken,
        seenToken: row.token,
        by: o.by,
        ...(o.owner ? { owner: o.owner } : {}),
        ...(o.task ? { task: o.task } : {}),
        ...(o.leaseId ? { leaseId: o.leaseId } : {}),
      });
    } catch (error) {
      rejected.reportError = error;
    }
  }
  return rejected;
}

/**
 * Accepted writes in order (needs `history: true`). For audits and tests. Keys
 * are as stored (`<store>/<key>`) unless `store` is given: then only that
 * store's writes, under the keys their writers passed.
 */
export async function readFencedHistory(
  options: z.input<typeof ZReadFencedHistory>,
): Promise<Array<{ id: string; key: string; fencingToken: string; value: unknown; writtenAt: Date }>> {
  const { pool, table, store } = parseOrThrow(ZReadFencedHistory, options, "readFencedHistory");
  const prefix = store === undefined ? "" : fencedKey(typeof store === "string" ? store : store.name, "");
  const { rows } = await pool.query<{ id: string; key: string; token: string; value: unknown; written_at: Date }>(
    // ORDER BY h.id, not "id": the output column `id` is text and would sort "10" before "2".
    // left() rather than LIKE: "_" in a store name would be a LIKE wildcard.
    `SELECT h.id::text AS id, substr(h.key, length($1::text) + 1) AS key, h.fencing_token::text AS token, h.value, h.written_at
       FROM ${historyTable(table)} h WHERE left(h.key, length($1::text)) = $1::text ORDER BY h.id`,
    [prefix],
  );
  return rows.map((r) => ({ id: r.id, key: r.key, fencingToken: r.token, value: r.value, writtenAt: r.written_at }));
}
