import type { AuditAction, AuditFields, AuditHolder, AuditOutcome } from "./chain";

/** One stored audit entry: its hashed fields plus its position and chain links. */
export interface AuditEntry extends AuditFields {
  /** bigint as decimal text. */
  id: string;
  prevHash: string;
  hash: string;
}

/** What a writer supplies; `at` is the audit database's clock, taken under the chain lock. */
export type AuditDraft = Omit<AuditFields, "at">;

/** A row as pg returns it → AuditEntry. */
export function toAuditEntry(row: Record<string, unknown>): AuditEntry {
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    id: String(row.id),
    at: row.at as Date,
    requestId: text(row.request_id),
    actorSub: String(row.actor_sub),
    actorEmail: text(row.actor_email),
    actorRoles: (row.actor_roles as string[] | null) ?? [],
    action: String(row.action) as AuditAction,
    store: String(row.store),
    resource: String(row.resource),
    leaseId: text(row.lease_id),
    owner: text(row.owner),
    task: text(row.task),
    fencingToken: text(row.fencing_token),
    reason: text(row.reason),
    outcome: String(row.outcome) as AuditOutcome,
    newHolder: (row.new_holder as AuditHolder | null) ?? null,
    ip: text(row.ip),
    userAgent: text(row.user_agent),
    resolvesId: text(row.resolves_id),
    detail: text(row.detail),
    prevHash: String(row.prev_hash),
    hash: String(row.hash),
  };
}

/** Only the hashed fields of an entry, in a fresh object (so extra properties never reach the hash). */
export function hashedFields(e: AuditFields): AuditFields {
  return {
    at: e.at,
    requestId: e.requestId,
    actorSub: e.actorSub,
    actorEmail: e.actorEmail,
    actorRoles: [...e.actorRoles],
    action: e.action,
    store: e.store,
    resource: e.resource,
    leaseId: e.leaseId,
    owner: e.owner,
    task: e.task,
    fencingToken: e.fencingToken,
    reason: e.reason,
    outcome: e.outcome,
    newHolder: e.newHolder,
    ip: e.ip,
    userAgent: e.userAgent,
    resolvesId: e.resolvesId,
    detail: e.detail,
  };
}
