import { describe, expect, it } from "vitest";
import { DEFAULT_ROLE_MAP } from "@/lib/env";
import { getPrimaryRole, hasPermission, mapGroupsToRoles, parseRoleMap, readGroupsClaim, RoleMapError } from "./roles";

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
    expect(parseRoleMap("org:sre:operator").get("org:sre")).toBe("operator");
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
