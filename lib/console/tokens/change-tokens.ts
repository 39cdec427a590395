/**
 * The API token mutations behind POST /api/tokens (create) and
 * POST /api/tokens/revoke. Route handlers are public POST endpoints, so this
 * checks everything itself, in the same order as force-release:
 *
 *   1. the per-user and per-address rate limit, before the IdP is asked or the
 *      audit log written (an attempt over it is counted, not written alone);
 *   2. the session and the operator role (`tokens:manage`), freshly from the IdP,
 *      with a recent sign-in — a new credential is as sensitive as a force-release;
 *   3. same origin;
 *   4. the input (zod), stores against the configured stores;
 *   5. the operator's scope (LEASEWATCH_ROLE_MAP prefixes): a tenant-scoped operator
 *      creates tokens only within it, and sees and revokes only tokens whose every
 *      prefix lies within it (others answer as not found);
 *
 * then the audited change (lib/audit/api-tokens): token row and audit entry in
 * one transaction. Every refusal after sign-in is audited too. The secret is in
 * the create answer only: never logged, never in the audit entry.
 */
import { getProcessAuditLog } from "@/lib/audit/context";
import { createTokenAudited, recordTokenRefusal, revokeTokenAudited, tokenRefusalDraft, type TokenAuditAction, type TokenAuditDeps, type TokenRefusedOutcome } from "@/lib/audit/api-tokens";
import type { AuditActor, RequestMeta } from "@/lib/audit/force-release";
import { buildReauthUrl, checkFreshPermission } from "@/lib/auth/fresh";
import { describeScope, type ViewerScope } from "@/lib/auth/scope";
import { scopeFor } from "@/lib/auth/session";
import { resolveConsoleDbConfig } from "@/lib/auth/session-store";
import { reshapeApiToken } from "@/lib/console/tokens/list-tokens";
import { getStoreNames } from "@/lib/server/store-registry";
import { getAuthEnv } from "@/lib/auth/env";
import {
  TOKEN_REFUSAL_STATUS,
  parseCreateTokenForm,
  ZRevokeTokenForm,
  type CreateTokenResult,
  type RevokeTokenResult,
  type TokenRefusal,
  type TokenRefusalCode,
} from "./token-schema";
import { MUTATION_MAX_AUTH_AGE_MS } from "@/lib/console/shared/refusal-types";
import { actorOf, issuesOf, limitAuditedAttempt, readJsonBody, requestMeta, type MutationAnswer } from "@/lib/console/shared/audited-request";
import { tokenChangeLimiter } from "@/lib/console/shared/rate-limit";
import { checkSameOrigin } from "@/lib/console/shared/same-origin";
import { getLogger } from "@/lib/log/logger";

export function tokenRefusal(code: TokenRefusalCode, message: string, extra: Partial<TokenRefusal> = {}): MutationAnswer<TokenRefusal> {
  return { status: TOKEN_REFUSAL_STATUS[code], body: { ok: false, outcome: "refused", code, message, error: message, ...extra } };
}

function consoleDeps(): TokenAuditDeps {
  return { getAuditLog: getProcessAuditLog, tokenDb: resolveConsoleDbConfig() };
}

interface Authorised {
  actor: AuditActor;
  /** Where this operator may manage tokens (everything, or their role map prefixes). */
  scope: ViewerScope;
  meta: RequestMeta;
  body: unknown;
}

function nameOf(body: unknown, action: TokenAuditAction): string {
  const record = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
  const value = action === "token_create" ? record.name : record.id;
  return typeof value === "string" ? value.slice(0, 128) : "";
}

