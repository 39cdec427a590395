import { describe, expect, it } from "vitest";
import { PRODUCTION_AUTH_ENV } from "@/test/support/env";
import { DEMO_CLIENT_SECRET, EnvError, isLoopbackHost, parseAuthEnv } from "./env";

const VALID = {
  OIDC_ISSUER: "http://127.0.0.1:4400/",
  OIDC_CLIENT_ID: "leasewatch-console",
  OIDC_CLIENT_SECRET: "s3cret",
  NEXTAUTH_URL: "http://127.0.0.1:3000",
  NEXTAUTH_SECRET: "x".repeat(32),
};

/** A production deployment that passes every check. */
const PRODUCTION = PRODUCTION_AUTH_ENV;

describe("parseAuthEnv", () => {
  it("accepts a complete environment and fills the defaults", () => {
    const env = parseAuthEnv(VALID);
    expect(env.issuer).toBe("http://127.0.0.1:4400");
    expect(env.groupsClaim).toBe("groups");
    expect(env.scope).toBe("openid email profile groups");
    expect(env.roleMap.get("leasewatch-operators")).toEqual([{ role: "operator", prefix: null }]);
    expect(env.roleMap.get("leasewatch-viewers")).toEqual([{ role: "viewer", prefix: null }]);
    expect(env.sessionMaxAgeS).toBe(8 * 60 * 60);
    expect(env.groupsRefreshS).toBe(60);
    expect(env.isDemo).toBe(false);
  });

  it("names every missing variable", () => {
    expect(() => parseAuthEnv({})).toThrow(EnvError);
    for (const name of ["OIDC_ISSUER", "OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET", "NEXTAUTH_URL", "NEXTAUTH_SECRET"]) {
      expect(() => parseAuthEnv({ OIDC_ISSUER: "" })).toThrow(name);
    }
  });

  it("rejects a short secret, a non-URL issuer, and a bad role map, saying what to fix", () => {
    expect(() => parseAuthEnv({ ...VALID, NEXTAUTH_SECRET: "short" })).toThrow(/at least 32 characters/);
    expect(() => parseAuthEnv({ ...VALID, OIDC_ISSUER: "ftp://idp" })).toThrow(/OIDC_ISSUER must be an http\(s\) URL/);
    expect(() => parseAuthEnv({ ...VALID, LEASEWATCH_ROLE_MAP: "ops:root" })).toThrow(/LEASEWATCH_ROLE_MAP is invalid/);
    expect(() => parseAuthEnv({ ...VALID, LEASEWATCH_ROLE_MAP: "team-billing:operator:tenant_1" })).toThrow(/LEASEWATCH_ROLE_MAP is invalid .*a scope must end with \*/);
    expect(parseAuthEnv({ ...VALID, LEASEWATCH_ROLE_MAP: "team-billing:operator:tenant_1:*" }).roleMap.get("team-billing")).toEqual([{ role: "operator", prefix: "tenant_1:" }]);
    expect(() => parseAuthEnv({ ...VALID, OIDC_SCOPE: "email profile" })).toThrow(/must include openid/);
  });

  it("reads the session lifetime and the groups refresh interval, within bounds", () => {
    const env = parseAuthEnv({ ...VALID, LEASEWATCH_SESSION_MAX_AGE: "3600", LEASEWATCH_GROUPS_REFRESH: "5" });
    expect(env.sessionMaxAgeS).toBe(3600);
    expect(env.groupsRefreshS).toBe(5);
    expect(() => parseAuthEnv({ ...VALID, LEASEWATCH_GROUPS_REFRESH: "600" })).toThrow(/at most 300 seconds/);
    expect(() => parseAuthEnv({ ...VALID, LEASEWATCH_SESSION_MAX_AGE: "8h" })).toThrow(/LEASEWATCH_SESSION_MAX_AGE must be a number of seconds/);
    expect(() => parseAuthEnv({ ...VALID, LEASEWATCH_SESSION_MAX_AGE: "0" })).toThrow(/at least 10 seconds/);
  });
});

