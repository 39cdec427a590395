import { describe, expect, it } from "vitest";
import { EnvError, parseAuthEnv } from "./env";

const VALID = {
  OIDC_ISSUER: "http://127.0.0.1:4400/",
  OIDC_CLIENT_ID: "leasewatch-console",
  OIDC_CLIENT_SECRET: "s3cret",
  NEXTAUTH_URL: "http://127.0.0.1:3000",
  NEXTAUTH_SECRET: "x".repeat(32),
};

describe("parseAuthEnv", () => {
  it("accepts a complete environment and fills the defaults", () => {
    const env = parseAuthEnv(VALID);
    expect(env.issuer).toBe("http://127.0.0.1:4400");
    expect(env.groupsClaim).toBe("groups");
    expect(env.scope).toBe("openid email profile groups");
    expect(env.roleMap.get("leasewatch-operators")).toBe("operator");
    expect(env.roleMap.get("leasewatch-viewers")).toBe("viewer");
  });

  it("names every missing variable", () => {
    expect(() => parseAuthEnv({})).toThrow(EnvError);
    try {
      parseAuthEnv({ OIDC_ISSUER: "" });
    } catch (error) {
      const message = (error as Error).message;
      for (const name of ["OIDC_ISSUER", "OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET", "NEXTAUTH_URL", "NEXTAUTH_SECRET"]) {
        expect(message).toContain(name);
      }
    }
  });

  it("rejects a short secret, a non-URL issuer, and a bad role map, saying what to fix", () => {
    expect(() => parseAuthEnv({ ...VALID, NEXTAUTH_SECRET: "short" })).toThrow(/at least 32 characters/);
    expect(() => parseAuthEnv({ ...VALID, OIDC_ISSUER: "ftp://idp" })).toThrow(/OIDC_ISSUER must be an http\(s\) URL/);
    expect(() => parseAuthEnv({ ...VALID, LEASEWATCH_ROLE_MAP: "ops:root" })).toThrow(/LEASEWATCH_ROLE_MAP is invalid/);
    expect(() => parseAuthEnv({ ...VALID, OIDC_SCOPE: "email profile" })).toThrow(/must include openid/);
  });
});
