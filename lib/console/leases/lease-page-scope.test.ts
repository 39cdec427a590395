import { describe, expect, it } from "vitest";
import { leasePageResource } from "./lease-page-scope";
import { isResourceInScope } from "@/lib/auth/scope";

describe("leasePageResource: the resource a lease page path names, as the page reads it", () => {
  it("decodes each segment and joins them with /", () => {
    expect(leasePageResource("/locks/pg-main/tenant_2%3Ainvoice-sync")).toBe("tenant_2:invoice-sync");
    expect(leasePageResource("/locks/pg-main/tenant_2:reports/2026-04")).toBe("tenant_2:reports/2026-04");
    expect(leasePageResource("/locks/redis-main/tenant_2%3Aa%2Fb")).toBe("tenant_2:a/b");
  });

  it("is null for other pages and for paths the page itself reports as bad input", () => {
    expect(leasePageResource("/locks")).toBeNull();
    expect(leasePageResource("/locks/pg-main")).toBeNull();
    expect(leasePageResource("/owners/worker-1")).toBeNull();
    expect(leasePageResource("/locks/pg-main/%E0%A4%A")).toBeNull();
  });

  it("gives another tenant's name to the scope check, so the proxy can answer 404 before the page streams", () => {
    const scope = { kind: "prefixes", prefixes: ["tenant_1:"] } as const;
    expect(isResourceInScope(scope, leasePageResource("/locks/pg-main/tenant_1%3Ainvoice-sync")!)).toBe(true);
    expect(isResourceInScope(scope, leasePageResource("/locks/pg-main/tenant_2%3Ainvoice-sync")!)).toBe(false);
    // A prefix-looking name from another tenant is not smuggled in by encoding.
    expect(isResourceInScope(scope, leasePageResource("/locks/pg-main/tenant_10%3Ax")!)).toBe(false);
  });
});
