import { describe, expect, it } from "vitest";
import { DEFAULT_ROLE_MAP } from "@/lib/auth/env";
import { getPrimaryRole, hasPermission, mapGroupsToAccess, mapGroupsToRoles, parseRoleMap, readGroupsClaim, RoleMapError, scopeForPermission } from "./roles";
import { isResourceInScope, readPrefixes, scopeOf, SCOPE_ALL } from "./scope";

describe("role map", () => {
  const map = parseRoleMap(DEFAULT_ROLE_MAP);

  it("maps the default groups to operator and viewer", () => {
    expect(mapGroupsToRoles(["leasewatch-operators"], map)).toEqual(["operator"]);
    expect(mapGroupsToRoles(["leasewatch-viewers", "staff"], map)).toEqual(["viewer"]);
  });

  it("gives a user with no mapped group no role at all", () => {
    expect(mapGroupsToRoles(["contractors"], map)).toEqual([]);
    expect(mapGroupsToRoles([], map)).toEqual([]);
  });

  it("keeps ':' inside group names and rejects unknown roles with a clear message", () => {
    expect(parseRoleMap("org:sre:operator").get("org:sre")).toEqual([{ role: "operator", prefix: null }]);
    expect(() => parseRoleMap("ops:admin")).toThrow(RoleMapError);
    expect(() => parseRoleMap("ops:admin")).toThrow(/role must be one of viewer, operator/);
    expect(() => parseRoleMap(" , ")).toThrow(/no group:role pairs/);
    expect(() => parseRoleMap("justagroup")).toThrow(/not group:role/);
  });

  it("reads the groups claim as an array or a single string", () => {
    expect(readGroupsClaim({ groups: ["a", 3, "b"] }, "groups")).toEqual(["a", "b"]);
    expect(readGroupsClaim({ roles: "a" }, "roles")).toEqual(["a"]);
    expect(readGroupsClaim({}, "groups")).toEqual([]);
  });
});

describe("scoped role map entries", () => {
  it("parses group:role:<prefix>* from the right, with ':' in the group and in the prefix", () => {
    const map = parseRoleMap("team-billing:operator:tenant_1*, org:team:viewer:tenant_2:billing:*, ops:viewer");
    expect(map.get("team-billing")).toEqual([{ role: "operator", prefix: "tenant_1" }]);
    expect(map.get("org:team")).toEqual([{ role: "viewer", prefix: "tenant_2:billing:" }]);
    expect(map.get("ops")).toEqual([{ role: "viewer", prefix: null }]);
  });

  it("adds up several entries for one group", () => {
    const map = parseRoleMap("g:operator:tenant_1:*,g:operator:tenant_2:*,g:viewer");
    expect(map.get("g")).toEqual([
      { role: "operator", prefix: "tenant_1:" },
      { role: "operator", prefix: "tenant_2:" },
      { role: "viewer", prefix: null },
    ]);
  });

  it("refuses bad scoped entries with a message that says what to write", () => {
    expect(() => parseRoleMap("g:viewer:*")).toThrow(/means everything; write g:viewer instead/);
    expect(() => parseRoleMap("g:viewer:ten*ant*")).toThrow(/'\*' may only end a scope/);
    expect(() => parseRoleMap("g:admin:tenant_1*")).toThrow(/not group:role:<prefix>\*/);
    expect(() => parseRoleMap("viewer:tenant_1*")).toThrow(/not group:role:<prefix>\*/);
    // A forgotten '*' is not silently read as a group called "g:viewer" with a role "tenant_1".
    expect(() => parseRoleMap("g:viewer:tenant_1")).toThrow(/a scope must end with \*/);
  });

  it("unions a user's groups per role; an unscoped grant wins", () => {
    const map = parseRoleMap("a:operator:tenant_1:*,b:viewer:tenant_2:*,c:viewer,d:operator:tenant_1:billing:*");
    const scoped = mapGroupsToAccess(["a", "b"], map);
    expect(scoped.roles).toEqual(["viewer", "operator"]);
    // Reading: viewer (tenant_2) ∪ operator (tenant_1).
    expect(scopeForPermission(scoped, "leases:read")).toEqual({ kind: "prefixes", prefixes: ["tenant_1:", "tenant_2:"] });
    // Force-release: only the operator grant's prefix.
    expect(scopeForPermission(scoped, "leases:force_release")).toEqual({ kind: "prefixes", prefixes: ["tenant_1:"] });
    // c is unscoped: reading is everywhere; force-release stays limited to tenant_1.
    const wide = mapGroupsToAccess(["a", "c"], map);
    expect(scopeForPermission(wide, "leases:read")).toEqual(SCOPE_ALL);
    expect(scopeForPermission(wide, "leases:force_release")).toEqual({ kind: "prefixes", prefixes: ["tenant_1:"] });
    // A narrower prefix under a wider one adds nothing.
    expect(scopeForPermission(mapGroupsToAccess(["a", "d"], map), "leases:force_release")).toEqual({ kind: "prefixes", prefixes: ["tenant_1:"] });
    // Without the role, nowhere.
    expect(scopeForPermission(mapGroupsToAccess(["b"], map), "leases:force_release")).toEqual({ kind: "prefixes", prefixes: [] });
  });

  it("keeps unscoped maps behaving as before", () => {
    const access = mapGroupsToAccess(["leasewatch-operators"], parseRoleMap(DEFAULT_ROLE_MAP));
    expect(access.roles).toEqual(["operator"]);
    expect(scopeForPermission(access, "leases:force_release")).toEqual(SCOPE_ALL);
  });

  it("matches resources by plain prefix and cuts a requested prefix to the scope", () => {
    const scope = scopeOf(["tenant_1:", "tenant_2:"]);
    expect(isResourceInScope(scope, "tenant_1:billing:a")).toBe(true);
    expect(isResourceInScope(scope, "tenant_10:billing:a")).toBe(false);
    expect(isResourceInScope(scopeOf(["tenant_1"]), "tenant_10:billing:a")).toBe(true);
    expect(readPrefixes(scope, undefined)).toEqual(["tenant_1:", "tenant_2:"]);
    expect(readPrefixes(scope, "tenant_1:billing")).toEqual(["tenant_1:billing"]);
    expect(readPrefixes(scope, "tenant_")).toEqual(["tenant_1:", "tenant_2:"]);
    expect(readPrefixes(scope, "tenant_3:")).toEqual([]);
    expect(readPrefixes(SCOPE_ALL, undefined)).toBeUndefined();
  });
});

describe("permissions", () => {
  it("lets only operators force-release, and both roles read", () => {
    expect(hasPermission(["operator"], "leases:force_release")).toBe(true);
    expect(hasPermission(["viewer"], "leases:force_release")).toBe(false);
    expect(hasPermission(["viewer"], "leases:read")).toBe(true);
    expect(hasPermission([], "leases:read")).toBe(false);
  });

  it("shows the most privileged role", () => {
    expect(getPrimaryRole(["viewer", "operator"])).toBe("operator");
    expect(getPrimaryRole([])).toBeNull();
  });
});