/** Audits a refused attempt; the refusal stands whether or not the audit log took it. */
async function auditRefusal(
  auth: Authorised,
  action: TokenAuditAction,
  outcome: TokenRefusedOutcome,
  detail: string,
  answer: MutationAnswer<TokenRefusal>,
): Promise<MutationAnswer<TokenRefusal>> {
  const recorded = await recordTokenRefusal({ actor: auth.actor, request: auth.meta, action, name: nameOf(auth.body, action), outcome, detail }, { getAuditLog: getProcessAuditLog });
  if ("auditId" in recorded) return { ...answer, body: { ...answer.body, auditId: recorded.auditId } };
  return { ...answer, body: { ...answer.body, message: `${answer.body.message} (The audit log could not record this refusal.)` } };
}

/**
 * The rate limit, per user and per address, before the IdP is asked or the audit
 * log written (as for force-release: an attempt over it is refused and counted).
 * Null: go on with the checks.
 */
async function limitBeforeChecks(request: Request, body: unknown, action: TokenAuditAction): Promise<MutationAnswer<TokenRefusal> | null> {
  const limited = await limitAuditedAttempt(request, {
    action,
    perUser: tokenChangeLimiter,
    cost: 1,
    draft: ({ actor, meta }, detail) => tokenRefusalDraft({ actor, request: meta, action, name: nameOf(body, action), outcome: "rate_limited", detail }),
  });
  if (!limited) return null;
  return tokenRefusal("rate_limited", `Too many token changes in a short time. Try again in ${limited.retryAfterSeconds} s. (The audit log counts this attempt.)`, limited);
}

/** Steps 1–3 for both routes: the refusal to send, or who is asking and the parsed body. */
async function authorise(request: Request, action: TokenAuditAction): Promise<{ ok: false; answer: MutationAnswer<TokenRefusal> } | { ok: true; auth: Authorised }> {
  const body = await readJsonBody(request);
  const limited = await limitBeforeChecks(request, body, action);
  if (limited) return { ok: false, answer: limited };
  const fresh = await checkFreshPermission("tokens:manage", { maxAuthAgeMs: MUTATION_MAX_AUTH_AGE_MS });
  if (!fresh.ok && !fresh.session) {
    return { ok: false, answer: fresh.code === "idp_unavailable" ? tokenRefusal("idp_unavailable", fresh.message) : tokenRefusal("not_signed_in", "You are not signed in. Sign in and try again.") };
  }
  if (!fresh.ok && fresh.code === "not_signed_in") return { ok: false, answer: tokenRefusal("not_signed_in", "You are not signed in. Sign in and try again.") };
  const session = fresh.session!;
  const auth: Authorised = { actor: actorOf(session), scope: scopeFor(session, "tokens:manage"), meta: requestMeta(request), body };
  const verb = action === "token_create" ? "create" : "revoke";

  const origin = checkSameOrigin(request.headers, getAuthEnv().nextAuthUrl);
  if (!origin.ok) {
    return { ok: false, answer: await auditRefusal(auth, action, "invalid_input", `cross-origin: ${origin.message}`, tokenRefusal("cross_origin", origin.message)) };
  }
  if (!fresh.ok) {
    if (fresh.code === "forbidden") {
      return {
        ok: false,
        answer: await auditRefusal(auth, action, "denied_role", fresh.message, tokenRefusal("forbidden", `Only operators may ${verb} API tokens; your current roles do not include it.`)),
      };
    }
    if (fresh.code === "reauth_required") {
      return {
        ok: false,
        answer: await auditRefusal(auth, action, "reauth_required", fresh.message, tokenRefusal("reauth_required", `To ${verb} an API token, sign in again (a sign-in from the last 15 minutes is needed).`, { reauthUrl: buildReauthUrl("/tokens") })),
      };
    }
    return {
      ok: false,
      answer: await auditRefusal(auth, action, "reauth_required", `identity provider unavailable: ${fresh.message}`, tokenRefusal("idp_unavailable", "Your role could not be confirmed with the identity provider right now. Try again in a minute.")),
    };
  }
  return { ok: true, auth };
}

