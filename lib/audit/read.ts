/**
 * Server-only: reading the audit log for the /audit page, its exports and the
 * lease page's force-release history. Every read is bounded (keyset pages over
 * the primary key, filters served by indexes) and parameterised.
 */
import { z } from "zod";
import { quoteSchema } from "@leasewatch/lease/internal";
import { AUDIT_ACTIONS, AUDIT_OUTCOMES } from "./chain";
import type { AuditLog } from "./log";
import { toAuditEntry, type AuditEntry } from "./entry";
import { SELECT_COLUMNS } from "./sql";

export type { AuditEntry } from "./entry";

export interface AuditFilter {
  /** Subject or email, exact. */
  actor?: string;
  /** Resource prefix (byte-wise). */
  prefix?: string;
  outcome?: string;
  /** force_release, token_create or token_revoke. */
  action?: string;
  store?: string;
  /** Exact resource (the lease page's history). */
  resource?: string;
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  to?: Date;
  /**
   * The reader's scope: only entries whose resource starts with one of these
   * (an empty list matches nothing), and no API token entries (their resource
   * is a token name). Absent: every entry.
   */
  scopePrefixes?: readonly string[];
}
export interface AuditListQuery extends AuditFilter {
  limit: number;
  cursor?: string;
}
export interface AuditPage {
  items: AuditEntry[];
  nextCursor?: string;
}

export const MAX_AUDIT_PAGE = 1000;
const EXPORT_BATCH = 1000;

/** A filter the log cannot serve (bad outcome, cursor, range); its message is fit for a 400. */
export class AuditQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AuditQueryError";
  }
}

const ZText = (field: string, max: number) =>
  z
    .string()
    .min(1, { error: `${field} must not be empty` })
    .max(max, { error: `${field} must be at most ${max} characters` });
const ZAuditFilter = z.strictObject({
  actor: ZText("actor", 256).optional(),
  prefix: ZText("prefix", 512).optional(),
  outcome: z.enum(AUDIT_OUTCOMES, { error: `outcome must be one of ${AUDIT_OUTCOMES.join(", ")}` }).optional(),
  action: z.enum(AUDIT_ACTIONS, { error: `action must be one of ${AUDIT_ACTIONS.join(", ")}` }).optional(),
  store: ZText("store", 64).optional(),
  resource: ZText("resource", 1024).optional(),
  from: z.date({ error: "from must be a time" }).optional(),
  to: z.date({ error: "to must be a time" }).optional(),
  scopePrefixes: z.array(ZText("scope prefix", 512)).max(100).optional(),
});
const ZListQuery = ZAuditFilter.extend({
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_AUDIT_PAGE, { error: `limit must be between 1 and ${MAX_AUDIT_PAGE}` }),
  cursor: z.string().max(200).optional(),
});
const ZCursor = z.strictObject({ v: z.literal(1), id: z.string().regex(/^[0-9]{1,19}$/) });

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AuditQueryError(`${issue?.path.length ? `${issue.path.join(".")}: ` : ""}${issue?.message ?? "invalid audit query"}`);
  }
  return parsed.data;
}

function encodeCursor(id: string): string {
  return Buffer.from(JSON.stringify({ v: 1, id })).toString("base64url");
}
function decodeCursor(cursor: string): string {
  try {
    return parse(ZCursor, JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))).id;
  } catch {
    throw new AuditQueryError("cursor is not valid; start again from the first page");
  }
}

/** LIKE pattern for "starts with": the prefix's own % _ and \ are matched literally. */
function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Newest first; `beforeId` continues below an id. */
function buildListSql(schema: string, filter: AuditFilter, beforeId: string | undefined, limit: number): { text: string; values: unknown[] } {
  const a = quoteSchema(schema);
  const values: unknown[] = [];
  const add = (value: unknown, cast: string) => {
    values.push(value);
    return `$${values.length}::${cast}`;
  };
  const where: string[] = [];
  if (filter.actor !== undefined) {
    const p = add(filter.actor, "text");
    where.push(`(a.actor_sub = ${p} OR a.actor_email = ${p})`);
  }
  if (filter.prefix !== undefined) where.push(`a.resource LIKE ${add(likePrefix(filter.prefix), "text")}`);
  if (filter.scopePrefixes !== undefined) {
    const anyOf = filter.scopePrefixes.map((p) => `a.resource LIKE ${add(likePrefix(p), "text")}`);
    where.push(anyOf.length > 0 ? `(${anyOf.join(" OR ")})` : "false");
    // A token entry's resource is the token's name, not a lease: a scope prefix matching it
    // (scope "billing" and a token "billing-tenant_2") says nothing about whose token it is.
    where.push(`a.action NOT IN ('token_create', 'token_revoke')`);
  }
  if (filter.outcome !== undefined) where.push(`a.outcome = ${add(filter.outcome, "text")}`);
  if (filter.action !== undefined) where.push(`a.action = ${add(filter.action, "text")}`);
  if (filter.store !== undefined) where.push(`a.store = ${add(filter.store, "text")}`);
  if (filter.resource !== undefined) where.push(`a.resource = ${add(filter.resource, "text")}`);
  if (filter.from !== undefined) where.push(`a.at >= ${add(filter.from, "timestamptz")}`);
  if (filter.to !== undefined) where.push(`a.at < ${add(filter.to, "timestamptz")}`);
  if (beforeId !== undefined) where.push(`a.id < ${add(beforeId, "bigint")}`);
  const text = `
    SELECT ${SELECT_COLUMNS} FROM ${a}.audit_log a
    ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
    ORDER BY a.id DESC
    LIMIT ${add(limit, "int")}`;
  return { text, values };
}

