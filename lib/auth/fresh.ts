/**
 * The guard for mutations (force-release): roles re-derived from the IdP *now*,
 * and a sign-in recent enough that whoever holds the browser just proved who
 * they are. Fails closed: an IdP that cannot be asked means no.
 */
import { getAuthEnv } from "@/lib/auth/env";
import { toSafeCallbackPath } from "./callback-url";
import { REAUTH_PATH } from "./options";
import { hasPermission, type Permission } from "./roles";
import { resolveRequestSession, type AppSession } from "./session";
import { logServerError } from "./server-error";

/** Force-release needs a sign-in within the last 15 minutes. */
export const DEFAULT_MAX_AUTH_AGE_MS = 15 * 60_000;

export type FreshPermissionCode = "not_signed_in" | "forbidden" | "reauth_required" | "idp_unavailable";

export type FreshPermissionResult =
  | { ok: true; session: AppSession }
  | { ok: false; code: FreshPermissionCode; message: string; session: AppSession | null };

/** Whether the IdP authenticated the user within `maxAuthAgeMs` (no `auth_time` counts as never). */
export function isAuthRecent(session: AppSession, maxAuthAgeMs: number, now: number = Date.now()): boolean {
  return session.authTime !== null && now - session.authTime <= maxAuthAgeMs;
}

/** Re-derives roles from the IdP *now* and checks the sign-in is recent enough; for mutations (force-release). */
export async function checkFreshPermission(permission: Permission, options: { maxAuthAgeMs?: number } = {}): Promise<FreshPermissionResult> {
  const maxAuthAgeMs = options.maxAuthAgeMs ?? DEFAULT_MAX_AUTH_AGE_MS;
  let resolved;
  try {
    resolved = await resolveRequestSession({ fresh: true });
  } catch (error) {
    const correlationId = logServerError(error, "fresh session check failed");
    return { ok: false, code: "idp_unavailable", message: `Your session could not be checked right now; nothing was changed (reference ${correlationId}).`, session: null };
  }
  if (resolved.status !== "ok") {
    return { ok: false, code: "not_signed_in", message: "You are not signed in (or your session ended). Sign in again.", session: null };
  }
  const { session } = resolved;
  if (!resolved.isGroupsFresh) {
    return {
      ok: false,
      code: "idp_unavailable",
      message: "Your identity provider could not confirm your groups just now, so nothing was changed. Try again in a moment.",
      session,
    };
  }
  if (!hasPermission(session.user.roles, permission)) {
    return { ok: false, code: "forbidden", message: `Your current groups do not allow this (needs ${permission}).`, session };
  }
  if (!isAuthRecent(session, maxAuthAgeMs)) {
    const minutes = Math.round(maxAuthAgeMs / 60_000);
    return { ok: false, code: "reauth_required", message: `Confirm it is you: sign in again (needed within the last ${minutes} minutes for this action).`, session };
  }
  return { ok: true, session };
}

/** URL that starts a sign-in forcing the IdP to re-authenticate (prompt=login / max_age=0), returning to callbackPath. */
export function buildReauthUrl(callbackPath: string): string {
  return `${REAUTH_PATH}?${new URLSearchParams({ callbackUrl: toSafeCallbackPath(callbackPath, getAuthEnv().nextAuthUrl) })}`;
}