/** What to do instead, with the scope's own prefixes as the example. */
function outOfScopeMessage(scope: ViewerScope, outside: readonly string[]): string {
  const listed = outside.map((p) => `"${p}"`).join(", ");
  const within = scope.kind === "prefixes" && scope.prefixes.length > 0 ? ` Use prefixes that start with ${scope.prefixes.map((p) => `"${p}"`).join(" or ")}, e.g. "${scope.prefixes[0]}billing:".` : "";
  return `Your operator role covers only ${describeScope(scope)}; ${listed} ${outside.length === 1 ? "reaches" : "reach"} outside it, so no token was created.${within}`;
}

/** POST /api/tokens. */
export async function createTokenFromRequest(request: Request): Promise<MutationAnswer<CreateTokenResult>> {
  const authorised = await authorise(request, "token_create");
  if (!authorised.ok) return authorised.answer;
  const { auth } = authorised;
  const parsed = parseCreateTokenForm(auth.body, getStoreNames(), Date.now());
  if (!parsed.ok) {
    return auditRefusal(auth, "token_create", "invalid_input", parsed.issues.map((i) => `${i.field}: ${i.message}`).join("; "), tokenRefusal("invalid_input", "The form has problems.", { issues: parsed.issues }));
  }
  try {
    const outcome = await createTokenAudited({ actor: auth.actor, request: auth.meta, token: parsed.token, scope: auth.scope }, consoleDeps());
    switch (outcome.outcome) {
      case "created":
        return { status: 201, body: { ok: true, outcome: "created", secret: outcome.token, token: reshapeApiToken(outcome.record), auditId: outcome.auditId } };
      case "name_taken":
        return tokenRefusal("name_taken", `A token named "${parsed.token.name}" already exists (names stay taken after revocation). Choose another name.`, {
          auditId: outcome.auditId,
          issues: [{ field: "name", message: "already used" }],
        });
      case "out_of_scope":
        return tokenRefusal("forbidden", outOfScopeMessage(auth.scope, outcome.outside), {
          auditId: outcome.auditId,
          issues: [{ field: "prefixes", message: `outside your scope (${describeScope(auth.scope)}): ${outcome.outside.map((p) => `"${p}"`).join(", ")}` }],
        });
      case "audit_unavailable":
        return tokenRefusal("audit_unavailable", outcome.message);
    }
  } catch (error) {
    getLogger("tokens").error({ err: error, auditRequestId: auth.meta.requestId }, "token create failed");
    return tokenRefusal("failed", `The token could not be created; nothing was stored (request ${auth.meta.requestId}).`);
  }
}

/** POST /api/tokens/revoke. */
export async function revokeTokenFromRequest(request: Request): Promise<MutationAnswer<RevokeTokenResult>> {
  const authorised = await authorise(request, "token_revoke");
  if (!authorised.ok) return authorised.answer;
  const { auth } = authorised;
  const parsed = ZRevokeTokenForm.safeParse(auth.body);
  if (!parsed.success) {
    const issues = issuesOf(parsed.error);
    return auditRefusal(auth, "token_revoke", "invalid_input", issues.map((i) => `${i.field}: ${i.message}`).join("; "), tokenRefusal("invalid_input", "The request has problems.", { issues }));
  }
  try {
    const outcome = await revokeTokenAudited({ actor: auth.actor, request: auth.meta, token: { id: parsed.data.id }, scope: auth.scope }, consoleDeps());
    switch (outcome.outcome) {
      case "revoked":
        return { status: 200, body: { ok: true, outcome: "revoked", token: reshapeApiToken(outcome.record), auditId: outcome.auditId } };
      case "not_found":
        return tokenRefusal("not_found", outcome.record ? `Token "${outcome.record.name}" was already revoked.` : "No token has this id.", { auditId: outcome.auditId });
      case "audit_unavailable":
        return tokenRefusal("audit_unavailable", outcome.message);
    }
  } catch (error) {
    getLogger("tokens").error({ err: error, auditRequestId: auth.meta.requestId }, "token revoke failed");
    return tokenRefusal("failed", `The token could not be revoked (request ${auth.meta.requestId}).`);
  }
}
