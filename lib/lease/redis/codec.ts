import { LeaseError } from "../errors";
import { LEASE_EVENT_KINDS, type Lease, type LeaseEvent, type LeaseEventKind } from "../types";

/**
 * Conversions between the store's raw shapes (hash fields, stream entries,
 * script replies) and the contract types. Nothing outside lib/lease/redis sees
 * the raw shapes.
 */

/** Lease fields as the Lua and hashes hold them: every value a decimal or text string. */
export type RawLease = Partial<Record<"leaseId" | "owner" | "task" | "token" | "acquiredAt" | "expiresAt" | "ttlMs" | "renewedAt" | "renewals", string>>;

/** Event as the Lua returns it; `id` is the stream id `<ms>-<seq>`. */
export type RawEvent = Partial<Record<"id" | "kind" | "resource" | "leaseId" | "owner" | "task" | "token" | "holdMs" | "actor" | "reason" | "detail", string>>;

const KIND_SET = new Set<string>(LEASE_EVENT_KINDS);

export function toLease(store: string, resource: string, raw: RawLease): Lease | null {
  if (!raw.leaseId) return null;
  const acquiredAt = Number(raw.acquiredAt ?? 0);
  return {
    store,
    resource,
    leaseId: raw.leaseId,
    owner: raw.owner ?? "",
    task: raw.task ?? "",
    fencingToken: raw.token ?? "0",
    acquiredAt: new Date(acquiredAt),
    expiresAt: new Date(Number(raw.expiresAt ?? 0)),
    ttlMs: Number(raw.ttlMs ?? 0),
    renewedAt: new Date(Number(raw.renewedAt ?? acquiredAt)),
    renewals: Number(raw.renewals ?? 0),
  };
}

/** Public event id: the stream id plus the bucket, so ids from different buckets never collide and still sort. */
export function formatEventId(streamId: string, bucket: number): string {
  return `${streamId}-b${bucket}`;
}

export interface EventPosition {
  ms: number;
  seq: number;
  bucket: number;
}

export function parseEventId(id: string): EventPosition | null {
  const match = /^(\d{1,16})-(\d{1,20})-b(\d{1,4})$/.exec(id);
  if (!match) return null;
  return { ms: Number(match[1]), seq: Number(match[2]), bucket: Number(match[3]) };
}

export function parseStreamId(streamId: string): { ms: number; seq: number } {
  // indexOf/slice rather than split: the projector parses every event id it folds.
  const dash = streamId.indexOf("-");
  if (dash === -1) return { ms: Number(streamId), seq: 0 };
  const end = streamId.indexOf("-", dash + 1);
  return { ms: Number(streamId.slice(0, dash)), seq: Number(streamId.slice(dash + 1, end === -1 ? undefined : end)) };
}

/** Total order of events inside one store: stream time, stream sequence, bucket. */
export function compareEventPositions(a: EventPosition, b: EventPosition): number {
  return a.ms - b.ms || a.seq - b.seq || a.bucket - b.bucket;
}

function parseDetail(detail: string | undefined): Record<string, unknown> | undefined {
  if (!detail) return undefined;
  try {
    const value: unknown = JSON.parse(detail);
    // cjson encodes an empty Lua table as {} — keep only real objects with keys.
    if (value && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length > 0) {
      return value as Record<string, unknown>;
    }
  } catch {
    // A detail we cannot read is dropped rather than failing the whole page.
  }
  return undefined;
}

export function toLeaseEvent(store: string, bucket: number, raw: RawEvent): LeaseEvent | null {
  if (!raw.id || !raw.kind || !KIND_SET.has(raw.kind) || raw.resource === undefined) return null;
  const event: LeaseEvent = {
    id: formatEventId(raw.id, bucket),
    store,
    at: new Date(parseStreamId(raw.id).ms),
    kind: raw.kind as LeaseEventKind,
    resource: raw.resource,
    leaseId: raw.leaseId ?? null,
    owner: raw.owner ?? null,
    task: raw.task ?? null,
    fencingToken: raw.token ?? null,
  };
  if (raw.holdMs !== undefined) event.holdMs = Number(raw.holdMs);
  if (raw.actor !== undefined) event.actor = raw.actor;
  if (raw.reason !== undefined) event.reason = raw.reason;
  const detail = parseDetail(raw.detail);
  // The script writes an expiry's time as epoch ms; events carry ISO UTC, as Postgres's do.
  if (detail && typeof detail.expiredAt === "string" && /^\d{1,16}$/.test(detail.expiredAt)) detail.expiredAt = new Date(Number(detail.expiredAt)).toISOString();
  if (detail) event.detail = detail;
  return event;
}

