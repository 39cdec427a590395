import { getToken } from "next-auth/jwt";
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { connection, NextResponse } from "next/server";
import { getAuthEnv } from "@/lib/auth/env";
import { toSafeCallbackPath } from "./callback-url";
import { NOT_AUTHORISED_PATH, SIGNIN_PATH } from "./options";
import { hasPermission, scopeForPermission, type Permission } from "./roles";
import type { ViewerScope } from "./scope";
import { resolveSession, type AppSession, type ResolvedSession } from "./session-state";
import { respondWithServerError } from "./server-error";

export type { AppSession } from "./session-state";

/** Request header the proxy sets with the requested path + query, so guards can send people back there. */
export const REQUEST_PATH_HEADER = "x-leasewatch-path";

/** Thrown by requirePermission; route handlers map it to 403, pages to their error boundary. */
export class PermissionError extends Error {
  readonly code = "forbidden";
  readonly status = 403;
  readonly permission: Permission;
  constructor(permission: Permission) {
    super(`you do not have permission to do this (needs ${permission})`);
    this.name = "PermissionError";
    this.permission = permission;
  }
}

/**
 * The session of this request, checked against its server-side record, with roles
 * mapped from the user's current groups (see lib/auth/session-state.ts).
 */
export async function resolveRequestSession(options: { fresh?: boolean; offline?: boolean } = {}): Promise<ResolvedSession> {
  // Per-request by nature: this also keeps `next build` from prerendering (and reading
  // the sign-in environment) for any page that asks for the session.
  await connection();
  const env = getAuthEnv();
  const claims = await getToken({
    // Only the cookie: next-auth would also take a bearer token from an Authorization header.
    req: { cookies: await cookies(), headers: {} } as unknown as Parameters<typeof getToken>[0]["req"],
    secret: env.secret,
    secureCookie: env.nextAuthUrl.startsWith("https://"),
  });
  return resolveSession(claims, options);
}

/** The current session, or null when nobody is signed in (or the session ended or was revoked). */
export async function getAppSession(): Promise<AppSession | null> {
  const resolved = await resolveRequestSession();
  return resolved.status === "ok" ? resolved.session : null;
}

/** `/signin?callbackUrl=…`, with only a same-origin path as the target. */
export function buildSignInUrl(callbackPath: string): string {
  return `${SIGNIN_PATH}?${new URLSearchParams({ callbackUrl: toSafeCallbackPath(callbackPath, getAuthEnv().nextAuthUrl) })}`;
}

/**
 * For pages, layouts and server components: the session, or a redirect to sign-in
 * (coming back to `callbackPath`, default the requested path). A session without
 * roles gets the not-authorised page.
 */
export async function requireSession(callbackPath?: string): Promise<AppSession> {
  const session = await getAppSession();
  if (!session) {
    const requested = callbackPath ?? (await headers()).get(REQUEST_PATH_HEADER) ?? "/";
    redirect(buildSignInUrl(requested));
  }
  if (session.user.roles.length === 0) redirect(NOT_AUTHORISED_PATH);
  return session;
}

export type ApiSessionResult = { ok: true; session: AppSession } | { ok: false; response: NextResponse };

/** For route handlers: `{ ok: true, session }`, or a 401 (not signed in) / 403 (no role) / 500 JSON response to return as is. */
export async function requireApiSession(): Promise<ApiSessionResult> {
  let session: AppSession | null;
  try {
    session = await getAppSession();
  } catch (error) {
    // Misconfigured sign-in or session database down: the details go to the server log, not the browser.
    return { ok: false, response: respondWithServerError(error, "could not check your session") };
  }
  if (!session) return { ok: false, response: NextResponse.json({ error: "not signed in" }, { status: 401 }) };
  if (session.user.roles.length === 0) {
    return { ok: false, response: NextResponse.json({ error: "not authorised: no Leasewatch role" }, { status: 403 }) };
  }
  return { ok: true, session };
}

export function canSession(session: AppSession, permission: Permission): boolean {
  return hasPermission(session.user.roles, permission);
}

/**
 * Where the session may use `permission`: every resource, or only those under the
 * prefixes its role map entries name. Every read model and action takes it.
 */
export function scopeFor(session: AppSession, permission: Permission): ViewerScope {
  return scopeForPermission(session.user, permission);
}

/** Throws PermissionError unless the session's roles grant `permission`. Call it first in every mutation. */
export function requirePermission(session: AppSession, permission: Permission): void {
  if (!canSession(session, permission)) throw new PermissionError(permission);
}

/** Maps a PermissionError to its 403 JSON response; null for anything else (rethrow it). */
export function toPermissionResponse(error: unknown): NextResponse | null {
  if (error instanceof PermissionError) {
    return NextResponse.json({ error: error.message, code: error.code }, { status: error.status });
  }
  return null;
}
