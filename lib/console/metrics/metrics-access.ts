/**
 * Who may read `/api/metrics`: a signed-in user with `metrics:read` (like every
 * route), or a scraper presenting `Authorization: Bearer <METRICS_TOKEN>`.
 * Prometheus cannot hold an SSO session, so the token is the scraping path; with
 * METRICS_TOKEN unset only sessions are accepted. A wrong token is refused
 * outright rather than falling back to the session. The series are not cut by
 * tenant, so a session limited to prefixes (LEASEWATCH_ROLE_MAP scopes) is refused.
 */
import { NextResponse } from "next/server";
import { describeScope } from "@/lib/auth/scope";
import { requireApiSession, requirePermission, scopeFor, toPermissionResponse, type AppSession } from "@/lib/auth/session";
import type { TokenBucketLimiter } from "@/lib/console/shared/rate-limit";
import { respondWithServerError } from "@/lib/auth/server-error";
import { FailureLimiter } from "@/lib/auth/failure-limiter";
import { readLimiter, takeRead, tooManyReads } from "@/lib/console/shared/api-response";
import { isSameToken, readMetricsToken } from "@/lib/server/metrics-token";
import { clientAddressOf } from "@/lib/console/shared/request-address";

export { MetricsTokenError, readMetricsToken } from "@/lib/server/metrics-token";

/** One per process: past ten wrong tokens in a minute, an address is answered 429 for the rest of the minute. */
const failures = new FailureLimiter();

export type MetricsAccess = { ok: true; via: "token" | "session" } | { ok: false; response: NextResponse };

export async function requireMetricsAccess(
  request: Request,
  env: Record<string, string | undefined> = process.env,
  limiter: FailureLimiter = failures,
): Promise<MetricsAccess> {
  const bearer = /^bearer(?:\s+(.*))?$/i.exec(request.headers.get("authorization") ?? "");
  if (bearer) {
    let expected: string | null;
    try {
      expected = readMetricsToken(env);
    } catch (error) {
      return { ok: false, response: respondWithServerError(error, "metrics access is misconfigured") };
    }
    // The right token always gets in: guessers elsewhere (or on the scraper's own machine) cannot lock Prometheus out.
    if (expected !== null && isSameToken((bearer[1] ?? "").trim(), expected)) return { ok: true, via: "token" };
    const client = clientAddressOf(request, env).client;
    const retryAfterS = limiter.retryAfterS(client);
    if (retryAfterS > 0) {
      return {
        ok: false,
        response: NextResponse.json({ error: "too many invalid metrics tokens; try again later" }, { status: 429, headers: { "retry-after": String(retryAfterS) } }),
      };
    }
    limiter.recordFailure(client);
    return {
      ok: false,
      response: NextResponse.json({ error: "invalid metrics token" }, { status: 401, headers: { "www-authenticate": "Bearer" } }),
    };
  }
  const auth = await requireApiSession();
  if (!auth.ok) return auth;
  return metricsAccessForSession(auth.session);
}

/** A signed-in scrape: metrics:read over every tenant, within the user's read rate. */
export function metricsAccessForSession(session: AppSession, reads: TokenBucketLimiter = readLimiter): MetricsAccess {
  try {
    requirePermission(session, "metrics:read");
  } catch (error) {
    const forbidden = toPermissionResponse(error);
    if (forbidden) return { ok: false, response: forbidden };
    throw error;
  }
  // The series count every resource of every store; an account limited to some prefixes must not read them.
  const scope = scopeFor(session, "metrics:read");
  if (scope.kind !== "all") {
    const error = `Prometheus metrics cover every tenant; your account is limited to ${describeScope(scope)}. Use the overview page.`;
    return { ok: false, response: NextResponse.json({ error }, { status: 403 }) };
  }
  const limited = takeRead(session, reads);
  if (limited) return { ok: false, response: tooManyReads(limited.retryAfterSeconds) };
  return { ok: true, via: "session" };
}
