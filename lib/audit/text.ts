/**
 * The one normalisation of every text an audit entry holds. An entry's hash is
 * computed over its fields, and Postgres stores only well-formed UTF-8 without
 * NUL: text it would change (a lone surrogate becomes U+FFFD) or refuse (NUL)
 * must be made what it will store before the hash is taken, or the entry would
 * not verify, or not be written at all. Idempotent: normalising twice changes nothing.
 */
import type { AuditHolder } from "./chain";
import type { AuditDraft } from "./entry";

/** What the lease library accepts as a force-release reason, so the store's event and the audit entry hold the same text. */
export const MAX_REASON_BYTES = 1000;

// C0 controls, DEL and C1 controls: shown as U+FFFD, so an entry says something unprintable was sent.
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
const CONTROLS_BUT_TAB_AND_NEWLINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
const REPLACEMENT = "\ufffd";

export interface AuditTextOptions {
  /** Longest UTF-8 encoding kept; longer text is cut on a code-point boundary. */
  maxBytes: number;
  /** Keep newlines and tabs (line ends become \n); otherwise each becomes a space. */
  multiline?: boolean;
}

/** The longest prefix of well-formed `text` whose UTF-8 encoding fits `maxBytes`. */
export function clipUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Back off continuation bytes (10xxxxxx) so the cut falls between two code points.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString("utf8");
}

export function auditText(value: string, options: AuditTextOptions): string {
  let text = value.toWellFormed().replace(/\r\n?/g, "\n");
  text = options.multiline ? text.replace(CONTROLS_BUT_TAB_AND_NEWLINE, REPLACEMENT) : text.replace(/[\n\t]/g, " ").replace(CONTROLS, REPLACEMENT);
  return clipUtf8(text, options.maxBytes);
}

function orNull(value: string | null | undefined, options: AuditTextOptions): string | null {
  return value === null || value === undefined ? null : auditText(String(value), options);
}

/**
 * A force-release reason as both the audit entry and the store's event keep it:
 * line ends as \n, tabs kept, no other control, no surrounding whitespace, at most
 * MAX_REASON_BYTES. Everything else (inner spaces, any script) stays as typed.
 */
export function normaliseReason(reason: string): string {
  return auditText(reason.trim(), { maxBytes: MAX_REASON_BYTES, multiline: true }).trim();
}

/** Byte limits per field: generous for what the console writes, bounded for what a caller sends. */
const LIMITS = {
  requestId: 128,
  actorSub: 256,
  actorEmail: 256,
  role: 128,
  store: 64,
  resource: 1024,
  leaseId: 128,
  owner: 256,
  task: 256,
  fencingToken: 64,
  ip: 64,
  userAgent: 1024,
  resolvesId: 32,
  detail: 2000,
  holderField: 1024,
} as const;
const MAX_ROLES = 64;

function normaliseHolder(holder: AuditHolder | null): AuditHolder | null {
  if (holder === null) return null;
  const one = (v: string) => auditText(String(v), { maxBytes: LIMITS.holderField });
  return { leaseId: one(holder.leaseId), owner: one(holder.owner), task: one(holder.task), fencingToken: one(holder.fencingToken), expiresAt: one(holder.expiresAt) };
}

/** Every text field of a draft, normalised: what is hashed is exactly what Postgres stores. */
export function normaliseDraft(draft: AuditDraft): AuditDraft {
  const line = (value: string | null | undefined, maxBytes: number) => orNull(value, { maxBytes });
  return {
    requestId: line(draft.requestId, LIMITS.requestId),
    actorSub: line(draft.actorSub, LIMITS.actorSub) ?? "(unknown)",
    actorEmail: line(draft.actorEmail, LIMITS.actorEmail),
    actorRoles: (Array.isArray(draft.actorRoles) ? draft.actorRoles : []).slice(0, MAX_ROLES).map((r) => auditText(String(r), { maxBytes: LIMITS.role })),
    action: draft.action,
    store: line(draft.store, LIMITS.store) ?? "",
    resource: line(draft.resource, LIMITS.resource) ?? "",
    leaseId: line(draft.leaseId, LIMITS.leaseId),
    owner: line(draft.owner, LIMITS.owner),
    task: line(draft.task, LIMITS.task),
    fencingToken: line(draft.fencingToken, LIMITS.fencingToken),
    reason: draft.reason === null || draft.reason === undefined ? null : normaliseReason(String(draft.reason)),
    outcome: draft.outcome,
    newHolder: normaliseHolder(draft.newHolder),
    ip: line(draft.ip, LIMITS.ip),
    userAgent: line(draft.userAgent, LIMITS.userAgent),
    resolvesId: line(draft.resolvesId, LIMITS.resolvesId),
    detail: orNull(draft.detail, { maxBytes: LIMITS.detail, multiline: true }),
  };
}
