/**
 * Server-only read model of `/audit` and the lease page's force-release history:
 * the audit log's entries (lib/audit/read) as plain JSON views, filtered by the
 * URL's parameters. The log lives in Postgres whatever the stores are.
 */
import { AuditQueryError, listAuditEntries, streamAuditEntries, type AuditEntry, type AuditFilter } from "@/lib/audit/read";
import type { ViewerScope } from "@/lib/auth/scope";
import { parseAuditParams, type AuditParams, type SearchParamsInput } from "@/lib/console/shared/params";
import type { AuditEntryView, AuditView, ReadResult } from "@/lib/console/shared/views";

export function reshapeAuditEntry(entry: AuditEntry): AuditEntryView {
  return {
    id: entry.id,
    at: entry.at.toISOString(),
    requestId: entry.requestId,
    actorId: entry.actorSub,
    actorEmail: entry.actorEmail,
    actorRoles: entry.actorRoles,
    action: entry.action,
    store: entry.store,
    resource: entry.resource,
    leaseId: entry.leaseId,
    owner: entry.owner,
    task: entry.task,
    fencingToken: entry.fencingToken,
    reason: entry.reason,
    outcome: entry.outcome,
    newHolder: entry.newHolder
      ? { leaseId: entry.newHolder.leaseId, owner: entry.newHolder.owner, task: entry.newHolder.task, fencingToken: entry.newHolder.fencingToken }
      : null,
    detail: entry.detail,
    ip: entry.ip,
    userAgent: entry.userAgent,
  };
}

/** The URL's filters, within the reader's scope (entries for resources under their prefixes only). */
function toFilter(params: AuditParams, scope: ViewerScope): AuditFilter {
  return {
    ...(scope.kind === "prefixes" ? { scopePrefixes: scope.prefixes } : {}),
    ...(params.actor ? { actor: params.actor } : {}),
    ...(params.prefix ? { prefix: params.prefix } : {}),
    ...(params.resource ? { resource: params.resource } : {}),
    ...(params.store ? { store: params.store } : {}),
    ...(params.outcome ? { outcome: params.outcome } : {}),
    ...(params.action ? { action: params.action } : {}),
    ...(params.range ? { from: params.range.from, to: params.range.to } : {}),
  };
}

export async function listAuditFromSearch(input: SearchParamsInput, scope: ViewerScope, nowMs = Date.now()): Promise<ReadResult<AuditView>> {
  const parsed = parseAuditParams(input, nowMs);
  if (!parsed.ok) return parsed;
  const params = parsed.params;
  try {
    const page = await listAuditEntries({ ...toFilter(params, scope), limit: params.limit, ...(params.cursor ? { cursor: params.cursor } : {}) });
    return { ok: true, view: { readAt: new Date(nowMs).toISOString(), items: page.items.map(reshapeAuditEntry), nextCursor: page.nextCursor ?? null } };
  } catch (error) {
    if (error instanceof AuditQueryError) return { ok: false, problem: { param: "filter", message: `The audit filter is not valid: ${error.message}.` } };
    throw error;
  }
}

export const AUDIT_EXPORT_FORMATS = ["csv", "json"] as const;
export type AuditExportFormat = (typeof AUDIT_EXPORT_FORMATS)[number];

/** Every entry the URL's filters match, streamed in batches (paging parameters are ignored). */
export function streamAuditFromSearch(input: SearchParamsInput, format: AuditExportFormat, scope: ViewerScope, nowMs = Date.now()): ReadResult<ReadableStream<Uint8Array>> {
  const parsed = parseAuditParams(input, nowMs);
  if (!parsed.ok) return parsed;
  return { ok: true, view: streamAuditEntries(toFilter(parsed.params, scope), format) };
}