async function resolveLog(audit?: AuditLog): Promise<AuditLog> {
  if (audit) return audit;
  const { getProcessAuditLog } = await import("./context");
  return getProcessAuditLog();
}

/** One page of entries, newest first. Throws AuditQueryError for a filter it cannot serve. */
export async function listAuditEntries(query: AuditListQuery, audit?: AuditLog): Promise<AuditPage> {
  const q = parse(ZListQuery, query);
  const { limit, cursor, ...filter } = q;
  const beforeId = cursor !== undefined ? decodeCursor(cursor) : undefined;
  const log = await resolveLog(audit);
  const { text, values } = buildListSql(log.schema, filter, beforeId, limit + 1);
  const { rows } = await log.pool.query(text, values);
  const items = rows.slice(0, limit).map(toAuditEntry);
  const last = items[items.length - 1];
  return rows.length > limit && last ? { items, nextCursor: encodeCursor(last.id) } : { items };
}

/** The columns of an export, in order. */
export const EXPORT_COLUMNS = [
  "id",
  "at",
  "requestId",
  "actorSub",
  "actorEmail",
  "actorRoles",
  "action",
  "store",
  "resource",
  "leaseId",
  "owner",
  "task",
  "fencingToken",
  "reason",
  "outcome",
  "newHolder",
  "ip",
  "userAgent",
  "resolvesId",
  "detail",
  "prevHash",
  "hash",
] as const satisfies ReadonlyArray<keyof AuditEntry>;

function exportValue(entry: AuditEntry, column: (typeof EXPORT_COLUMNS)[number]): string {
  const v = entry[column];
  if (v === null) return "";
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.join(" ");
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/**
 * RFC 4180 quoting; a cell a spreadsheet would run as a formula gets a leading
 * apostrophe, including one whose formula sign follows spaces or line breaks
 * (spreadsheets skip those), or that starts with a tab, CR or LF.
 */
export function csvCell(value: string): string {
  const safe = /^[\s]*[=+\-@]|^[\t\r\n]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

function jsonEntry(entry: AuditEntry): string {
  return JSON.stringify({ ...entry, at: entry.at.toISOString() });
}

/**
 * Every entry matching the filter, newest first, as CSV or a JSON array,
 * read in keyset batches as the consumer pulls: memory stays flat however
 * many entries there are. Throws AuditQueryError at once for a bad filter.
 */
export function streamAuditEntries(filter: AuditFilter, format: "csv" | "json", audit?: AuditLog): ReadableStream<Uint8Array> {
  // Validated now, so a bad filter is a 400 before any byte is sent.
  const f = parse(ZAuditFilter, filter);
  const encoder = new TextEncoder();
  let log: AuditLog | undefined;
  let beforeId: string | undefined;
  let started = false;
  let done = false;
  let count = 0;
  return new ReadableStream<Uint8Array>({
    async start() {
      log = await resolveLog(audit);
    },
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(encoder.encode(format === "csv" ? `${EXPORT_COLUMNS.join(",")}\r\n` : "["));
      }
      if (done) return;
      const { text, values } = buildListSql(log!.schema, f, beforeId, EXPORT_BATCH);
      const { rows } = await log!.pool.query(text, values);
      const entries = rows.map(toAuditEntry);
      const chunk =
        format === "csv"
          ? entries.map((e) => `${EXPORT_COLUMNS.map((c) => csvCell(exportValue(e, c))).join(",")}\r\n`).join("")
          : entries.map((e, i) => `${count + i === 0 ? "\n" : ",\n"}${jsonEntry(e)}`).join("");
      count += entries.length;
      if (chunk) controller.enqueue(encoder.encode(chunk));
      beforeId = entries[entries.length - 1]?.id;
      if (entries.length < EXPORT_BATCH) {
        done = true;
        if (format === "json") controller.enqueue(encoder.encode("\n]\n"));
        controller.close();
      }
    },
  });
}
