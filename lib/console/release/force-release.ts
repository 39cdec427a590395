/**
 * The force-release mutation behind POST /api/force-release and
 * POST /api/force-release/bulk. Route handlers are public POST endpoints, so
 * this checks everything itself, in this order:
 *
 *   1. the per-user and per-address rate limit, before the IdP is asked or the
 *      audit log written (an attempt over it is counted, not written alone);
 *   2. the session and the operator role, freshly from the IdP, with a recent
 *      sign-in (checkFreshPermission);
 *   3. same origin (a browser always sends Origin on POST; none means not ours);
 *   4. the input (zod), the store name against the configured stores, and the
 *      resource against the operator's scope (LEASEWATCH_ROLE_MAP prefixes);
 *
 * then calls forceReleaseAudited, which ends the lease only if that lease id
 * still holds it and writes the audit entry (no audit write, no release). The
 * actor always comes from the session. Every refusal after sign-in is audited
 * through recordRefusedAttempt. Answers are typed results; the server log keeps
 * whatever an exception said, the browser gets a short message.
 */
import { forceReleaseAudited, recordRefusedAttempt, refusedAttemptDraft, type AuditActor, type ForceReleaseOutcome, type RequestMeta } from "@/lib/audit/force-release";
import { buildReauthUrl, checkFreshPermission } from "@/lib/auth/fresh";
import { describeScope, isResourceInScope, type ViewerScope } from "@/lib/auth/scope";
import { scopeFor } from "@/lib/auth/session";
import { getAuthEnv } from "@/lib/auth/env";
import { leaseHref, locksHref } from "@/lib/console/shared/links";
import { checkReleaseCandidates, type ReleaseCandidateState } from "@/lib/console/release/list-release-candidates";
import { getStoreNames } from "@/lib/server/store-registry";
import {
  MAX_BULK_LEASES,
  ZBulkReleaseForm,
  ZForceReleaseForm,
  type BulkLeaseOutcome,
  type BulkReleaseResult,
  type ForceReleaseResult,
} from "./force-release-schema";
import { MUTATION_MAX_AUTH_AGE_MS, REFUSAL_STATUS, type Refusal, type RefusalCode } from "@/lib/console/shared/refusal-types";
import { forceReleaseLimiter } from "@/lib/console/shared/rate-limit";
import { checkSameOrigin } from "@/lib/console/shared/same-origin";
import { getLogger } from "@/lib/log/logger";
import { actorOf, issuesOf, limitAuditedAttempt, readJsonBody, requestMeta, type MutationAnswer } from "@/lib/console/shared/audited-request";

/** Matches forceReleaseLimiter's capacity: a bulk release is charged at most the whole bucket. */
const RATE_LIMIT_CAPACITY = 10;

/** What the audit entry of a refused attempt can say about the lease, taken from the body as sent (trimmed). */
interface AttemptContext {
  store: string;
  resource: string;
  leaseId: string;
  reason: string;
}

interface Authorised {
  actor: AuditActor;
  /** Where this operator may force-release (their operator grants' prefixes, or everywhere). */
  scope: ViewerScope;
  meta: RequestMeta;
  body: unknown;
}

function refusal(code: RefusalCode, message: string, extra: Partial<Refusal> = {}): MutationAnswer<Refusal> {
  return { status: REFUSAL_STATUS[code], body: { ok: false, outcome: "refused", code, message, error: message, ...extra } };
}

function field(body: unknown, key: string, max: number): string {
  const value = typeof body === "object" && body !== null ? (body as Record<string, unknown>)[key] : undefined;
  return typeof value === "string" ? value.slice(0, max) : "";
}

function contextOf(body: unknown): AttemptContext {
  return { store: field(body, "store", 64), resource: field(body, "resource", 512) || field(body, "prefix", 512), leaseId: field(body, "leaseId", 128), reason: field(body, "reason", 500) };
}

