import { describe, expect, it } from "vitest";
import { DEMO_AUDIT_KEY } from "@/lib/audit/config";
import { DEMO_CLIENT_SECRET } from "@/lib/auth/env";
import { PRODUCTION_AUTH_ENV } from "@/test/support/env";
import { findStartupProblems } from "./startup-checks";

/** A production deployment that passes every check. */
const PRODUCTION = {
  ...PRODUCTION_AUTH_ENV,
  LEASEWATCH_STORES: JSON.stringify([{ name: "pg-main", kind: "postgres", url: "postgres://127.0.0.1:5432/postgres" }]),
  LEASEWATCH_AUDIT_KEY: "a-real-audit-key-from-a-secret-store-0000",
} as const;

/** The local demo stack as scripts/stack.ts starts it. */
const LOCAL_DEMO = {
  ...PRODUCTION,
  LEASEWATCH_DEMO: "1",
  OIDC_ISSUER: "http://127.0.0.1:4400",
  NEXTAUTH_URL: "http://127.0.0.1:3000",
  OIDC_CLIENT_SECRET: DEMO_CLIENT_SECRET,
  LEASEWATCH_AUDIT_KEY: DEMO_AUDIT_KEY,
} as const;

describe("findStartupProblems", () => {
  it("starts a proper production deployment, and the local demo", () => {
    expect(findStartupProblems({ ...PRODUCTION })).toEqual({ problems: [], isFatal: false });
    expect(findStartupProblems({ ...LOCAL_DEMO })).toEqual({ problems: [], isFatal: false });
  });

  it("refuses to start in production with the public demo audit key, naming the variable to set", () => {
    const { problems, isFatal } = findStartupProblems({ ...PRODUCTION, LEASEWATCH_AUDIT_KEY: DEMO_AUDIT_KEY });
    expect(isFatal).toBe(true);
    expect(problems.join("\n")).toMatch(/LEASEWATCH_AUDIT_KEY is the public demo key.*set LEASEWATCH_AUDIT_KEY/);
    // The demo flag does not make it acceptable off this machine.
    const flagged = findStartupProblems({ ...PRODUCTION, LEASEWATCH_DEMO: "1", LEASEWATCH_AUDIT_KEY: DEMO_AUDIT_KEY });
    expect(flagged.isFatal).toBe(true);
    expect(flagged.problems.join("\n")).toMatch(/LEASEWATCH_AUDIT_KEY is the public demo key/);
    // Outside production it is only reported.
    expect(findStartupProblems({ ...PRODUCTION, NODE_ENV: "development", LEASEWATCH_AUDIT_KEY: DEMO_AUDIT_KEY }).isFatal).toBe(false);
  });

  it("refuses to start in production with the demo client secret and an issuer that is not loopback, even in the demo", () => {
    const { problems, isFatal } = findStartupProblems({ ...LOCAL_DEMO, OIDC_ISSUER: "https://sso.example.com", NEXTAUTH_URL: "https://leasewatch.example.com", LEASEWATCH_AUDIT_KEY: PRODUCTION.LEASEWATCH_AUDIT_KEY });
    expect(isFatal).toBe(true);
    expect(problems.join("\n")).toMatch(/OIDC_CLIENT_SECRET is the public demo secret/);
  });
});
