/**
 * Roles and what they may do. Roles come from the identity provider's groups
 * (see LEASEWATCH_ROLE_MAP); permissions are checked on the server by every
 * page, route handler and server action that needs them.
 */

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

/** group → role, parsed from "group-a:operator,group-b:viewer". */
export type RoleMap = ReadonlyMap<string, Role>;

export class RoleMapError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RoleMapError";
  }
}

export function parseRoleMap(raw: string): RoleMap {
  const map = new Map<string, Role>();
  for (const part of raw.split(",")) {
    const entry = part.trim();
    if (!entry) continue;
    // The group name may itself contain ':' (e.g. "org:team"), so the role is after the last one.
    const at = entry.lastIndexOf(":");
    const group = at > 0 ? entry.slice(0, at).trim() : "";
    const role = at > 0 ? entry.slice(at + 1).trim() : "";
    if (!group || !role) throw new RoleMapError(`"${entry}" is not group:role`);
    if (!isRole(role)) throw new RoleMapError(`"${entry}": role must be one of ${ROLES.join(", ")}`);
    map.set(group, role);
  }
  if (map.size === 0) throw new RoleMapError("no group:role pairs");
  return map;
}

/**
 * Roles for a user's groups. Unknown groups grant nothing: a user with no mapped
 * group ends up with no roles, and no roles means no access.
 */
export function mapGroupsToRoles(groups: readonly string[], roleMap: RoleMap): Role[] {
  const roles = new Set<Role>();
  for (const group of groups) {
    const role = roleMap.get(group);
    if (role) roles.add(role);
  }
  return ROLES.filter((role) => roles.has(role));
}

/** Groups from an id-token/userinfo claim that may be an array or a single string. */
export function readGroupsClaim(profile: Record<string, unknown>, claim: string): string[] {
  const value = profile[claim];
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === "string");
  if (typeof value === "string" && value) return [value];
  return [];
}