/** Audits a refused attempt; the refusal stands whether or not the audit log took it. */
async function auditRefusal(
  auth: Authorised,
  context: AttemptContext,
  outcome: "denied_role" | "reauth_required" | "rate_limited" | "invalid_input",
  detail: string,
  answer: MutationAnswer<Refusal>,
): Promise<MutationAnswer<Refusal>> {
  try {
    const recorded = await recordRefusedAttempt({ actor: auth.actor, request: auth.meta, ...context, outcome, detail });
    if ("auditId" in recorded) return { ...answer, body: { ...answer.body, auditId: recorded.auditId } };
    return { ...answer, body: { ...answer.body, message: `${answer.body.message} (The audit log could not record this refusal.)` } };
  } catch (error) {
    getLogger("force-release").error({ err: error, auditRequestId: auth.meta.requestId, outcome }, "could not audit a refused attempt");
    return answer;
  }
}

async function limitBeforeChecks(request: Request, body: unknown, cost: number): Promise<MutationAnswer<Refusal> | null> {
  const limited = await limitAuditedAttempt(request, {
    action: "force_release",
    perUser: forceReleaseLimiter,
    cost,
    draft: ({ actor, meta }, detail) => refusedAttemptDraft({ actor, request: meta, ...contextOf(body), outcome: "rate_limited", detail }),
  });
  if (!limited) return null;
  return refusal("rate_limited", `Too many force-release attempts in a short time. Try again in ${limited.retryAfterSeconds} s. (The audit log counts this attempt.)`, limited);
}

/**
 * Steps 1–3 for both routes. Returns the refusal to send, or who is asking and
 * the parsed body. `cost`: rate-limit tokens this request takes (bulk: per lease).
 */
async function authorise(request: Request, cost: (body: unknown) => number): Promise<{ ok: false; answer: MutationAnswer<Refusal> } | { ok: true; auth: Authorised }> {
  const body = await readJsonBody(request);
  const limited = await limitBeforeChecks(request, body, Math.min(RATE_LIMIT_CAPACITY, Math.max(1, cost(body))));
  if (limited) return { ok: false, answer: limited };
  const fresh = await checkFreshPermission("leases:force_release", { maxAuthAgeMs: MUTATION_MAX_AUTH_AGE_MS });
  if (!fresh.ok && !fresh.session) {
    // Nobody to audit: either nobody is signed in, or the session itself could not be checked.
    return { ok: false, answer: fresh.code === "idp_unavailable" ? refusal("idp_unavailable", fresh.message) : refusal("not_signed_in", "You are not signed in. Sign in and try again.") };
  }
  if (!fresh.ok && fresh.code === "not_signed_in") return { ok: false, answer: refusal("not_signed_in", "You are not signed in. Sign in and try again.") };
  const session = fresh.session!;
  const auth: Authorised = {
    actor: actorOf(session),
    scope: scopeFor(session, "leases:force_release"),
    meta: requestMeta(request),
    body,
  };
  const context = contextOf(auth.body);

  const origin = checkSameOrigin(request.headers, getAuthEnv().nextAuthUrl);
  if (!origin.ok) {
    return { ok: false, answer: await auditRefusal(auth, context, "invalid_input", `cross-origin: ${origin.message}`, refusal("cross_origin", origin.message)) };
  }
  if (!fresh.ok) {
    if (fresh.code === "forbidden") {
      return { ok: false, answer: await auditRefusal(auth, context, "denied_role", fresh.message, refusal("forbidden", "Force release needs the operator role; your current roles do not include it.")) };
    }
    // Back to where the attempt was made: the lease's page, or the leases under the bulk release's prefix.
    const prefix = field(auth.body, "prefix", 512);
    const back = context.store && context.resource ? safeLeaseHref(context.store, context.resource) : prefix ? locksHref({ prefix }) : "/locks";
    if (fresh.code === "reauth_required") {
      return {
        ok: false,
        answer: await auditRefusal(auth, context, "reauth_required", fresh.message, refusal("reauth_required", "A force-release needs a sign-in from the last 15 minutes.", { reauthUrl: buildReauthUrl(back) })),
      };
    }
    return {
      ok: false,
      answer: await auditRefusal(auth, context, "reauth_required", `identity provider unavailable: ${fresh.message}`, refusal("idp_unavailable", "Your role could not be confirmed with the identity provider right now. Try again in a minute.")),
    };
  }
  return { ok: true, auth };
}

