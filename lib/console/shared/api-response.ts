/**
 * The edge of the console's read routes: permission check, then the read, then
 * its outcome as HTTP — 200 with the view, 400 with `{ error, param }` for a bad
 * URL parameter, 403 without the permission, 500 with a correlation id for a bad
 * stores configuration (the details go to the server log), 429 with Retry-After past the per-user read rate. Store outages are not errors here: they are part of the
 * view (`{ store, ok: false, error }`), so the rest still renders.
 */
import { NextResponse } from "next/server";
import { respondWithServerError } from "@/lib/auth/server-error";
import type { ViewerScope } from "@/lib/auth/scope";
import { requirePermission, scopeFor, toPermissionResponse, type AppSession } from "@/lib/auth/session";
import type { Permission } from "@/lib/auth/roles";
import { TokenBucketLimiter } from "@/lib/console/shared/rate-limit";
import { ConfigError } from "@/lib/server/store-config";
import type { ReadResult } from "./views";

/**
 * Reads per user (every /api read, /api/metrics with a session, the audit export and each
 * server-rendered page): a burst of LEASEWATCH_READ_BURST (default 120) requests, then
 * LEASEWATCH_READ_RATE_PER_S (default 20) per second. Generous for people and for
 * pages polling every few seconds; it stops one client from hammering the stores.
 */
export function readLimitFromEnv(env: Record<string, string | undefined> = process.env): { capacity: number; refillPerSecond: number } {
  const positive = (raw: string | undefined, fallback: number) => {
    const n = Number(raw);
    return raw !== undefined && raw !== "" && Number.isFinite(n) && n > 0 ? n : fallback;
  };
  return { capacity: positive(env.LEASEWATCH_READ_BURST, 120), refillPerSecond: positive(env.LEASEWATCH_READ_RATE_PER_S, 20) };
}

export const readLimiter = new TokenBucketLimiter(readLimitFromEnv());

/**
 * Takes one read from the user's bucket: null when they may read, else how long to wait.
 * The /api read routes, the metrics and audit export routes and the server-rendered pages share it.
 */
export function takeRead(session: AppSession, limiter: TokenBucketLimiter = readLimiter): { retryAfterSeconds: number } | null {
  const taken = limiter.take(session.user.id);
  return taken.allowed ? null : { retryAfterSeconds: taken.retryAfterSeconds };
}

export function tooManyReads(retryAfterSeconds: number): NextResponse {
  const error = `Too many requests from your account; wait ${retryAfterSeconds} s and retry (pages refresh by themselves, no need to reload).`;
  return NextResponse.json({ error }, { status: 429, headers: { "retry-after": String(retryAfterSeconds), "cache-control": "no-store" } });
}

export async function respondWithRead<T>(
  session: AppSession,
  permission: Permission,
  /** Gets the viewer's scope for `permission`; pass it on to the read model. */
  read: (scope: ViewerScope) => Promise<ReadResult<T>>,
  limiter: TokenBucketLimiter = readLimiter,
): Promise<NextResponse> {
  try {
    requirePermission(session, permission);
    const limited = takeRead(session, limiter);
    if (limited) return tooManyReads(limited.retryAfterSeconds);
    const result = await read(scopeFor(session, permission));
    if (!result.ok) {
      const { param, message } = result.problem;
      if (result.problem.isNotFound) return NextResponse.json({ error: message }, { status: 404, headers: { "cache-control": "no-store" } });
      return NextResponse.json({ error: `Bad parameter "${param}": ${message}`, param }, { status: 400 });
    }
    return NextResponse.json(result.view, { headers: { "cache-control": "no-store" } });
  } catch (error) {
    const forbidden = toPermissionResponse(error);
    if (forbidden) return forbidden;
    if (error instanceof ConfigError) return respondWithServerError(error, "the console is misconfigured; see the server log");
    throw error;
  }
}
