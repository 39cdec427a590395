/**
 * Sessions against a real IdP (the demo oidc-provider on a free port) and the real
 * Postgres (own schema): tokens come from a genuine authorization-code sign-in.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPgSchema, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import type { OAuthConfig } from "next-auth/providers/oauth";
import { getAuthEnv } from "@/lib/auth/env";
import { startOidcProvider, type RunningOidcProvider } from "@/scripts/oidc-provider";

const CLIENT_SECRET = "session-state-test-secret";
const REDIRECT_URI = "http://127.0.0.1:3999/api/auth/callback/oidc";
const schema = freshPgSchema();
let idp: RunningOidcProvider;
let state: typeof import("./session-state");
let fresh: typeof import("./fresh");
let authOptions: typeof import("./options");

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** The authorization-code flow as a browser would run it, through the IdP's dev login form. */
async function signInAtIdp(user: string): Promise<{ accessToken: string; refreshToken: string; expiresAt: Date; authTime: Date; idTokenClaims: Record<string, unknown> }> {
  const jar = new Map<string, string>();
  const call = async (url: string, init: RequestInit = {}) => {
    const response = await fetch(url, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string>), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const at = pair!.indexOf("=");
      jar.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    return response;
  };
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const authorize = new URL(`${idp.issuer}/auth`);
  authorize.search = new URLSearchParams({
    client_id: idp.clientId,
    response_type: "code",
    scope: "openid email profile groups",
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "s",
  }).toString();
  let location = (await call(authorize.href)).headers.get("location")!;
  const login = await call(new URL(location, idp.issuer).href, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ prompt: "login", login: user, password: "any" }).toString(),
  });
  location = login.headers.get("location")!;
  for (let hop = 0; hop < 5 && !location.startsWith(REDIRECT_URI); hop++) {
    location = (await call(new URL(location, idp.issuer).href)).headers.get("location")!;
  }
  const code = new URL(location).searchParams.get("code");
  if (!code) throw new Error(`no code in ${location}`);
  const token = await fetch(`${idp.issuer}/token`, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${idp.clientId}:${CLIENT_SECRET}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier }).toString(),
  });
  const body = (await token.json()) as { access_token: string; refresh_token: string; expires_in: number; id_token: string };
  const claims = JSON.parse(Buffer.from(body.id_token.split(".")[1]!, "base64url").toString()) as { auth_time: number };
  return {
    accessToken: body.access_token,
    refreshToken: body.refresh_token,
    expiresAt: new Date(Date.now() + body.expires_in * 1000),
    authTime: new Date(claims.auth_time * 1000),
    idTokenClaims: claims,
  };
}

/** A signed-in session as the jwt callback records it; returns the cookie's claims. */
async function startSession(user: string, options: { signedInAt?: number; expiredAccessToken?: boolean } = {}) {
  const tokens = await signInAtIdp(user);
  const sid = randomUUID();
  const signedInAt = options.signedInAt ?? Date.now();
  await state.recordSignIn({
    id: sid,
    subject: user,
    email: `${user}@example.test`,
    signedInAt: new Date(signedInAt),
    authTime: tokens.authTime,
    expiresAt: new Date(signedInAt + 3600_000),
    groups: ["leasewatch-operators"],
    accessToken: tokens.accessToken,
    accessTokenExpiresAt: options.expiredAccessToken ? new Date(Date.now() - 1000) : tokens.expiresAt,
    refreshToken: tokens.refreshToken,
  });
  return { sid, signedInAt, sub: user, issuer: idp.issuer, name: user, email: `${user}@example.test` };
}

const rolesOf = async (claims: object, options: { fresh?: boolean } = {}) => {
  const resolved = await state.resolveSession(claims, options);
  return resolved.status === "ok" ? resolved.session.user.roles : null;
};

