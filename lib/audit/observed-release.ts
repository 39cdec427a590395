/**
 * Force-release of an observed lock (ShedLock row, Redis key, advisory lock's
 * holding backend) with every attempt in the audit log, as for the console's own
 * leases: the role and scope checked again here, `requested` written before the
 * observed system is touched (no entry, no release), the compare-first operation,
 * then its outcome — released, lease_changed (the holder shown no longer holds
 * it), or failed. Entries use the action `force_release` with the observed
 * store's name; `owner` is the holder shown and `detail` says what was done.
 */
import type { TObservedConfig } from "@/lib/observed/config";
import { ObservedReleaseUnavailable, releaseObservedLock } from "@/lib/observed/release";
import type { RecordAfter } from "@/lib/observed/observer";
import type { ObservedReleaseDeps } from "./deps";
import { describeShown, observedReleasePermission, ZObservedReleaseForm, type TObservedReleaseForm } from "@/lib/observed/release-form";
import { hasPermission, isRole, type Role } from "@/lib/auth/roles";
import { describeScope, isResourceInScope, type ViewerScope } from "@/lib/auth/scope";
import { hashedFields, type AuditDraft, type AuditEntry } from "./entry";
import { DEFAULT_PENDING_GRACE_MS, type AuditActor, type RequestMeta, type ResolveResult } from "./force-release";
import type { AuditLog } from "./log";
import type { AuditOutcome } from "./vocabulary";
import { getLogger } from "@/lib/log/logger";

export type { ObservedReleaseDeps } from "./deps";

export interface ObservedReleaseRequest {
  /** From the session, with roles just confirmed by the IdP. */
  actor: AuditActor;
  /** Where the actor's release permission applies. */
  scope: ViewerScope;
  request: RequestMeta;
  /** The form as sent: validated here. */
  form: unknown;
}

export type ObservedRefusal = "forbidden" | "invalid_input" | "not_releasable";

export type ObservedReleaseOutcome =
  | { outcome: "released"; auditId: string; terminated: boolean }
  | { outcome: "lease_changed"; auditId: string }
  | { outcome: "failed"; auditId: string; message: string }
  | { outcome: "refused"; code: ObservedRefusal; auditId: string; message: string; issues?: Array<{ field: string; message: string }> }
  | { outcome: "audit_unavailable"; message: string };

const str = (body: unknown, key: string, max: number): string => {
  const v = typeof body === "object" && body !== null ? (body as Record<string, unknown>)[key] : undefined;
  return typeof v === "string" ? v.slice(0, max) : "";
};

function draft(req: Pick<ObservedReleaseRequest, "actor" | "request">, outcome: AuditOutcome, fields: { store: string; resource: string; owner?: string | null; reason?: string | null; detail?: string | null; resolvesId?: string | null }): AuditDraft {
  return {
    requestId: req.request.requestId,
    actorSub: req.actor.id,
    actorEmail: req.actor.email,
    actorRoles: [...req.actor.roles],
    action: "force_release",
    store: fields.store,
    resource: fields.resource,
    leaseId: null,
    owner: fields.owner ?? null,
    task: null,
    fencingToken: null,
    reason: fields.reason ?? null,
    outcome,
    newHolder: null,
    ip: req.request.ip,
    userAgent: req.request.userAgent,
    resolvesId: fields.resolvesId ?? null,
    detail: fields.detail ?? null,
  };
}

const auditLogger = () => getLogger("audit");

async function append(audit: AuditLog, entry: AuditDraft): Promise<string | null> {
  try {
    return (await audit.append(entry))?.id ?? null;
  } catch (error) {
    auditLogger().error({ error: error instanceof Error ? error.message : String(error) }, "audit log unavailable");
    return null;
  }
}

const AUDIT_UNAVAILABLE = { outcome: "audit_unavailable", message: "The audit log cannot be written right now, so nothing was released. Try again shortly." } as const;

/** The entry of a refusal decided before the form was read (rate limit, stale sign-in, cross-origin): the form's fields as sent. */
export function observedRefusalDraft(
  req: Omit<ObservedReleaseRequest, "scope">,
  outcome: "denied_role" | "reauth_required" | "rate_limited" | "invalid_input",
  detail: string,
): AuditDraft {
  const shown = ZObservedReleaseForm.shape.shown.safeParse(typeof req.form === "object" && req.form !== null ? (req.form as { shown?: unknown }).shown : undefined);
  return draft(req, outcome, {
    store: str(req.form, "store", 64),
    resource: str(req.form, "resource", 512),
    reason: str(req.form, "reason", 500) || null,
    owner: shown.success ? describeShown(shown.data) : null,
    detail: `observed: ${detail}`,
  });
}

/** Records such a refusal; null when the audit log could not take it (the refusal stands either way). */
export async function recordObservedRefusal(
  req: Omit<ObservedReleaseRequest, "scope">,
  outcome: "denied_role" | "reauth_required" | "rate_limited" | "invalid_input",
  detail: string,
  deps: Pick<ObservedReleaseDeps, "getAuditLog">,
): Promise<string | null> {
  const audit = await deps.getAuditLog().catch(() => null);
  if (!audit) return null;
  return append(audit, observedRefusalDraft(req, outcome, detail));
}

