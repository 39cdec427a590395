import { z } from "zod";
import { parseRoleMap, RoleMapError, type RoleMap } from "@/lib/auth/roles";

/**
 * Server environment for sign-in, validated once on first use (not at import, so
 * `next build` works without secrets). A bad or missing value throws an EnvError
 * naming the variable and what to fix.
 */

export const DEFAULT_ROLE_MAP = "leasewatch-operators:operator,leasewatch-viewers:viewer";
export const DEFAULT_GROUPS_CLAIM = "groups";
/** Most IdPs only release group membership when asked for a `groups` scope. */
export const DEFAULT_SCOPE = "openid email profile groups";

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
    throw new EnvError(`LEASEWATCH_ROLE_MAP is invalid (${why}); expected e.g. "${DEFAULT_ROLE_MAP}"`);
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
  };
}

let cached: AuthEnv | undefined;

/** The validated auth environment of this process (validated once). */
export function getAuthEnv(): AuthEnv {
  cached ??= parseAuthEnv();
  return cached;
}