describe("production refusals (NODE_ENV=production)", () => {
  it("accepts a proper production deployment", () => {
    expect(parseAuthEnv(PRODUCTION).issuer).toBe("https://sso.example.com/realms/ops");
  });

  it("refuses an http:// console URL", () => {
    expect(() => parseAuthEnv({ ...PRODUCTION, NEXTAUTH_URL: "http://leasewatch.example.com" })).toThrow(/Refusing to start in production: NEXTAUTH_URL must be an https:\/\/ URL/);
  });

  it("refuses an http:// issuer", () => {
    expect(() => parseAuthEnv({ ...PRODUCTION, OIDC_ISSUER: "http://sso.example.com" })).toThrow(/OIDC_ISSUER must be an https:\/\/ URL/);
  });

  it("refuses a loopback issuer unless LEASEWATCH_DEMO=1", () => {
    for (const issuer of ["https://127.0.0.1:4400", "https://localhost:4400", "https://[::1]:4400", "https://127.1.2.3"]) {
      expect(() => parseAuthEnv({ ...PRODUCTION, OIDC_ISSUER: issuer })).toThrow(/OIDC_ISSUER points at this machine/);
      expect(() => parseAuthEnv({ ...PRODUCTION, OIDC_ISSUER: issuer, LEASEWATCH_DEMO: "1" })).not.toThrow();
    }
  });

  it("refuses the demo client secret for an issuer that is not on this machine, even with LEASEWATCH_DEMO=1", () => {
    expect(() => parseAuthEnv({ ...PRODUCTION, OIDC_CLIENT_SECRET: DEMO_CLIENT_SECRET })).toThrow(/OIDC_CLIENT_SECRET is the public demo secret/);
    expect(() => parseAuthEnv({ ...PRODUCTION, OIDC_CLIENT_SECRET: DEMO_CLIENT_SECRET, LEASEWATCH_DEMO: "1" })).toThrow(/OIDC_CLIENT_SECRET is the public demo secret/);
    // The local demo (loopback IdP, flag set) keeps its secret.
    expect(() => parseAuthEnv({ ...PRODUCTION, OIDC_ISSUER: "https://127.0.0.1:4400", OIDC_CLIENT_SECRET: DEMO_CLIENT_SECRET, LEASEWATCH_DEMO: "1" })).not.toThrow();
  });

  it("refuses an unset LEASEWATCH_ROLE_MAP, even in the demo", () => {
    const noRoleMap: Record<string, string> = { ...PRODUCTION };
    delete noRoleMap.LEASEWATCH_ROLE_MAP;
    expect(() => parseAuthEnv(noRoleMap)).toThrow(/LEASEWATCH_ROLE_MAP must be set explicitly/);
    expect(() => parseAuthEnv({ ...noRoleMap, LEASEWATCH_ROLE_MAP: "" })).toThrow(/LEASEWATCH_ROLE_MAP must be set explicitly/);
    expect(() => parseAuthEnv({ ...noRoleMap, LEASEWATCH_DEMO: "1" })).toThrow(/LEASEWATCH_ROLE_MAP must be set explicitly/);
  });

  it("lets the demo run on loopback over http, and only on loopback", () => {
    const demo = { ...VALID, NODE_ENV: "production", LEASEWATCH_DEMO: "1", OIDC_CLIENT_SECRET: DEMO_CLIENT_SECRET, LEASEWATCH_ROLE_MAP: "leasewatch-operators:operator" };
    expect(parseAuthEnv(demo).isDemo).toBe(true);
    expect(() => parseAuthEnv({ ...demo, NEXTAUTH_URL: "http://leasewatch.example.com" })).toThrow(/NEXTAUTH_URL must be an https:\/\/ URL/);
    // Without the flag, the same demo set-up is refused for every reason at once.
    const notDemo: Record<string, string> = { ...demo };
    delete notDemo.LEASEWATCH_DEMO;
    expect(() => parseAuthEnv(notDemo)).toThrow(/NEXTAUTH_URL.*OIDC_ISSUER must be an https.*points at this machine.*demo secret/);
  });

  it("does not apply outside production", () => {
    expect(() => parseAuthEnv({ ...VALID, OIDC_CLIENT_SECRET: DEMO_CLIENT_SECRET })).not.toThrow();
  });
});

describe("isLoopbackHost", () => {
  it("knows loopback names and addresses", () => {
    for (const host of ["localhost", "app.localhost", "127.0.0.1", "127.255.0.9", "[::1]", "::1"]) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ["sso.example.com", "10.0.0.1", "127.example.com", "localhost.example.com"]) expect(isLoopbackHost(host)).toBe(false);
  });
});