type EventField = Exclude<keyof RawEvent, "id">;

/**
 * An event's fields in the order the scripts write them, each with the letter that names it in a
 * packed stream entry. A packed entry is one field-value pair: the field is the letters of the
 * fields present, in this order, and the value is their values, each followed by the unit
 * separator (byte 31, which validated text and cjson's output never contain). Redis parses and
 * sends two strings an entry, and a reader decodes two, where a pair per field made a dozen.
 */
export const EVENT_FIELD_LETTERS: readonly (readonly [EventField, string])[] = [
  ["kind", "k"],
  ["resource", "r"],
  ["leaseId", "l"],
  ["owner", "o"],
  ["task", "t"],
  ["token", "n"],
  ["holdMs", "h"],
  ["actor", "a"],
  ["reason", "s"],
  ["detail", "d"],
];
const FIELD_BY_LETTER = new Map<string, EventField>(EVENT_FIELD_LETTERS.map(([field, letter]) => [letter, field]));
const SEPARATOR = "\x1f";

/** An event's stream entry fields, packed (see EVENT_FIELD_LETTERS): `[letters, values]`. */
export function rawToStreamFields(raw: RawEvent): [string, string] {
  let letters = "";
  let values = "";
  for (const [field, letter] of EVENT_FIELD_LETTERS) {
    const value = raw[field];
    if (value === undefined) continue;
    letters += letter;
    values += value + SEPARATOR;
  }
  return [letters, values];
}

/**
 * A stream entry `[id, [field, value, …]]` as a RawEvent: packed (one pair, see
 * EVENT_FIELD_LETTERS) or, as earlier versions wrote them, a pair per field (an event has at
 * least a kind and a resource, so such an entry never has just one pair).
 */
export function streamEntryToRaw(entry: [string, string[]]): RawEvent {
  const [id, fields] = entry;
  const raw: Record<string, string> = { id };
  if (fields.length === 2) {
    const letters = fields[0]!;
    const values = fields[1]!;
    let start = 0;
    for (let i = 0; i < letters.length; i++) {
      const end = values.indexOf(SEPARATOR, start);
      const field = FIELD_BY_LETTER.get(letters[i]!);
      if (end === -1 || !field) break;
      raw[field] = values.slice(start, end);
      start = end + 1;
    }
    return raw as RawEvent;
  }
  for (let i = 0; i + 1 < fields.length; i += 2) raw[fields[i]!] = fields[i + 1]!;
  return raw as RawEvent;
}

/** A script reply: a flat array `[status, …]` (see scripts.ts). Anything else is a store error. */
export function readScriptReply(reply: unknown, operation: string): unknown[] {
  if (!Array.isArray(reply) || typeof reply[0] !== "string") throw new LeaseError(`redis ${operation}: unexpected reply`, "store_error");
  return reply;
}

/** `[field, value, field, value, …]` (HGETALL order) as a record; anything not a pair of strings is skipped. */
export function pairsToRecord(flat: unknown): Record<string, string> {
  const record: Record<string, string> = {};
  if (!Array.isArray(flat)) return record;
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const field: unknown = flat[i];
    const value: unknown = flat[i + 1];
    if (typeof field === "string" && typeof value === "string") record[field] = value;
  }
  return record;
}

/** Events in a script reply: each `[id, field, value, …]`, the stream entry under its id. */
export function replyEventsToRaw(events: unknown): RawEvent[] {
  const raws: RawEvent[] = [];
  if (!Array.isArray(events)) return raws;
  for (const event of events as unknown[]) {
    if (!Array.isArray(event) || typeof event[0] !== "string") continue;
    const raw: Record<string, string> = { id: event[0] };
    for (let i = 1; i + 1 < event.length; i += 2) {
      const field: unknown = event[i];
      const value: unknown = event[i + 1];
      if (typeof field === "string" && typeof value === "string") raw[field] = value;
    }
    raws.push(raw as RawEvent);
  }
  return raws;
}

/** Cursors are opaque to callers: base64url JSON that only this store reads. */
export function encodeCursor(value: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
}

export function decodeCursor(cursor: string, what: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through to the error below
  }
  throw new LeaseError(`${what}: cursor is not one this store issued`);
}

/**
 * Redis orders members byte-wise (memcmp of UTF-8), which is code point order.
 * JS compares UTF-16 code units, which differs only when a surrogate (a code
 * point above U+FFFF) meets U+E000..U+FFFF; shifting surrogates above that
 * range restores code point order without encoding either string.
 */
export function compareBytes(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}
