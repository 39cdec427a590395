import { describe, expect, it } from "vitest";
import { bulkReleaseScopeNote, SCOPE_ALL, scopeOf } from "./scope";

describe("bulkReleaseScopeNote: bulk release is offered only for a prefix inside the operator's scope", () => {
  const tenant1 = scopeOf(["tenant_1:"]);

  it("offers it (no note) for a prefix inside the scope, and for any prefix to an unscoped operator", () => {
    expect(bulkReleaseScopeNote(tenant1, "tenant_1:")).toBeNull();
    expect(bulkReleaseScopeNote(tenant1, "tenant_1:billing:")).toBeNull();
    expect(bulkReleaseScopeNote(SCOPE_ALL, "tenant_2:")).toBeNull();
    expect(bulkReleaseScopeNote(SCOPE_ALL, "tenant_")).toBeNull();
  });

  it("says plainly that another tenant's prefix is outside the scope, rather than that nothing is overdue there", () => {
    expect(bulkReleaseScopeNote(tenant1, "tenant_2:")).toBe("Bulk release is limited to your scope (tenant_1:*); tenant_2: is outside it.");
    // A name that merely starts like the scope's is another tenant.
    expect(bulkReleaseScopeNote(tenant1, "tenant_10:")).toBe("Bulk release is limited to your scope (tenant_1:*); tenant_10: is outside it.");
    expect(bulkReleaseScopeNote(tenant1, "tenant_1")).toBe("Bulk release is limited to your scope (tenant_1:*); tenant_1 reaches beyond it.");
  });

  it("refuses a prefix broader than the scope too: it would cover other tenants the operator cannot see", () => {
    expect(bulkReleaseScopeNote(tenant1, "tenant_")).toBe("Bulk release is limited to your scope (tenant_1:*); tenant_ reaches beyond it.");
    expect(bulkReleaseScopeNote(scopeOf(["tenant_1:", "tenant_3:"]), "tenant_")).toBe(
      "Bulk release is limited to your scope (tenant_1:*, tenant_3:*); tenant_ reaches beyond it.",
    );
  });
});
