import { createHmac } from "node:crypto";
import { AUDIT_ACTIONS, AUDIT_OUTCOMES, type AuditAction, type AuditOutcome } from "./vocabulary";

/**
 * The audit log's HMAC chain. Each entry's hash is HMAC(key, prev_hash ||
 * canonical JSON of its fields), and prev_hash is the hash of the entry before
 * it, so changing, removing or reordering an entry breaks the chain at that
 * point. The row id is not hashed: it is only the storage position, and the
 * chain itself says what came before what (which is how a reordering is told
 * apart from a change).
 */

/** prev_hash of the first entry. */
export const GENESIS_HASH = "0".repeat(64);

export { AUDIT_ACTIONS, AUDIT_OUTCOMES, type AuditAction, type AuditOutcome };

/** The holder a `lease_changed` entry found instead of the lease shown. */
export interface AuditHolder {
  leaseId: string;
  owner: string;
  task: string;
  fencingToken: string;
  expiresAt: string;
}

/** Every hashed field of an entry, exactly as stored (null when absent). */
export interface AuditFields {
  at: Date;
  requestId: string | null;
  actorSub: string;
  actorEmail: string | null;
  actorRoles: string[];
  action: AuditAction;
  store: string;
  resource: string;
  leaseId: string | null;
  owner: string | null;
  task: string | null;
  fencingToken: string | null;
  reason: string | null;
  outcome: AuditOutcome;
  newHolder: AuditHolder | null;
  ip: string | null;
  userAgent: string | null;
  /** The `requested` entry this one gives the outcome of. */
  resolvesId: string | null;
  detail: string | null;
}

/** JSON with object keys sorted at every level, so the same value always has the same text (jsonb reorders keys). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value ?? null);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

export function hashEntry(key: string, prevHash: string, fields: AuditFields): string {
  return createHmac("sha256", key).update(prevHash).update(canonicalJson(fields)).digest("hex");
}
