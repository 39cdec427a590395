/**
 * The audited force-release: the one write the console makes. Framework-free;
 * the caller (a server action or route) has already checked the session and the
 * operator role, and passes the actor from the session, never from the form.
 *
 * Fail closed: no audit entry, no release.
 * - A Postgres store in the audit log's database: the `requested` entry, the
 *   release (through the database's force_release() function) and the outcome
 *   entry are one transaction.
 * - Any other store (Redis, Postgres elsewhere): a `requested` entry is committed
 *   before the release and its outcome after. An entry left `requested` (the
 *   process died in between) is resolved later from the store's own events
 *   (resolvePendingForceReleases), so a release never lacks its entry.
 */
import { z } from "zod";
import type { Lease, LeaseStore } from "@leasewatch/lease";
import { DEFAULT_SCHEMA as DEFAULT_LEASE_SCHEMA, ZLeaseId, ZResource } from "@leasewatch/lease/internal";
import { subjectOfIdentity } from "@/lib/auth/identity";
import { withTimeout } from "@/lib/server/timeout";
import { toPublicStoreError } from "@/lib/server/public-error";
import type { AuditOutcome } from "./chain";
import { isSameDatabase } from "./config";
import type { AuditDeps, AuditTarget } from "./deps";
import { hashedFields, type AuditDraft, type AuditEntry } from "./entry";
import type { AuditLog } from "./log";
import { auditText, normaliseReason } from "./text";
import { getLogger } from "@/lib/log/logger";

export interface AuditActor {
  id: string;
  email: string | null;
  roles: string[];
}
export interface RequestMeta {
  requestId: string;
  ip: string | null;
  userAgent: string | null;
}
export interface ForceReleaseRequest {
  /** From the session, never from the form. */
  actor: AuditActor;
  store: string;
  resource: string;
  leaseId: string;
  reason: string;
  request: RequestMeta;
}
export interface CurrentHolder {
  leaseId: string;
  owner: string;
  task: string;
  fencingToken: string;
  expiresAt: string;
}
export type ForceReleaseOutcome =
  | { outcome: "released"; auditId: string; lease: { owner: string; task: string; fencingToken: string } }
  /** Nothing released: the lease id no longer holds the resource; `current` is whoever does (null: nobody). */
  | { outcome: "lease_changed"; auditId: string; current: CurrentHolder | null }
  /** Fail closed: the audit log could not be written, nothing was released. */
  | { outcome: "audit_unavailable"; message: string }
  | { outcome: "failed"; auditId: string | null; message: string };

export type RefusedOutcome = "denied_role" | "reauth_required" | "rate_limited" | "invalid_input";
export type RecordRefusedResult = { auditId: string } | { outcome: "audit_unavailable"; message: string };

/** Longer than any store command timeout, so an entry is never resolved while its release is still in flight elsewhere. */
export const DEFAULT_PENDING_GRACE_MS = 60_000;
/** How far before the `requested` entry (audit clock) to look for the store's event (store clock). */
const EVENT_LOOKBACK_MS = 10 * 60_000;

const RESOLVE_INTERVAL_MS = 30_000;
const SHOWN_LEASE_TIMEOUT_MS = 2_000;
let lastResolveAt = Number.NEGATIVE_INFINITY;

const ZActor = z.strictObject({
  id: z.string().min(1).max(256),
  email: z.string().min(1).max(256).nullable(),
  roles: z.array(z.string().max(128)).max(64),
});
const ZRequestMeta = z.strictObject({
  requestId: z.string().min(1).max(128),
  ip: z.string().max(64).nullable(),
  userAgent: z.string().max(1024).nullable(),
});
const ZForceReleaseRequest = z.strictObject({
  actor: ZActor,
  store: z.string().min(1).max(64),
  resource: ZResource,
  leaseId: ZLeaseId,
  reason: z
    .string()
    .trim()
    .min(10, { error: "reason must be at least 10 characters" })
    .max(500, { error: "reason must be at most 500 characters" }),
  request: ZRequestMeta,
});

