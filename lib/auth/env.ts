import { z } from "zod";
import { parseRoleMap, RoleMapError, type RoleMap } from "@/lib/auth/roles";

/**
 * Server environment for sign-in, validated once on first use (not at import, so
 * `next build` works without secrets). A bad or missing value throws an EnvError
 * naming the variable and what to fix.
 */

export const DEFAULT_ROLE_MAP = "leasewatch-operators:operator,leasewatch-viewers:viewer";
/** The demo and the browser tests add a team limited to one tenant (the demo IdP's user dave). */
export const DEMO_ROLE_MAP = `${DEFAULT_ROLE_MAP},team-billing:operator:tenant_1:*`;
export const DEFAULT_GROUPS_CLAIM = "groups";
/** Most IdPs only release group membership when asked for a `groups` scope. */
export const DEFAULT_SCOPE = "openid email profile groups";
/** The local demo IdP's client secret (scripts/oidc-provider.ts); refused in production outside the demo. */
export const DEMO_CLIENT_SECRET = "leasewatch-demo-secret";
/** A session ends this long after sign-in, however often it is refreshed. */
export const DEFAULT_SESSION_MAX_AGE_S = 8 * 60 * 60;
/** Groups are re-read from the IdP at most this often per session (roles follow within this, well under 5 minutes). */
export const DEFAULT_GROUPS_REFRESH_S = 60;
/** Longest allowed refresh interval: the promise is that a removed group takes effect within 5 minutes. */
export const MAX_GROUPS_REFRESH_S = 300;

const ZHttpUrl = (name: string) =>
  z
    .string({ error: `${name} is required` })
    .min(1, { error: `${name} is required` })
    .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), { error: `${name} must be an http(s) URL` });

const ZAuthEnv = z.object({
  OIDC_ISSUER: ZHttpUrl("OIDC_ISSUER"),
  OIDC_CLIENT_ID: z.string({ error: "OIDC_CLIENT_ID is required" }).min(1, { error: "OIDC_CLIENT_ID is required" }),
  OIDC_CLIENT_SECRET: z.string({ error: "OIDC_CLIENT_SECRET is required" }).min(1, { error: "OIDC_CLIENT_SECRET is required" }),
  OIDC_GROUPS_CLAIM: z
    .string()
    .regex(/^[A-Za-z0-9_:./-]{1,128}$/, { error: "OIDC_GROUPS_CLAIM must be a claim name" })
    .default(DEFAULT_GROUPS_CLAIM),
  OIDC_SCOPE: z
    .string()
    .regex(/^[\x21-\x7e]+( [\x21-\x7e]+)*$/, { error: "OIDC_SCOPE must be space-separated scope names" })
    .refine((v) => v.split(" ").includes("openid"), { error: "OIDC_SCOPE must include openid" })
    .default(DEFAULT_SCOPE),
  LEASEWATCH_ROLE_MAP: z.string().default(DEFAULT_ROLE_MAP),
  LEASEWATCH_SESSION_MAX_AGE: z.coerce
    .number({ error: "LEASEWATCH_SESSION_MAX_AGE must be a number of seconds" })
    .int({ error: "LEASEWATCH_SESSION_MAX_AGE must be a whole number of seconds" })
    .min(10, { error: "LEASEWATCH_SESSION_MAX_AGE must be at least 10 seconds" })
    .max(7 * 24 * 60 * 60, { error: "LEASEWATCH_SESSION_MAX_AGE must be at most 7 days (604800 seconds)" })
    .default(DEFAULT_SESSION_MAX_AGE_S),
  LEASEWATCH_GROUPS_REFRESH: z.coerce
    .number({ error: "LEASEWATCH_GROUPS_REFRESH must be a number of seconds" })
    .int({ error: "LEASEWATCH_GROUPS_REFRESH must be a whole number of seconds" })
    .min(1, { error: "LEASEWATCH_GROUPS_REFRESH must be at least 1 second" })
    .max(MAX_GROUPS_REFRESH_S, { error: `LEASEWATCH_GROUPS_REFRESH must be at most ${MAX_GROUPS_REFRESH_S} seconds (roles must follow the IdP within 5 minutes)` })
    .default(DEFAULT_GROUPS_REFRESH_S),
  NEXTAUTH_URL: ZHttpUrl("NEXTAUTH_URL"),
  // Signs and encrypts the session cookie; short secrets are guessable.
  NEXTAUTH_SECRET: z
    .string({ error: "NEXTAUTH_SECRET is required (e.g. `openssl rand -base64 32`)" })
    .min(32, { error: "NEXTAUTH_SECRET must be at least 32 characters (e.g. `openssl rand -base64 32`)" }),
});

