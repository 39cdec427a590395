import { describe, expect, it } from "vitest";
import { assertDemoIdpAllowed, DemoIdpRefusedError, startOidcProvider } from "./oidc-provider";

describe("the demo IdP", () => {
  it("refuses to start in production without LEASEWATCH_DEMO=1", async () => {
    expect(() => assertDemoIdpAllowed({ NODE_ENV: "production" })).toThrow(DemoIdpRefusedError);
    expect(() => assertDemoIdpAllowed({ NODE_ENV: "production", LEASEWATCH_DEMO: "0" })).toThrow(/must not run in production/);
    await expect(startOidcProvider({ port: 1, redirectUris: [], env: { NODE_ENV: "production" } })).rejects.toThrow(DemoIdpRefusedError);
  });

  it("starts for the demo and outside production", () => {
    expect(() => assertDemoIdpAllowed({ NODE_ENV: "production", LEASEWATCH_DEMO: "1" })).not.toThrow();
    expect(() => assertDemoIdpAllowed({ NODE_ENV: "development" })).not.toThrow();
    expect(() => assertDemoIdpAllowed({})).not.toThrow();
  });
});