/** Validates, checks role and scope, audits, and releases only while the holder shown still holds the lock. Never throws. */
export async function releaseObservedAudited(req: ObservedReleaseRequest, deps: ObservedReleaseDeps): Promise<ObservedReleaseOutcome> {
  let audit: AuditLog;
  try {
    audit = await deps.getAuditLog();
  } catch (error) {
    auditLogger().error({ error: error instanceof Error ? error.message : String(error) }, "audit log unavailable");
    return { ...AUDIT_UNAVAILABLE };
  }
  const loose = { store: str(req.form, "store", 64), resource: str(req.form, "resource", 512), reason: str(req.form, "reason", 500) || null };
  const refuse = async (code: ObservedRefusal, outcome: AuditOutcome, message: string, detail: string, extra: { owner?: string | null; issues?: Array<{ field: string; message: string }> } = {}): Promise<ObservedReleaseOutcome> => {
    const id = await append(audit, draft(req, outcome, { ...loose, owner: extra.owner ?? null, detail: `observed: ${detail}` }));
    if (!id) return { ...AUDIT_UNAVAILABLE };
    return { outcome: "refused", code, auditId: id, message, ...(extra.issues ? { issues: extra.issues } : {}) };
  };

  const parsed = ZObservedReleaseForm.safeParse(req.form);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 10).map((i) => ({ field: i.path.map(String).join(".") || "body", message: i.message }));
    return refuse("invalid_input", "invalid_input", "The form has problems; nothing was released.", issues.map((i) => `${i.field}: ${i.message}`).join("; "), { issues });
  }
  const form = parsed.data;
  const shownText = describeShown(form.shown);
  const at = { store: form.store, resource: form.resource, reason: form.reason, owner: shownText };
  const permission = observedReleasePermission(form.shown.kind);
  const roles = req.actor.roles.filter(isRole) as Role[];
  if (!hasPermission(roles, permission)) {
    const what = permission === "observed:terminate" ? "Terminating an advisory lock's holder" : "Force release";
    return refuse("forbidden", "denied_role", `${what} needs the operator role; your current roles do not include it. Nothing was released.`, `needs ${permission}`, { owner: shownText });
  }
  if (!isResourceInScope(req.scope, form.resource)) {
    const where = describeScope(req.scope);
    return refuse("forbidden", "denied_role", `Your operator role covers only ${where}; this lock is outside it. Nothing was released.`, `outside the operator scope (${where})`, { owner: shownText });
  }
  const config = deps.getObserved(form.store);
  if (!config) {
    return refuse("invalid_input", "invalid_input", `This console observes no store called "${form.store}".`, `unknown observed store "${form.store}"`, { owner: shownText, issues: [{ field: "store", message: "unknown observed store" }] });
  }
  if (config.kind !== form.shown.kind) {
    return refuse("invalid_input", "invalid_input", `Store "${form.store}" holds ${config.kind} locks, not ${form.shown.kind}.`, `kind mismatch: ${form.shown.kind} on a ${config.kind} store`, { owner: shownText });
  }
  if (!config.releaseUrl) {
    return refuse("not_releasable", "invalid_input", `Store "${form.store}" is observed read-only (no releaseUrl configured), so its locks cannot be released from the console.`, "no releaseUrl configured", { owner: shownText });
  }

  await resolveNowAndThen(deps, audit);
  const what = form.shown.kind === "pg-advisory" ? `terminate backend pid ${form.shown.pid} (started ${form.shown.backendStart})` : form.shown.kind === "shedlock" ? "set lock_until to now" : form.shown.type === "zset" ? "remove the member" : "delete the key";
  const requestedId = await append(audit, draft(req, "requested", { ...at, detail: `observed ${config.kind}: ${what}` }));
  if (!requestedId) return { ...AUDIT_UNAVAILABLE };
  inFlight.add(requestedId);
  try {
    return await releaseAfterRequested(req, config, form, at, requestedId, audit);
  } finally {
    inFlight.delete(requestedId);
  }
}

async function releaseAfterRequested(
  req: ObservedReleaseRequest,
  config: TObservedConfig,
  form: TObservedReleaseForm,
  at: { store: string; resource: string; reason: string; owner: string },
  requestedId: string,
  audit: AuditLog,
): Promise<ObservedReleaseOutcome> {

  let outcome: ObservedReleaseOutcome;
  let entry: AuditDraft;
  try {
    const verdict = await releaseObservedLock(config, form.resource, form.shown);
    if (verdict.done) {
      entry = draft(req, "released", { ...at, resolvesId: requestedId, detail: `observed ${config.kind}: ${form.shown.kind === "pg-advisory" ? `terminated backend pid ${form.shown.pid}` : "released"}` });
      outcome = { outcome: "released", auditId: "", terminated: form.shown.kind === "pg-advisory" };
    } else {
      entry = draft(req, "lease_changed", { ...at, resolvesId: requestedId, detail: `observed ${config.kind}: the holder shown no longer holds the lock; nothing changed` });
      outcome = { outcome: "lease_changed", auditId: "" };
    }
  } catch (error) {
    const known = error instanceof ObservedReleaseUnavailable;
    if (!known) auditLogger().error({ store: config.name, error: error instanceof Error ? error.message : String(error) }, "observed force-release failed");
    const detail = known ? error.message : "the observed store did not answer or refused the command; it is unknown whether it applied";
    entry = draft(req, "failed", { ...at, resolvesId: requestedId, detail: `observed ${config.kind}: ${detail}` });
    outcome = { outcome: "failed", auditId: "", message: known ? `${error.message}. Nothing was released.` : `Store "${config.name}" did not complete the force-release; the audit log has the details.` };
  }
  const outcomeId = await append(audit, entry);
  return { ...outcome, auditId: outcomeId ?? requestedId };
}