beforeAll(async () => {
  const port = await freePort();
  idp = await startOidcProvider({ port, clientSecret: CLIENT_SECRET, redirectUris: [REDIRECT_URI], env: {} });
  Object.assign(process.env, {
    OIDC_ISSUER: idp.issuer,
    OIDC_CLIENT_ID: idp.clientId,
    OIDC_CLIENT_SECRET: CLIENT_SECRET,
    NEXTAUTH_URL: "http://127.0.0.1:3999",
    NEXTAUTH_SECRET: randomBytes(32).toString("base64"),
    LEASEWATCH_AUDIT_URL: TEST_DATABASE_URL,
    LEASEWATCH_CONSOLE_SCHEMA: schema.schema,
    LEASEWATCH_SESSION_MAX_AGE: "3600",
    LEASEWATCH_GROUPS_REFRESH: "1",
  });
  state = await import("./session-state");
  fresh = await import("./fresh");
  authOptions = await import("./options");
});

afterAll(async () => {
  await state?.getSessionStore().close();
  await idp?.close();
  await schema.drop();
});

describe("resolveSession", () => {
  it("maps the recorded groups to roles and ends at the absolute lifetime, however recent the cookie", async () => {
    const claims = await startSession("alice");
    expect(await rolesOf(claims)).toEqual(["operator"]);
    // Same record, but the cookie says it began over an hour (the configured lifetime) ago.
    expect(await rolesOf({ ...claims, signedInAt: Date.now() - 3601_000 })).toBeNull();
  });

  it("refuses a revoked session at once in this process (sign-out), and a cookie with an unknown session id", async () => {
    const claims = await startSession("alice");
    expect(await rolesOf(claims)).toEqual(["operator"]);
    await state.revokeSession(claims.sid, "signed out");
    expect(await rolesOf(claims)).toBeNull();
    expect(await rolesOf({ ...claims, sid: randomUUID() })).toBeNull();
    // A cookie from before session records (no sid) is no session either.
    expect(await rolesOf({ sub: "alice", signedInAt: Date.now() })).toBeNull();
    // Nor one from another issuer, or without one.
    expect(await rolesOf({ ...claims, issuer: "https://other-idp.example.test" })).toBeNull();
    expect(await rolesOf({ ...claims, issuer: undefined })).toBeNull();
  });

  it("follows group changes at the IdP within the refresh interval, and at once for a fresh check", async () => {
    const claims = await startSession("carol");
    try {
      expect(await rolesOf(claims)).toEqual(["operator"]);
      idp.setGroups("carol", ["leasewatch-viewers"]);
      expect(await rolesOf(claims, { fresh: true })).toEqual(["viewer"]);
      idp.setGroups("carol", []);
      // The cached groups serve until the 1 s refresh interval has passed…
      await new Promise((resolve) => setTimeout(resolve, 1100));
      // …then the IdP is asked again and the role is gone.
      expect(await rolesOf(claims)).toEqual([]);
    } finally {
      idp.setGroups("carol", ["leasewatch-operators"]);
    }
  });

  it("refreshes an expired access token with the refresh token", async () => {
    const claims = await startSession("bob", { expiredAccessToken: true });
    const resolved = await state.resolveSession(claims, { fresh: true });
    expect(resolved).toMatchObject({ status: "ok", isGroupsFresh: true, session: { user: { roles: ["viewer"] } } });
    const record = await state.getSessionStore().get(claims.sid);
    expect(record!.accessTokenExpiresAt!.getTime()).toBeGreaterThan(Date.now());
  });

  it("keeps tokens encrypted at rest", async () => {
    const claims = await startSession("alice");
    const pg = (await import("pg")).default;
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const row = await client.query(`SELECT access_token, refresh_token FROM "${schema.schema}".console_sessions WHERE id = $1`, [claims.sid]);
      const record = await state.getSessionStore().get(claims.sid);
      expect(row.rows[0].access_token).toMatch(/^v1\./);
      expect(row.rows[0].access_token).not.toContain(record!.accessToken!);
      expect(row.rows[0].refresh_token).not.toContain(record!.refreshToken!);
    } finally {
      await client.end();
    }
  });
});

