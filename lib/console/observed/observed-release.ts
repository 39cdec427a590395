/**
 * The force-release of an observed lock behind POST /api/observed/release. Same
 * order as the lease force-release (force-release.ts): rate limit before anything
 * is asked or written; the role freshly from the IdP with a recent sign-in
 * (`observed:release`, or `observed:terminate` for an advisory lock, whose holder's
 * whole session ends); same origin; then releaseObservedAudited, which checks the
 * input, the role and the operator's scope again, writes `requested` before the
 * observed system is touched, and records the outcome. Every refusal after sign-in
 * is audited.
 */
import { defaultAuditDeps, defaultObservedReleaseDeps } from "@/lib/audit/context";
import { observedRefusalDraft, recordObservedRefusal, releaseObservedAudited, type ObservedReleaseOutcome } from "@/lib/audit/observed-release";
import { buildReauthUrl, checkFreshPermission } from "@/lib/auth/fresh";
import { getAuthEnv } from "@/lib/auth/env";
import { scopeFor } from "@/lib/auth/session";
import { observedReleasePermission, ZObservedShown } from "@/lib/observed/release-form";
import { MUTATION_MAX_AUTH_AGE_MS } from "@/lib/console/shared/refusal-types";
import { actorOf, limitAuditedAttempt, readJsonBody, requestMeta, type MutationAnswer } from "@/lib/console/shared/audited-request";
import type { ObservedRefusal, ObservedRefusalCode, ObservedReleaseResult } from "./observed-release-types";
import { forceReleaseLimiter } from "@/lib/console/shared/rate-limit";
import { REFUSAL_STATUS } from "@/lib/console/shared/refusal-types";
import { checkSameOrigin } from "@/lib/console/shared/same-origin";

const STATUS: Record<ObservedRefusalCode, number> = { ...REFUSAL_STATUS, not_releasable: 409 };

function refusal(code: ObservedRefusalCode, message: string, extra: Partial<ObservedRefusal> = {}): MutationAnswer<ObservedRefusal> {
  return { status: STATUS[code], body: { ok: false, outcome: "refused", code, message, error: message, ...extra } };
}

/** The permission this body asks for: terminating an advisory holder needs its own. */
function permissionOf(body: unknown) {
  const shown = ZObservedShown.safeParse(typeof body === "object" && body !== null ? (body as { shown?: unknown }).shown : undefined);
  return observedReleasePermission(shown.success ? shown.data.kind : "shedlock");
}

function field(body: unknown, key: string): string {
  const v = typeof body === "object" && body !== null ? (body as Record<string, unknown>)[key] : undefined;
  return typeof v === "string" ? v : "";
}

function toAnswer(store: string, resource: string, outcome: ObservedReleaseOutcome): MutationAnswer<ObservedReleaseResult> {
  switch (outcome.outcome) {
    case "released":
      return { status: 200, body: { ok: true, outcome: "released", store, resource, auditId: outcome.auditId, terminated: outcome.terminated } };
    case "lease_changed":
      return {
        status: 409,
        body: { ok: false, outcome: "lease_changed", store, resource, auditId: outcome.auditId, message: "The holder changed since the dialog opened (or nobody holds the lock now). Nothing was released." },
      };
    case "refused":
      return refusal(outcome.code, outcome.message, { auditId: outcome.auditId, ...(outcome.issues ? { issues: outcome.issues } : {}) });
    case "failed":
      return refusal("failed", outcome.message, { auditId: outcome.auditId });
    case "audit_unavailable":
      return refusal("audit_unavailable", "The audit log cannot be written right now, so nothing was released (every force-release must be recorded first).");
  }
}

export async function observedReleaseFromRequest(request: Request): Promise<MutationAnswer<ObservedReleaseResult>> {
  const body = await readJsonBody(request);
  const limited = await limitAuditedAttempt(request, {
    action: "force_release",
    perUser: forceReleaseLimiter,
    cost: 1,
    draft: ({ actor, meta }, detail) => observedRefusalDraft({ actor, request: meta, form: body }, "rate_limited", detail),
  });
  if (limited) return refusal("rate_limited", `Too many force-release attempts in a short time. Try again in ${limited.retryAfterSeconds} s. (The audit log counts this attempt.)`, limited);

  const permission = permissionOf(body);
  const fresh = await checkFreshPermission(permission, { maxAuthAgeMs: MUTATION_MAX_AUTH_AGE_MS });
  if (!fresh.ok && !fresh.session) {
    return fresh.code === "idp_unavailable" ? refusal("idp_unavailable", fresh.message) : refusal("not_signed_in", "You are not signed in. Sign in and try again.");
  }
  if (!fresh.ok && fresh.code === "not_signed_in") return refusal("not_signed_in", "You are not signed in. Sign in and try again.");
  const session = fresh.session!;
  const who = { actor: actorOf(session), request: requestMeta(request), form: body };
  const deps = defaultAuditDeps();
  const audited = async (outcome: "denied_role" | "reauth_required" | "invalid_input", detail: string, answer: MutationAnswer<ObservedRefusal>): Promise<MutationAnswer<ObservedRefusal>> => {
    const auditId = await recordObservedRefusal(who, outcome, detail, deps).catch(() => null);
    return auditId ? { ...answer, body: { ...answer.body, auditId } } : { ...answer, body: { ...answer.body, message: `${answer.body.message} (The audit log could not record this refusal.)` } };
  };

  const origin = checkSameOrigin(request.headers, getAuthEnv().nextAuthUrl);
  if (!origin.ok) return audited("invalid_input", `cross-origin: ${origin.message}`, refusal("cross_origin", origin.message));
  if (!fresh.ok) {
    if (fresh.code === "forbidden") {
      const what = permission === "observed:terminate" ? "Terminating an advisory lock's holder" : "Force release";
      return audited("denied_role", fresh.message, refusal("forbidden", `${what} needs the operator role; your current roles do not include it. Nothing was released.`));
    }
    if (fresh.code === "reauth_required") {
      return audited("reauth_required", fresh.message, refusal("reauth_required", "A force-release needs a sign-in from the last 15 minutes.", { reauthUrl: buildReauthUrl("/observed") }));
    }
    return audited("reauth_required", `identity provider unavailable: ${fresh.message}`, refusal("idp_unavailable", "Your role could not be confirmed with the identity provider right now. Try again in a minute."));
  }
  const outcome = await releaseObservedAudited({ ...who, scope: scopeFor(session, permission) }, { ...defaultObservedReleaseDeps(), getAuditLog: deps.getAuditLog });
  return toAnswer(field(body, "store"), field(body, "resource"), outcome);
}
