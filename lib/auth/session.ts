import { getServerSession } from "next-auth";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { connection, NextResponse } from "next/server";
import { EnvError } from "@/lib/env";
import { getAuthOptions, NOT_AUTHORISED_PATH, SIGNIN_PATH } from "./options";
import { hasPermission, type Permission, type Role } from "./roles";

/** The signed-in user as pages and handlers see it. */
export interface AppSession {
  user: { id: string; email: string | null; name: string | null; roles: Role[] };
}

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

/** The current session, or null when nobody is signed in. */
export async function getAppSession(): Promise<AppSession | null> {
  // Per-request by nature: this also keeps `next build` from prerendering (and reading
  // the sign-in environment) for any page that asks for the session.
  await connection();
  const session = await getServerSession(getAuthOptions());
  if (!session?.user?.id) return null;
  return { user: session.user };
}

/** Only same-origin paths may be a callback target (no open redirects). */
function toSafePath(path: string | null | undefined): string {
  return path && path.startsWith("/") && !path.startsWith("//") && !path.startsWith("/\\") ? path : "/";
}

export function buildSignInUrl(callbackPath: string): string {
  return `${SIGNIN_PATH}?${new URLSearchParams({ callbackUrl: toSafePath(callbackPath) })}`;
}

/**
 * For pages, layouts and server components: the session, or a redirect to sign-in
 * (coming back to `callbackPath`, default the requested path). A session without
 * roles gets the not-authorised page.
 */
export async function requireSession(callbackPath?: string): Promise<AppSession> {
  const session = await getAppSession();
  if (!session) {
    const requested = callbackPath ?? (await headers()).get(REQUEST_PATH_HEADER);
    redirect(buildSignInUrl(toSafePath(requested)));
  }
  if (session.user.roles.length === 0) redirect(NOT_AUTHORISED_PATH);
  return session;
}

export type ApiSessionResult = { ok: true; session: AppSession } | { ok: false; response: NextResponse };

/** For route handlers: `{ ok: true, session }`, or a 401 (not signed in) / 403 (no role) JSON response to return as is. */
export async function requireApiSession(): Promise<ApiSessionResult> {
  let session: AppSession | null;
  try {
    session = await getAppSession();
  } catch (error) {
    // Misconfigured sign-in: say what to fix instead of a bare 500.
    if (error instanceof EnvError) return { ok: false, response: NextResponse.json({ error: error.message }, { status: 500 }) };
    throw error;
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