/** Requested entries whose release is running in this process: never resolved from outside meanwhile. */
const inFlight = new Set<string>();
const RESOLVE_INTERVAL_MS = 30_000;
let lastResolveAt = Number.NEGATIVE_INFINITY;

/** Open entries get their outcome before a new release (at most every RESOLVE_INTERVAL_MS). */
async function resolveNowAndThen(deps: ObservedReleaseDeps, audit: AuditLog): Promise<void> {
  if (performance.now() - lastResolveAt < RESOLVE_INTERVAL_MS) return;
  lastResolveAt = performance.now();
  await resolvePendingObservedReleases(deps, audit).catch((error: unknown) =>
    auditLogger().error({ error: error instanceof Error ? error.message : String(error) }, "resolving open observed force-release entries failed"),
  );
}

/**
 * Whether the observer's holder is the holder an entry names (describeShown):
 * ShedLock and Redis holders read the same; an advisory holder is named by its
 * pid (`pid 4711 · billing-job` in the record, `pid 4711 · backend started …` shown).
 */
function isShownHolder(config: TObservedConfig, shown: string, holder: string | null): boolean {
  if (holder === null) return false;
  if (config.kind !== "pg-advisory") return holder === shown;
  const pid = /^pid (\d+) ·/.exec(shown)?.[1];
  return pid !== undefined && holder.split(", ").some((h) => h.startsWith(`pid ${pid} ·`));
}

/**
 * What the record says happened after an open entry was requested. The observed
 * systems keep no record of a release, so the outcome is `failed` (it did not
 * complete as recorded) and the detail says what is known: the holder shown
 * still held the lock at a later sample (nothing was released), or the observer
 * saw it end (by this request or on its own: unknown), or there is no later sample.
 */
function outcomeDetail(config: TObservedConfig, entry: AuditEntry, record: RecordAfter | null): string {
  const lead = `observed ${config.kind}: resolved after the console stopped before recording the outcome`;
  const shown = entry.owner ?? "";
  const ended = record?.changes.find((c) => (c.kind === "gone" || c.kind === "holder_changed") && isShownHolder(config, shown, c.previousHolder));
  if (ended) return `${lead}; the observer saw the holder shown ${ended.kind === "gone" ? "let go" : `replaced by ${ended.holder}`} at ${ended.at.toISOString()}: whether this request released it is unknown`;
  if (record?.sampledAt && record.sampledAt.getTime() > entry.at.getTime() && isShownHolder(config, shown, record.holder)) {
    return `${lead}; the holder shown still held the lock at the observer's sample of ${record.sampledAt.toISOString()}: nothing was released`;
  }
  if (record?.sampledAt && record.sampledAt.getTime() > entry.at.getTime()) return `${lead}; the observer no longer saw the holder shown at ${record.sampledAt.toISOString()}: whether this request released it is unknown`;
  return `${lead}; the observer has no sample after the request: whether it applied is unknown`;
}

/**
 * Gives each observed force-release entry left `requested` (its process died
 * between the entry and the outcome) an outcome once it is older than the grace
 * period, from the observer's record of that lock after the request. Entries of
 * the console's own stores are left to resolvePendingForceReleases. Safe to run
 * from several processes: an entry gets at most one outcome (unique index).
 */
export async function resolvePendingObservedReleases(deps: ObservedReleaseDeps, audit?: AuditLog): Promise<ResolveResult> {
  const log = audit ?? (await deps.getAuditLog());
  const pending = await log.pendingRequests(deps.pendingGraceMs ?? DEFAULT_PENDING_GRACE_MS);
  const result: ResolveResult = { resolved: [], open: [] };
  for (const entry of pending) {
    const config = deps.getObserved(entry.store);
    if (!config || inFlight.has(entry.id)) continue;
    try {
      const record = deps.readRecordAfter ? await deps.readRecordAfter({ store: entry.store, resource: entry.resource, after: entry.at }) : null;
      const written = await log.append({ ...hashedFields(entry), newHolder: null, outcome: "failed", resolvesId: entry.id, detail: outcomeDetail(config, entry, record) });
      if (written) result.resolved.push({ id: entry.id, outcome: "failed" });
    } catch (error) {
      auditLogger().warn({ auditId: entry.id, error: error instanceof Error ? error.message : String(error) }, "observed audit entry stays open");
      result.open.push(entry.id);
    }
  }
  return result;
}
