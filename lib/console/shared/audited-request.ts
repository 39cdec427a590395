/**
 * What every audited console mutation (force-release, observed release, API tokens) does with
 * its request before its own checks: read the body, name the actor and the request for the
 * audit log, and take the rate limit that comes before the IdP is asked or the audit log written.
 */
import { randomUUID } from "node:crypto";
import { getRefusalTally } from "@/lib/audit/context";
import type { AuditActor, RequestMeta } from "@/lib/audit/force-release";
import type { AuditDraft } from "@/lib/audit/entry";
import { describeClientAddress } from "@/lib/auth/client-address";
import { resolveRequestSession, type AppSession } from "@/lib/auth/session";
import { getAuthEnv } from "@/lib/auth/env";
import type { FieldIssue } from "@/lib/console/shared/refusal-types";
import { clientAddressOf } from "@/lib/console/shared/request-address";
import { passAttemptGate } from "@/lib/console/shared/attempt-gate";
import { attemptAddressLimiter, type TokenBucketLimiter } from "@/lib/console/shared/rate-limit";
import { checkSameOrigin } from "@/lib/console/shared/same-origin";

/** Bodies are a few hundred bytes; anything much larger is not a form of ours. */
const MAX_BODY_BYTES = 64 * 1024;
/** A mutation's HTTP answer: its status and typed body. */
export interface MutationAnswer<T> {
  status: number;
  body: T;
}

/**
 * Who sent the request, for its audit entries: the socket's address, or the client a
 * TRUSTED_PROXY reports with that proxy (lib/console/shared/request-address.ts). The request id is
 * made here: a client's X-Request-Id would let it pick or repeat the id its entries carry.
 */
export function requestMeta(request: Request, env: Readonly<Record<string, string | undefined>> = process.env): RequestMeta {
  return {
    requestId: randomUUID(),
    ip: describeClientAddress(clientAddressOf(request, env)),
    userAgent: request.headers.get("user-agent")?.slice(0, 500) ?? null,
  };
}

export function actorOf(session: AppSession): AuditActor {
  return { id: session.user.id, email: session.user.email, roles: [...session.user.roles] };
}

export async function readJsonBody(request: Request): Promise<unknown> {
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > MAX_BODY_BYTES) return undefined;
  const text = await request.text().catch(() => "");
  if (text.length > MAX_BODY_BYTES) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function issuesOf(error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> }): FieldIssue[] {
  return error.issues.slice(0, 10).map((i) => ({ field: i.path.map(String).join(".") || "body", message: i.message }));
}

/**
 * The rate limit every audited mutation takes first, per user and per address, before the IdP
 * is asked or the audit log written: who is asking comes from the session record alone. An
 * attempt over it is refused and counted; each burst becomes one audit entry with its count
 * (lib/audit/refusal-tally). Null: go on with the checks (also when nobody is signed in: the
 * checks after it answer that, and audit nothing).
 */
export async function limitAuditedAttempt(
  request: Request,
  attempt: { action: string; perUser: TokenBucketLimiter; cost: number; draft: (who: { actor: AuditActor; meta: RequestMeta }, detail: string) => AuditDraft },
): Promise<{ retryAfterSeconds: number } | null> {
  const known = await resolveRequestSession({ offline: true }).catch(() => null);
  if (known?.status !== "ok") return null;
  const actor = actorOf(known.session);
  const meta = requestMeta(request);
  // Cross-origin attempts (refused below anyway) have a bucket of their own, so another site cannot spend the user's.
  const isSameOrigin = checkSameOrigin(request.headers, getAuthEnv().nextAuthUrl).ok;
  const taken = passAttemptGate(
    { perUser: attempt.perUser, perAddress: attemptAddressLimiter, tally: getRefusalTally() },
    {
      action: attempt.action,
      actorId: isSameOrigin ? actor.id : `${actor.id}\u0000cross-origin`,
      ip: meta.ip,
      cost: attempt.cost,
      draft: (detail) => attempt.draft({ actor, meta }, detail),
    },
  );
  return taken.allowed ? null : { retryAfterSeconds: taken.retryAfterSeconds };
}