export interface AuthEnv {
  issuer: string;
  clientId: string;
  clientSecret: string;
  groupsClaim: string;
  scope: string;
  roleMap: RoleMap;
  nextAuthUrl: string;
  secret: string;
  /** Absolute session lifetime from sign-in, seconds. */
  sessionMaxAgeS: number;
  /** How often a session's groups are re-read from the IdP, seconds. */
  groupsRefreshS: number;
  /** LEASEWATCH_DEMO=1: the demo / e2e stack (local IdP over http on loopback). */
  isDemo: boolean;
}

export class EnvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EnvError";
  }
}

/** Parse the auth environment or throw an EnvError that says what to fix. Pure: no caching. */
export function parseAuthEnv(env: Readonly<Record<string, string | undefined>> = process.env): AuthEnv {
  // Empty strings count as unset so `FOO=` falls back to the default or reports "required".
  const input = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = ZAuthEnv.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => i.message).join("; ");
    throw new EnvError(`Sign-in is not configured: ${problems}`);
  }
  const e = parsed.data;
  let roleMap: RoleMap;
  try {
    roleMap = parseRoleMap(e.LEASEWATCH_ROLE_MAP);
  } catch (err) {
    const why = err instanceof RoleMapError ? err.message : String(err);
    throw new EnvError(`LEASEWATCH_ROLE_MAP is invalid (${why}); expected e.g. "${DEFAULT_ROLE_MAP}" (add ":<prefix>*" to limit a group to resources under a prefix, e.g. "team-billing:operator:tenant_1:*")`);
  }
  const isDemo = env.LEASEWATCH_DEMO === "1";
  if (env.NODE_ENV === "production") {
    const refusals = findProductionRefusals({
      issuer: e.OIDC_ISSUER,
      consoleUrl: e.NEXTAUTH_URL,
      clientSecret: e.OIDC_CLIENT_SECRET,
      hasRoleMap: input.LEASEWATCH_ROLE_MAP !== undefined,
      isDemo,
    });
    if (refusals.length > 0) throw new EnvError(`Refusing to start in production: ${refusals.join("; ")}`);
  }
  return {
    issuer: e.OIDC_ISSUER.replace(/\/+$/, ""),
    clientId: e.OIDC_CLIENT_ID,
    clientSecret: e.OIDC_CLIENT_SECRET,
    groupsClaim: e.OIDC_GROUPS_CLAIM,
    scope: e.OIDC_SCOPE,
    roleMap,
    nextAuthUrl: e.NEXTAUTH_URL,
    secret: e.NEXTAUTH_SECRET,
    sessionMaxAgeS: e.LEASEWATCH_SESSION_MAX_AGE,
    groupsRefreshS: e.LEASEWATCH_GROUPS_REFRESH,
    isDemo,
  };
}

/** 127.0.0.0/8, ::1 and localhost: an IdP there is a developer's or the demo's, never a real one. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * What production must not run with. The demo (LEASEWATCH_DEMO=1) may use the local
 * IdP, its secret and plain http, but only on loopback, where nothing crosses a network.
 */
export function findProductionRefusals(c: { issuer: string; consoleUrl: string; clientSecret: string; hasRoleMap: boolean; isDemo: boolean }): string[] {
  const refusals: string[] = [];
  const issuer = new URL(c.issuer);
  const consoleUrl = new URL(c.consoleUrl);
  const isLocalDemo = (url: URL) => c.isDemo && isLoopbackHost(url.hostname);
  if (consoleUrl.protocol !== "https:" && !isLocalDemo(consoleUrl)) {
    refusals.push("NEXTAUTH_URL must be an https:// URL (session cookies and tokens would cross the network in clear)");
  }
  if (issuer.protocol !== "https:" && !isLocalDemo(issuer)) {
    refusals.push("OIDC_ISSUER must be an https:// URL");
  }
  if (isLoopbackHost(issuer.hostname) && !c.isDemo) {
    refusals.push("OIDC_ISSUER points at this machine (the demo IdP?); use your organisation's identity provider, or set LEASEWATCH_DEMO=1 for the demo");
  }
  // The demo secret is public: with an IdP anywhere but this machine, anyone could pose as the console.
  if (c.clientSecret === DEMO_CLIENT_SECRET && !isLocalDemo(issuer)) {
    refusals.push("OIDC_CLIENT_SECRET is the public demo secret; register the console with your IdP and set OIDC_CLIENT_SECRET to its secret");
  }
  if (!c.hasRoleMap) {
    refusals.push(`LEASEWATCH_ROLE_MAP must be set explicitly (which IdP groups are operators and viewers), e.g. "${DEFAULT_ROLE_MAP}"`);
  }
  return refusals;
}

let cached: AuthEnv | undefined;

/** The validated auth environment of this process (validated once). */
export function getAuthEnv(): AuthEnv {
  cached ??= parseAuthEnv();
  return cached;
}