/**
 * A resource outside the operator's prefixes: refused and audited, decided on the
 * name alone (the store is not read), so the answer is the same whether it exists or not.
 */
function refuseOutOfScope(auth: Authorised, context: AttemptContext): Promise<MutationAnswer<Refusal>> {
  const where = describeScope(auth.scope);
  return auditRefusal(
    auth,
    context,
    "denied_role",
    `outside the operator scope (${where})`,
    refusal("forbidden", `Your operator role covers only ${where}; this resource is outside it. Nothing was released.`),
  );
}

function safeLeaseHref(store: string, resource: string): string {
  try {
    return leaseHref(store, resource);
  } catch {
    return "/locks";
  }
}

function toResult(store: string, resource: string, outcome: ForceReleaseOutcome): MutationAnswer<ForceReleaseResult> {
  switch (outcome.outcome) {
    case "released":
      return { status: 200, body: { ok: true, outcome: "released", store, resource, auditId: outcome.auditId, released: { leaseId: "", ...outcome.lease } } };
    case "lease_changed":
      return {
        status: 409,
        body: {
          ok: false,
          outcome: "lease_changed",
          store,
          resource,
          auditId: outcome.auditId,
          current: outcome.current,
          message: outcome.current ? "The lease changed: another lease holds the resource now. Nothing was released." : "Nobody holds the resource any more. Nothing was released.",
        },
      };
    case "audit_unavailable":
      return refusal("audit_unavailable", "The audit log cannot be written right now, so nothing was released (every force-release must be recorded first).");
    case "failed":
      return refusal("failed", "The store did not complete the force-release; nothing is known to have been released. The audit log has the details.", outcome.auditId ? { auditId: outcome.auditId } : {});
  }
}

/** POST /api/force-release: one lease. */
export async function forceReleaseFromRequest(request: Request): Promise<MutationAnswer<ForceReleaseResult>> {
  const authorised = await authorise(request, () => 1);
  if (!authorised.ok) return authorised.answer;
  const { auth } = authorised;
  const context = contextOf(auth.body);
  const parsed = ZForceReleaseForm.safeParse(auth.body);
  if (!parsed.success) {
    const issues = issuesOf(parsed.error);
    return auditRefusal(auth, context, "invalid_input", issues.map((i) => `${i.field}: ${i.message}`).join("; "), refusal("invalid_input", "The form has problems.", { issues }));
  }
  const form = parsed.data;
  if (!getStoreNames().includes(form.store)) {
    return auditRefusal(auth, context, "invalid_input", `unknown store "${form.store}"`, refusal("invalid_input", `This console watches no store called "${form.store}".`, { issues: [{ field: "store", message: "unknown store" }] }));
  }
  if (!isResourceInScope(auth.scope, form.resource)) return refuseOutOfScope(auth, context);
  try {
    const outcome = await forceReleaseAudited({ actor: auth.actor, request: auth.meta, store: form.store, resource: form.resource, leaseId: form.leaseId, reason: form.reason });
    const answer = toResult(form.store, form.resource, outcome);
    if (answer.body.outcome === "released") answer.body.released.leaseId = form.leaseId;
    return answer;
  } catch (error) {
    getLogger("force-release").error({ err: error, auditRequestId: auth.meta.requestId }, "force-release failed");
    return refusal("failed", `The force-release failed before the store answered; nothing is known to have been released (request ${auth.meta.requestId}).`);
  }
}