/** The actor as the store's event names it (and as force_release() checks it): the stable id, never the email. */
export function recordedActor(actor: { id: string }): string {
  // Normalised as the entry stores actor_sub, which force_release() compares it with.
  return auditText(actor.id, { maxBytes: 256 });
}

function firstError(error: unknown): unknown {
  return error instanceof AggregateError && error.errors.length > 0 ? error.errors[0] : error;
}

const auditLogger = () => getLogger("audit");

function errorText(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return errorText(error.errors[0]);
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

function holderOf(lease: Lease): CurrentHolder {
  return { leaseId: lease.leaseId, owner: lease.owner, task: lease.task, fencingToken: lease.fencingToken, expiresAt: lease.expiresAt.toISOString() };
}

const textOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

/** The entry every attempt starts from: who, from where, which lease. Input of any shape is recorded (normalised and clipped by the log), never refused. */
function baseDraft(req: ForceReleaseRequest, outcome: AuditOutcome, shown: Lease | null): AuditDraft {
  return {
    requestId: textOrNull(req.request?.requestId),
    actorSub: textOrNull(req.actor?.id) ?? "(unknown)",
    actorEmail: textOrNull(req.actor?.email),
    actorRoles: Array.isArray(req.actor?.roles) ? req.actor.roles.map(String) : [],
    action: "force_release",
    store: String(req.store ?? ""),
    resource: String(req.resource ?? ""),
    leaseId: textOrNull(req.leaseId),
    owner: shown?.owner ?? null,
    task: shown?.task ?? null,
    fencingToken: shown?.fencingToken ?? null,
    reason: textOrNull(req.reason),
    outcome,
    newHolder: null,
    ip: textOrNull(req.request?.ip),
    userAgent: textOrNull(req.request?.userAgent),
    resolvesId: null,
    detail: null,
  };
}

/** The entry of a refused attempt, without the lease shown (for one that is only counted: see refusal-tally.ts). */
export function refusedAttemptDraft(req: ForceReleaseRequest & { outcome: RefusedOutcome; detail?: string }): AuditDraft {
  return { ...baseDraft(req, req.outcome, null), detail: req.detail ?? null };
}

const AUDIT_UNAVAILABLE = { outcome: "audit_unavailable", message: "The audit log cannot be written right now, so nothing was released. Try again shortly." } as const;

function unavailable(error: unknown): { outcome: "audit_unavailable"; message: string } {
  auditLogger().error({ error: errorText(error) }, "audit log unavailable: force-release refused");
  return { ...AUDIT_UNAVAILABLE };
}

/** The dependencies and the migrated audit log, or audit_unavailable (logged): every audited call starts here. */
async function openAuditLog(deps?: AuditDeps): Promise<{ d: AuditDeps; audit: AuditLog } | { outcome: "audit_unavailable"; message: string }> {
  const d = deps ?? (await import("./context")).defaultAuditDeps();
  try {
    return { d, audit: await d.getAuditLog() };
  } catch (error) {
    return unavailable(error);
  }
}

/** Appends in its own transaction; null (logged) when the audit log cannot be written. */
async function tryAppend(audit: AuditLog, draft: AuditDraft): Promise<AuditEntry | null> {
  try {
    const entry = await audit.append(draft);
    if (!entry) auditLogger().error({ resource: draft.resource, outcome: draft.outcome }, "audit entry was not written");
    return entry;
  } catch (error) {
    auditLogger().error({ error: errorText(error), resource: draft.resource, outcome: draft.outcome }, "audit log unavailable: entry not written");
    return null;
  }
}

/** The lease the form showed, if that lease id still holds the resource (best effort: null when unknown). */
async function readShownLease(target: AuditTarget | undefined, resource: string, leaseId: string): Promise<{ current: Lease | null; shown: Lease | null }> {
  if (!target) return { current: null, shown: null };
  // A refusal is recorded promptly even when the store hangs: the lease fields just stay blank.
  const current = await withTimeout(target.store.get(resource), SHOWN_LEASE_TIMEOUT_MS, `store "${target.store.name}"`);
  return { current, shown: current && current.leaseId === leaseId ? current : null };
}

/**
 * Ends the lease only if `leaseId` still holds `resource`, with every attempt in
 * the audit log. Never throws for an expected failure: the result says what happened.
 */
export async function forceReleaseAudited(req: ForceReleaseRequest, deps?: AuditDeps): Promise<ForceReleaseOutcome> {
  const opened = await openAuditLog(deps);
  if ("outcome" in opened) return opened;
  const { d, audit } = opened;
  // Entries a crashed process left `requested` get their outcome before anything new happens
  // (at most every RESOLVE_INTERVAL_MS, so a bulk release or a store that is down costs one look).
  if (performance.now() - lastResolveAt >= RESOLVE_INTERVAL_MS) {
    lastResolveAt = performance.now();
    await resolvePendingForceReleases(d, audit).catch((error: unknown) => auditLogger().error({ error: errorText(error) }, "resolving open audit entries failed"));
  }

  const parsed = ZForceReleaseRequest.safeParse(req);
  const target = parsed.success ? d.getTarget(parsed.data.store) : undefined;
  if (!parsed.success || !target) {
    const detail = parsed.success ? `unknown store "${req.store}"` : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    const entry = await tryAppend(audit, { ...baseDraft(req, "invalid_input", null), detail });
    if (!entry) return { ...AUDIT_UNAVAILABLE };
    return { outcome: "failed", auditId: entry.id, message: `Invalid request: ${detail}` };
  }
  // One reason for both the audit entry and the store's event: force_release() checks they are the same text.
  const r = { ...parsed.data, reason: normaliseReason(parsed.data.reason) };

  // What holds the resource now. A store that cannot answer is a failed attempt (audited), nothing released.
  let current: Lease | null;
  try {
    current = await target.store.get(r.resource);
  } catch (error) {
    // Viewers read the entry: a short reason and a reference; the driver's own words go to the server log.
    const entry = await tryAppend(audit, { ...baseDraft(req, "failed", null), detail: `store read failed: ${toPublicStoreError(firstError(error), r.store)}` });
    if (!entry) return { ...AUDIT_UNAVAILABLE };
    return { outcome: "failed", auditId: entry.id, message: `Store "${r.store}" did not answer, so nothing was released.` };
  }
  if (!current || current.leaseId !== r.leaseId) {
    const holder = current ? holderOf(current) : null;
    const entry = await tryAppend(audit, { ...baseDraft(req, "lease_changed", null), newHolder: holder });
    if (!entry) return { ...AUDIT_UNAVAILABLE };
    return { outcome: "lease_changed", auditId: entry.id, current: holder };
  }

  const config = target.config;
  if (config?.kind === "postgres" && audit.connectionString !== undefined && isSameDatabase(audit.connectionString, config.url)) {
    return releaseInOneTransaction(audit, r, current, config.schema ?? DEFAULT_LEASE_SCHEMA);
  }
  return releaseInTwoSteps(audit, target.store, r, current);
}

/** Same database: `requested`, the release and its outcome commit together, or none of them does. */
async function releaseInOneTransaction(audit: AuditLog, req: ForceReleaseRequest, shown: Lease, leaseSchema: string): Promise<ForceReleaseOutcome> {
  try {
    return await audit.inChain(async (tx) => {
      const requested = (await tx.append(baseDraft(req, "requested", shown)))!;
      const row = await tx.forceRelease({
        requestId: requested.id,
        leaseSchema,
        resource: req.resource,
        leaseId: req.leaseId,
        actor: recordedActor(req.actor),
        reason: req.reason,
      });
      if (row.verdict === "ok") {
        const done = (await tx.append({ ...baseDraft(req, "released", shown), resolvesId: requested.id, detail: row.eventId ? `store event ${row.eventId}` : null }))!;
        return { outcome: "released", auditId: done.id, lease: { owner: shown.owner, task: shown.task, fencingToken: shown.fencingToken } } as const;
      }
      const holder: CurrentHolder | null =
        row.verdict === "lease_changed" && row.leaseId && row.owner && row.task && row.fencingToken && row.expiresAt
          ? { leaseId: row.leaseId, owner: row.owner, task: row.task, fencingToken: row.fencingToken, expiresAt: row.expiresAt.toISOString() }
          : null;
      const changed = (await tx.append({ ...baseDraft(req, "lease_changed", shown), resolvesId: requested.id, newHolder: holder, detail: row.verdict === "expired" ? "the lease had expired" : null }))!;
      return { outcome: "lease_changed", auditId: changed.id, current: holder } as const;
    });
  } catch (error) {
    // Rolled back: neither the entries nor the release happened.
    return unavailable(error);
  }
}

/** Requested entries whose release is running in this process: never resolved from outside meanwhile. */
const inFlight = new Set<string>();

/** Any other store: `requested` committed first (no entry, no release), the outcome after. */
async function releaseInTwoSteps(audit: AuditLog, store: LeaseStore, req: ForceReleaseRequest, shown: Lease): Promise<ForceReleaseOutcome> {
  let requested: AuditEntry;
  try {
    requested = (await audit.append(baseDraft(req, "requested", shown)))!;
  } catch (error) {
    return unavailable(error);
  }
  inFlight.add(requested.id);
  try {
    let draft: AuditDraft;
    let result: ForceReleaseOutcome;
    try {
      const released = await store.forceRelease({ resource: req.resource, leaseId: req.leaseId, actor: recordedActor(req.actor), reason: req.reason });
      if (released.released) {
        draft = { ...baseDraft(req, "released", shown), resolvesId: requested.id, detail: `store event ${released.event.id}` };
        result = { outcome: "released", auditId: "", lease: { owner: shown.owner, task: shown.task, fencingToken: shown.fencingToken } };
      } else {
        const holder = released.current ? holderOf(released.current) : null;
        draft = { ...baseDraft(req, "lease_changed", shown), resolvesId: requested.id, newHolder: holder };
        result = { outcome: "lease_changed", auditId: "", current: holder };
      }
    } catch (error) {
      // Unknown whether the store applied it (the reply may be what was lost): leave the entry
      // `requested` for the resolver, which asks the store's events once the store answers.
      auditLogger().error({ store: store.name, resource: req.resource, auditId: requested.id, error: errorText(error) }, "force-release not confirmed by the store");
      return { outcome: "failed", auditId: requested.id, message: `Store "${store.name}" did not confirm the release; the audit entry will record what happened once the store answers.` };
    }
    try {
      const outcome = await audit.append(draft);
      const auditId = outcome?.id ?? requested.id;
      return { ...result, auditId };
    } catch (error) {
      // The release is done and its `requested` entry stands; the outcome is recorded by the resolver.
      auditLogger().error({ auditId: requested.id, error: errorText(error) }, "recording the outcome of an audit entry failed");
      return { ...result, auditId: requested.id };
    }
  } finally {
    inFlight.delete(requested.id);
  }
}

/**
 * Records a refused attempt (wrong role, stale sign-in, rate limit, bad input).
 * Nothing is released either way; the caller shows the refusal even when this
 * returns audit_unavailable.
 */
export async function recordRefusedAttempt(
  req: ForceReleaseRequest & { outcome: RefusedOutcome; detail?: string },
  deps?: AuditDeps,
): Promise<RecordRefusedResult> {
  const opened = await openAuditLog(deps);
  if ("outcome" in opened) return opened;
  const { d, audit } = opened;
  // The lease shown, for the entry; a store that is down or input that is not a lease name just leaves it blank.
  let shown: Lease | null = null;
  if (typeof req.resource === "string" && typeof req.leaseId === "string" && typeof req.store === "string") {
    shown = await readShownLease(d.getTarget(req.store), req.resource, req.leaseId).then(
      (r) => r.shown,
      () => null,
    );
  }
  try {
    const entry = await audit.append({ ...baseDraft(req, req.outcome, shown), detail: req.detail ?? null });
    return entry ? { auditId: entry.id } : unavailable(new Error("entry was not written"));
  } catch (error) {
    return unavailable(error);
  }
}

export interface ResolveResult {
  /** Entries given an outcome by this call. */
  resolved: Array<{ id: string; outcome: AuditOutcome }>;
  /** Entries left open (store unknown or not answering). */
  open: string[];
}

/**
 * Gives each `requested` entry older than the grace period its outcome from the
 * store's own record: a `force_released` event for that lease id by that actor
 * means it was released; otherwise nothing was. The event comes from the store's
 * record of the force-release where it keeps one (Redis: its history is capped and
 * may have lost the event), else from its history. Idempotent and safe to run from
 * several processes (an entry gets at most one outcome: unique index).
 */
export async function resolvePendingForceReleases(deps: AuditDeps, audit?: AuditLog): Promise<ResolveResult> {
  const log = audit ?? (await deps.getAuditLog());
  const pending = await log.pendingRequests(deps.pendingGraceMs ?? DEFAULT_PENDING_GRACE_MS);
  const result: ResolveResult = { resolved: [], open: [] };
  for (const entry of pending) {
    if (inFlight.has(entry.id)) continue;
    const target = deps.getTarget(entry.store);
    if (!target || entry.leaseId === null) {
      result.open.push(entry.id);
      continue;
    }
    try {
      const event = await findForceReleasedEvent(target.store, entry);
      const shown = { owner: entry.owner, task: entry.task, fencingToken: entry.fencingToken };
      const draft: AuditDraft = event
        ? { ...entryDraft(entry), ...shown, outcome: "released", resolvesId: entry.id, detail: `resolved from store event ${event.id}` }
        : { ...entryDraft(entry), ...shown, outcome: "failed", resolvesId: entry.id, detail: "resolved: the store has no force_released event for this lease; nothing was released" };
      const written = await log.append(draft);
      if (written) result.resolved.push({ id: entry.id, outcome: draft.outcome });
    } catch (error) {
      auditLogger().warn({ auditId: entry.id, error: errorText(error) }, "audit entry stays open");
      result.open.push(entry.id);
    }
  }
  return result;
}

function entryDraft(e: AuditEntry): AuditDraft {
  // The entry's own fields as a new draft that resolves nothing yet; append() sets its own `at`.
  return { ...hashedFields(e), newHolder: null, resolvesId: null, detail: null };
}

async function findForceReleasedEvent(store: LeaseStore, entry: AuditEntry) {
  // Entries written before stable ids carry the bare sub, and the store's event named the email (or that sub).
  const actor = subjectOfIdentity(entry.actorSub) === null ? (entry.actorEmail ?? entry.actorSub) : recordedActor({ id: entry.actorSub });
  if (store.forceReleasedEvent && entry.leaseId !== null) {
    // A lease is force-released at most once: a record by someone else means this attempt released nothing.
    const recorded = await store.forceReleasedEvent({ resource: entry.resource, leaseId: entry.leaseId });
    if (recorded) return recorded.actor === actor ? recorded : null;
  }
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const { items, nextCursor } = await store.events({
      resource: entry.resource,
      kinds: ["force_released"],
      from: new Date(entry.at.getTime() - EVENT_LOOKBACK_MS),
      limit: 100,
      ...(cursor ? { cursor } : {}),
    });
    const match = items.find((e) => e.leaseId === entry.leaseId && e.actor === actor);
    if (match) return match;
    if (!nextCursor) return null;
    cursor = nextCursor;
  }
  return null;
}
