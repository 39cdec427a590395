import { z } from "zod";
import { LeaseError } from "../errors";
import type { Lease, LeaseEvent, LeaseEventKind, LeaseSort } from "../types";

/** Raw rows become domain types here; nothing outside the store sees a row. */

type Row = Record<string, unknown>;

const asDate = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const asText = (v: unknown): string => String(v);
const asTextOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** Columns may carry a prefix (`l_`, `e_`) when one row holds a lease and an event. */
export function hasColumn(row: Row, column: string, prefix = ""): boolean {
  const v = row[`${prefix}${column}`];
  return v !== null && v !== undefined;
}

export function toLease(store: string, row: Row, prefix = ""): Lease {
  const c = (name: string) => row[`${prefix}${name}`];
  return {
    store,
    resource: asText(c("resource")),
    leaseId: asText(c("lease_id")),
    owner: asText(c("owner")),
    task: asText(c("task")),
    fencingToken: asText(c("fencing_token")),
    acquiredAt: asDate(c("acquired_at")),
    expiresAt: asDate(c("expires_at")),
    ttlMs: Number(c("ttl_ms")),
    renewedAt: asDate(c("renewed_at")),
    renewals: Number(c("renewals")),
  };
}

export function toEvent(store: string, row: Row, prefix = ""): LeaseEvent {
  const c = (name: string) => row[`${prefix}${name}`];
  const event: LeaseEvent = {
    id: asText(c("id")),
    store,
    at: asDate(c("at")),
    kind: asText(c("kind")) as LeaseEventKind,
    resource: asText(c("resource")),
    leaseId: asTextOrNull(c("lease_id")),
    owner: asTextOrNull(c("owner")),
    task: asTextOrNull(c("task")),
    fencingToken: asTextOrNull(c("fencing_token")),
  };
  const holdMs = c("hold_ms");
  if (holdMs !== null && holdMs !== undefined) event.holdMs = Number(holdMs);
  const actor = c("actor");
  if (actor !== null && actor !== undefined) event.actor = String(actor);
  const reason = c("reason");
  if (reason !== null && reason !== undefined) event.reason = String(reason);
  const detail = c("detail");
  if (detail !== null && detail !== undefined && typeof detail === "object") {
    // Non-uuid lease ids presented to renew/report live in detail; lift them back into leaseId.
    const record = { ...(detail as Record<string, unknown>) };
    if (event.leaseId === null && typeof record.leaseId === "string") event.leaseId = record.leaseId;
    if (typeof record.leaseId === "string") delete record.leaseId;
    // jsonb keeps the timestamptz as "…+00:00" with microseconds; events carry ISO UTC with ms, as Redis's do.
    if (typeof record.expiredAt === "string" && Number.isFinite(Date.parse(record.expiredAt))) record.expiredAt = new Date(record.expiredAt).toISOString();
    if (Object.keys(record).length > 0) event.detail = record;
  }
  return event;
}

/**
 * A lease just granted by acquire, from its slim reply (lease_id, owner, task,
 * fencing_token, acquired_at, expires_at) plus what the caller asked for. A grant
 * (fresh or takeover) always starts with renewed_at = acquired_at and no renewals.
 */
export function toGrantedLease(store: string, resource: string, ttlMs: number, row: Row): Lease {
  const acquiredAt = asDate(row.acquired_at);
  return {
    store,
    resource,
    leaseId: asText(row.lease_id),
    owner: asText(row.owner),
    task: asText(row.task),
    fencingToken: asText(row.fencing_token),
    acquiredAt,
    expiresAt: asDate(row.expires_at),
    ttlMs,
    renewedAt: new Date(acquiredAt.getTime()),
    renewals: 0,
  };
}

/**
 * The `released` event (or `expired`, after a deadline loss) from the release statement's slim row (id, at, owner, task,
 * fencing_token, hold_ms, renewals) plus what the caller presented: the same
 * LeaseEvent toEvent() builds from the stored row.
 */
export function toReleasedEvent(store: string, resource: string, leaseId: string, row: Row): LeaseEvent {
  return {
    id: asText(row.id),
    store,
    at: asDate(row.at),
    kind: row.kind === "expired" ? "expired" : "released",
    resource,
    leaseId,
    owner: asTextOrNull(row.owner),
    task: asTextOrNull(row.task),
    fencingToken: asTextOrNull(row.fencing_token),
    holdMs: Number(row.hold_ms),
    detail: row.kind === "expired" ? { renewals: Number(row.renewals), recordedBy: "release_after_deadline" } : { renewals: Number(row.renewals) },
  };
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Lease ids we issue are uuids; anything else presented to us cannot match one, and must not reach a uuid cast. */
export function uuidOrNull(value: string | undefined): string | null {
  return value !== undefined && UUID_PATTERN.test(value) ? value.toLowerCase() : null;
}

/**
 * Exclusive upper bound for a prefix range: the prefix with its last code point
 * bumped (skipping the surrogate block). null when no bound exists (all U+10FFFF).
 */
export function prefixUpperBound(prefix: string): string | null {
  const points = Array.from(prefix);
  while (points.length > 0) {
    let next = points.pop()!.codePointAt(0)! + 1;
    if (next >= 0xd800 && next <= 0xdfff) next = 0xe000;
    if (next <= 0x10ffff) return points.join("") + String.fromCodePoint(next);
  }
  return null;
}

// --- cursors: opaque base64url JSON, validated on the way back in -----------------------

const ZListCursor = z.strictObject({
  v: z.literal(1),
  sort: z.enum(["expires", "held_longest", "newest"]),
  micros: z.string().regex(/^-?[0-9]{1,20}$/),
  resource: z.string().min(1).max(2048),
});
const ZEventCursor = z.strictObject({
  v: z.literal(1),
  order: z.enum(["asc", "desc"]),
  id: z.string().regex(/^[0-9]{1,19}$/),
});

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
}

function decode<S extends z.ZodType>(schema: S, cursor: string, what: string): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw new LeaseError(`${what}: cursor is not one this store issued`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new LeaseError(`${what}: cursor is not one this store issued`);
  return parsed.data;
}

export function encodeListCursor(sort: LeaseSort, micros: string, resource: string): string {
  return encode({ v: 1, sort, micros, resource });
}

export function decodeListCursor(cursor: string, sort: LeaseSort): { micros: string; resource: string } {
  const parsed = decode(ZListCursor, cursor, "list");
  if (parsed.sort !== sort) throw new LeaseError(`list: cursor was issued for sort "${parsed.sort}", not "${sort}"`);
  return { micros: parsed.micros, resource: parsed.resource };
}

export function encodeEventCursor(order: "asc" | "desc", id: string): string {
  return encode({ v: 1, order, id });
}

export function decodeEventCursor(cursor: string, order: "asc" | "desc"): string {
  const parsed = decode(ZEventCursor, cursor, "events");
  if (parsed.order !== order) throw new LeaseError(`events: cursor was issued for order "${parsed.order}", not "${order}"`);
  return parsed.id;
}