/** POST /api/force-release/bulk: the lapsed or overdue leases under a prefix, each on its own. */
export async function bulkReleaseFromRequest(request: Request): Promise<MutationAnswer<BulkReleaseResult>> {
  const leaseCount = (body: unknown) => {
    const leases = typeof body === "object" && body !== null ? (body as { leases?: unknown }).leases : undefined;
    return Array.isArray(leases) ? Math.min(leases.length, MAX_BULK_LEASES) : 1;
  };
  const authorised = await authorise(request, leaseCount);
  if (!authorised.ok) return authorised.answer;
  const { auth } = authorised;
  const context = contextOf(auth.body);
  const parsed = ZBulkReleaseForm.safeParse(auth.body);
  if (!parsed.success) {
    const issues = issuesOf(parsed.error);
    return auditRefusal(auth, context, "invalid_input", `bulk: ${issues.map((i) => `${i.field}: ${i.message}`).join("; ")}`, refusal("invalid_input", "The bulk release request has problems.", { issues }));
  }
  const form = parsed.data;
  const stores = getStoreNames();
  // Read the candidates again now: only leases still lapsed or overdue may be ended this way.
  const checkCandidate = await checkReleaseCandidates(form.prefix, { scope: auth.scope, signal: request.signal });

  const results: BulkLeaseOutcome[] = [];
  let isAuditDown = false;
  for (const lease of form.leases) {
    if (isAuditDown) {
      results.push({ ...lease, result: refusal("audit_unavailable", "Not attempted: the audit log became unavailable during this bulk release.").body });
      continue;
    }
    const single = { ...lease, reason: form.reason };
    let answer: MutationAnswer<ForceReleaseResult>;
    let state: ReleaseCandidateState;
    if (!stores.includes(lease.store)) {
      answer = await auditRefusal(auth, single, "invalid_input", `bulk: unknown store "${lease.store}"`, refusal("invalid_input", `No store is called "${lease.store}".`));
    } else if (!isResourceInScope(auth.scope, lease.resource)) {
      answer = await refuseOutOfScope(auth, single);
    } else if ((state = await checkCandidate(lease)) === "renewed") {
      // Same lease, but renewed since the dialog read it: its holder is alive again, so it is not ours to end in bulk.
      answer = await auditRefusal(auth, single, "invalid_input", "bulk: no longer lapsed or overdue (renewed since listed)", refusal("invalid_input", "Renewed since it was listed: no longer lapsed or overdue, so not released."));
    } else if (state === "unconfirmed") {
      // A read that failed says nothing about the lease: it may be healthy, so it is left alone.
      answer = await auditRefusal(auth, single, "invalid_input", "bulk: could not confirm it is still lapsed or overdue (a store read failed)", refusal("failed", "Not released: could not confirm it is still lapsed or overdue (the store did not answer); try again."));
    } else {
      // Still a candidate, or another lease (or none) holds it now: the per-lease id check answers "lease changed".
      try {
        const outcome = await forceReleaseAudited({ actor: auth.actor, request: auth.meta, ...single });
        answer = toResult(lease.store, lease.resource, outcome);
        if (answer.body.outcome === "released") answer.body.released.leaseId = lease.leaseId;
      } catch (error) {
        getLogger("force-release").error({ err: error, auditRequestId: auth.meta.requestId, store: lease.store, resource: lease.resource }, "bulk force-release failed on one lease");
        answer = refusal("failed", "The force-release of this lease failed before the store answered.");
      }
    }
    results.push({ ...lease, result: answer.body });
    // Fail closed for the rest too: without an audit log nothing else is attempted.
    if (answer.body.outcome === "refused" && answer.body.code === "audit_unavailable") isAuditDown = true;
  }
  return { status: 200, body: { ok: true, outcome: "done", results } };
}