describe("ending a session", () => {
  const refreshAtIdp = (refreshToken: string) =>
    fetch(`${idp.issuer}/token`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(`${idp.clientId}:${CLIENT_SECRET}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken }).toString(),
    });

  it("sign-out revokes the session and its refresh token at the IdP (RFC 7009): the token mints nothing afterwards", async () => {
    const claims = await startSession("alice");
    const refreshToken = (await state.getSessionStore().get(claims.sid))!.refreshToken!;
    expect((await refreshAtIdp(refreshToken)).status).toBe(200);

    await state.revokeSession(claims.sid, "signed out");

    expect(await rolesOf(claims)).toBeNull();
    const refused = await refreshAtIdp(refreshToken);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error?: string }).error).toBe("invalid_grant");
  });
});

describe("who signed in", () => {
  /** A sign-in as next-auth runs it: the jwt callback with the IdP's id token claims and tokens, then the cookie resolved. */
  async function signInThroughCallback(user: string) {
    const tokens = await signInAtIdp(user);
    const options = authOptions.buildAuthOptions(getAuthEnv());
    // next-auth maps the claims with the provider's profile() and starts the token from that user.
    const provider = options.providers[0] as OAuthConfig<Record<string, unknown>>;
    const profileUser = await provider.profile!(tokens.idTokenClaims, {});
    const cookie = await options.callbacks!.jwt!({
      token: { sub: profileUser.id, name: profileUser.name, email: profileUser.email },
      user: profileUser,
      account: { provider: "oidc", type: "oauth", providerAccountId: user, access_token: tokens.accessToken, refresh_token: tokens.refreshToken, expires_at: Math.floor(tokens.expiresAt.getTime() / 1000) },
      profile: tokens.idTokenClaims,
      trigger: "signIn",
    });
    const resolved = await state.resolveSession(cookie);
    if (resolved.status !== "ok") throw new Error(`${user}: no session`);
    return { claims: tokens.idTokenClaims, user: resolved.session.user };
  }

  it("is the IdP's sub with its issuer; an unverified email claim is nobody's label, even when it is another user's address", async () => {
    const alice = await signInThroughCallback("alice");
    expect(alice.claims).toMatchObject({ email: "alice@example.test", email_verified: true });
    expect(alice.user).toMatchObject({ id: `${idp.issuer}#alice`, email: "alice@example.test", roles: ["operator"] });

    // eve's IdP account claims alice's address, and the IdP says it never verified it.
    const eve = await signInThroughCallback("eve");
    expect(eve.claims).toMatchObject({ email: "alice@example.test", email_verified: false });
    expect(eve.user).toMatchObject({ id: `${idp.issuer}#eve`, email: null, name: "eve", roles: ["operator"] });
  });
});

describe("checkFreshPermission's pieces", () => {
  it("a sign-in counts as recent only within the limit, and never without auth_time", () => {
    const now = Date.now();
    const session = { user: { id: "a", email: null, name: null, roles: ["operator" as const], scopes: { operator: { kind: "all" as const } } }, signedInAt: now, authTime: now - 14 * 60_000 };
    expect(fresh.isAuthRecent(session, fresh.DEFAULT_MAX_AUTH_AGE_MS, now)).toBe(true);
    expect(fresh.isAuthRecent({ ...session, authTime: now - 16 * 60_000 }, fresh.DEFAULT_MAX_AUTH_AGE_MS, now)).toBe(false);
    expect(fresh.isAuthRecent({ ...session, authTime: null }, fresh.DEFAULT_MAX_AUTH_AGE_MS, now)).toBe(false);
  });

  it("a fresh read fails closed when the IdP is down, while pages keep the last groups for a while", async () => {
    const claims = await startSession("alice");
    await idp.close();
    try {
      const resolved = await state.resolveSession(claims, { fresh: true });
      expect(resolved.status).toBe("ok");
      if (resolved.status === "ok") {
        expect(resolved.isGroupsFresh).toBe(false);
        expect(resolved.idpProblem).toBeTruthy();
        // Groups read less than 5 minutes ago still count for reading pages.
        expect(resolved.session.user.roles).toEqual(["operator"]);
      }
    } finally {
      idp = await startOidcProvider({ port: Number(new URL(idp.issuer).port), clientSecret: CLIENT_SECRET, redirectUris: [REDIRECT_URI], env: {} });
    }
  });
});
