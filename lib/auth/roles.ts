/**
 * Roles and what they may do. Roles come from the identity provider's groups
 * (see LEASEWATCH_ROLE_MAP); permissions are checked on the server by every
 * page, route handler and server action that needs them.
 */

import { SCOPE_ALL, SCOPE_NONE, scopeOf, unionScopes, type ViewerScope } from "./scope";

export const ROLES = ["viewer", "operator"] as const;
export type Role = (typeof ROLES)[number];

/** Each permission lists the roles that hold it (an `as const` table, one place to read). */
export const PERMISSIONS = {
  "leases:read": ["viewer", "operator"],
  "events:read": ["viewer", "operator"],
  "metrics:read": ["viewer", "operator"],
  "health:read": ["viewer", "operator"],
  "audit:read": ["viewer", "operator"],
  "leases:force_release": ["operator"],
  // Observed locks: ShedLock rows and Redis keys, released compare-first like a lease.
  "observed:release": ["operator"],
  // Ending an advisory lock's holding session: granted to operators too, because the store's own
  // releaseUrl (a role with pg_signal_backend, configured per store) is what turns it on at all.
  "observed:terminate": ["operator"],
  // Scopes are no secret (viewers already see every tenant's leases); creating or revoking a credential is an operator's act.
  "tokens:read": ["viewer", "operator"],
  "tokens:manage": ["operator"],
} as const satisfies Record<string, readonly Role[]>;
export type Permission = keyof typeof PERMISSIONS;

/** Higher rank wins when a user holds several roles. */
const ROLE_RANK: Record<Role, number> = { viewer: 1, operator: 2 };

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export function hasPermission(roles: readonly Role[], permission: Permission): boolean {
  const allowed: readonly Role[] = PERMISSIONS[permission];
  return roles.some((role) => allowed.includes(role));
}

/** The most privileged role, for display ("operator" over "viewer"); null when none. */
export function getPrimaryRole(roles: readonly Role[]): Role | null {
  let best: Role | null = null;
  for (const role of roles) if (best === null || ROLE_RANK[role] > ROLE_RANK[best]) best = role;
  return best;
}

/** One role map entry: a role, everywhere (`prefix: null`) or only for resources starting with `prefix`. */
export interface RoleGrant {
  role: Role;
  prefix: string | null;
}

/** group → its grants, parsed from "group-a:operator,group-b:viewer:tenant_1:*". */
export type RoleMap = ReadonlyMap<string, readonly RoleGrant[]>;

export class RoleMapError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RoleMapError";
  }
}

/**
 * Entries are `group:role` (the role everywhere) or `group:role:<prefix>*` (only
 * for resources starting with <prefix>). Group names and prefixes may contain ':'
 * (e.g. "org:team", "tenant_1:"), so a scoped entry is recognised by its trailing
 * `*` and split at the last ':'-separated segment that names a role. Several
 * entries for one group add up.
 */
export function parseRoleMap(raw: string): RoleMap {
  const map = new Map<string, RoleGrant[]>();
  for (const part of raw.split(",")) {
    const entry = part.trim();
    if (!entry) continue;
    const { group, grant } = entry.endsWith("*") ? parseScopedEntry(entry) : parseUnscopedEntry(entry);
    const grants = map.get(group) ?? [];
    if (!grants.some((g) => g.role === grant.role && g.prefix === grant.prefix)) grants.push(grant);
    map.set(group, grants);
  }
  if (map.size === 0) throw new RoleMapError("no group:role pairs");
  return map;
}

function parseUnscopedEntry(entry: string): { group: string; grant: RoleGrant } {
  // The group name may itself contain ':' (e.g. "org:team"), so the role is after the last one.
  const at = entry.lastIndexOf(":");
  const group = at > 0 ? entry.slice(0, at).trim() : "";
  const role = at > 0 ? entry.slice(at + 1).trim() : "";
  if (!group || !role) throw new RoleMapError(`"${entry}" is not group:role or group:role:<prefix>*`);
  if (!isRole(role)) {
    const looksScoped = entry.split(":").slice(1, -1).some((s) => isRole(s.trim()));
    const hint = looksScoped ? " (a scope must end with *, e.g. group:viewer:tenant_1:*)" : "";
    throw new RoleMapError(`"${entry}": role must be one of ${ROLES.join(", ")}${hint}`);
  }
  return { group, grant: { role, prefix: null } };
}

function parseScopedEntry(entry: string): { group: string; grant: RoleGrant } {
  const segments = entry.split(":");
  // The rightmost role-named segment with a group before it: the rest is the scope.
  for (let i = segments.length - 2; i >= 1; i--) {
    const role = segments[i]!.trim();
    if (!isRole(role)) continue;
    const group = segments.slice(0, i).join(":").trim();
    const scope = segments.slice(i + 1).join(":").trim();
    if (!group) break;
    const prefix = scope.slice(0, -1);
    if (!prefix) throw new RoleMapError(`"${entry}": the scope "*" alone means everything; write ${group}:${role} instead`);
    if (prefix.includes("*")) throw new RoleMapError(`"${entry}": '*' may only end a scope (a prefix match), not appear inside it`);
    if (/\s/.test(prefix)) throw new RoleMapError(`"${entry}": a scope prefix may not contain spaces`);
    return { group, grant: { role, prefix } };
  }
  throw new RoleMapError(`"${entry}" is not group:role:<prefix>* (role one of ${ROLES.join(", ")})`);
}

/**
 * Roles for a user's groups. Unknown groups grant nothing: a user with no mapped
 * group ends up with no roles, and no roles means no access.
 */
export function mapGroupsToRoles(groups: readonly string[], roleMap: RoleMap): Role[] {
  return mapGroupsToAccess(groups, roleMap).roles;
}

/** A user's roles and, per role, where it applies (union over their groups; an unscoped grant wins). */
export interface RoleAccess {
  roles: Role[];
  scopes: Partial<Record<Role, ViewerScope>>;
}

export function mapGroupsToAccess(groups: readonly string[], roleMap: RoleMap): RoleAccess {
  const prefixes = new Map<Role, ViewerScope[]>();
  for (const group of groups) {
    for (const grant of roleMap.get(group) ?? []) {
      const list = prefixes.get(grant.role) ?? [];
      list.push(grant.prefix === null ? SCOPE_ALL : scopeOf([grant.prefix]));
      prefixes.set(grant.role, list);
    }
  }
  const roles = ROLES.filter((role) => prefixes.has(role));
  const scopes: Partial<Record<Role, ViewerScope>> = {};
  for (const role of roles) scopes[role] = unionScopes(prefixes.get(role)!);
  return { roles, scopes };
}

/**
 * Where `permission` applies for this user: the union of the scopes of their roles
 * that hold it; nowhere without such a role.
 */
export function scopeForPermission(access: RoleAccess, permission: Permission): ViewerScope {
  const allowed: readonly Role[] = PERMISSIONS[permission];
  const scopes = access.roles.filter((r) => allowed.includes(r)).map((r) => access.scopes[r] ?? SCOPE_NONE);
  return scopes.length === 0 ? SCOPE_NONE : unionScopes(scopes);
}

/** Groups from an id-token/userinfo claim that may be an array or a single string. */
export function readGroupsClaim(profile: Record<string, unknown>, claim: string): string[] {
  const value = profile[claim];
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === "string");
  if (typeof value === "string" && value) return [value];
  return [];
}
