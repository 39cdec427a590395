import { parseLeaseDetailParams } from "@/lib/console/shared/params";
import { hasPermission, scopeForPermission } from "@/lib/auth/roles";
import { isResourceInScope } from "@/lib/auth/scope";
import { resolveSession, type SessionTokenClaims } from "@/lib/auth/session-state";

/** `/locks/<store>/<resource segments…>`, as the lease page's route reads it (still percent-encoded). */
const LEASE_PAGE_PATH = /^\/locks\/([^/]+)\/(.+)$/;

/** The resource a lease page path names, decoded as the page decodes it; null for any other path or one that does not parse. */
export function leasePageResource(pathname: string): string | null {
  const match = LEASE_PAGE_PATH.exec(pathname);
  if (!match) return null;
  const parsed = parseLeaseDetailParams({ store: match[1]!, resource: match[2]!.split("/") });
  return parsed.ok ? parsed.params.resource : null;
}

/**
 * Whether `pathname` is a lease page for a resource outside the signed-in viewer's scope.
 * The proxy asks before anything renders: the page streams behind its loading skeleton,
 * which commits the response to 200, so a real 404 can only be decided here. Decided on the
 * name alone (no store is read), so a resource that exists and one that never did answer
 * alike. Whatever cannot be decided here (signed out, no read permission, a path that does
 * not parse) is false and left to the page, which checks the session and scope itself.
 */
export async function isLeasePageOutOfScope(pathname: string, claims: SessionTokenClaims | null): Promise<boolean> {
  const resource = leasePageResource(pathname);
  if (resource === null) return false;
  const resolved = await resolveSession(claims);
  if (resolved.status !== "ok" || !hasPermission(resolved.session.user.roles, "leases:read")) return false;
  return !isResourceInScope(scopeForPermission(resolved.session.user, "leases:read"), resource);
}
