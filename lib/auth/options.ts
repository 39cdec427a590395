import { randomUUID } from "node:crypto";
import type { AuthOptions } from "next-auth";
import { getToken } from "next-auth/jwt";
import type { OAuthConfig } from "next-auth/providers/oauth";
import { cookies } from "next/headers";
import { getAuthEnv, type AuthEnv } from "@/lib/auth/env";
import { toSafeCallbackPath } from "./callback-url";
import { verifiedEmailOf } from "./identity";
import { mapGroupsToRoles, readGroupsClaim, type Role } from "./roles";
import { recordSignIn, resolveSession, revokeSession } from "./session-state";

/** The id of the one sign-in provider; `/api/auth/signin/oidc`, `/api/auth/callback/oidc`. */
export const OIDC_PROVIDER_ID = "oidc";
export const SIGNIN_PATH = "/signin";
export const NOT_AUTHORISED_PATH = "/signin/not-authorised";
/** Starts a sign-in that makes the IdP authenticate the user again (for force-release). */
export const REAUTH_PATH = "/signin/reauth";

declare module "next-auth" {
  interface Session {
    user: { id: string; email: string | null; name: string | null; roles: Role[] };
  }
}
declare module "next-auth/jwt" {
  interface JWT {
    /** Id of the server-side session record (lib/auth/session-store.ts). */
    sid?: string;
    /** Sign-in time, ms since epoch: the absolute lifetime counts from here. */
    signedInAt?: number;
    /** The issuer that vouched for `sub` (a person is `sub` at this issuer; see ./identity). */
    issuer?: string;
  }
}

type OidcProfile = Record<string, unknown> & { sub: string; name?: string; preferred_username?: string; auth_time?: number };

function buildOidcProvider(env: AuthEnv): OAuthConfig<OidcProfile> {
  return {
    id: OIDC_PROVIDER_ID,
    name: "SSO",
    type: "oauth",
    wellKnown: `${env.issuer}/.well-known/openid-configuration`,
    clientId: env.clientId,
    clientSecret: env.clientSecret,
    authorization: { params: { scope: env.scope } },
    idToken: true,
    checks: ["pkce", "state"],
    profile(profile) {
      return {
        id: profile.sub,
        name: profile.name ?? profile.preferred_username ?? profile.sub,
        // Only an address the IdP verified: an unverified one may be anybody's.
        email: verifiedEmailOf(profile),
      };
    },
  };
}

/**
 * The session id in the cookie this sign-in replaces (a re-authentication, or another
 * sign-in in the same browser); null when there is none, or outside a request.
 */
async function readReplacedSessionId(env: AuthEnv): Promise<string | null> {
  try {
    const claims = await getToken({
      req: { cookies: await cookies(), headers: {} } as unknown as Parameters<typeof getToken>[0]["req"],
      secret: env.secret,
      secureCookie: env.nextAuthUrl.startsWith("https://"),
    });
    return typeof claims?.sid === "string" ? claims.sid : null;
  } catch {
    return null;
  }
}

/** next-auth options from the validated environment. Throws EnvError when sign-in is misconfigured. */
export function buildAuthOptions(env: AuthEnv): AuthOptions {
  const groupsOf = (profile: unknown): string[] =>
    profile && typeof profile === "object" ? readGroupsClaim(profile as Record<string, unknown>, env.groupsClaim) : [];

  return {
    secret: env.secret,
    providers: [buildOidcProvider(env)],
    // The cookie's own expiry slides with every refresh; the absolute limit is enforced in resolveSession.
    session: { strategy: "jwt", maxAge: env.sessionMaxAgeS },
    pages: { signIn: SIGNIN_PATH, error: SIGNIN_PATH },
    callbacks: {
      // No mapped group, no session: the user is sent to a page that says so instead of an empty console.
      signIn({ profile }) {
        return mapGroupsToRoles(groupsOf(profile), env.roleMap).length > 0 ? true : NOT_AUTHORISED_PATH;
      },
      // Only paths on this console, whatever next-auth was handed as callbackUrl.
      redirect({ url, baseUrl }) {
        return `${baseUrl}${toSafeCallbackPath(url, baseUrl)}`;
      },
      async jwt({ token, account, profile }) {
        if (account && profile) {
          // A sign-in: start a server-side record; the cookie carries only its id and the sign-in time.
          const signedInAt = Date.now();
          const sid = randomUUID();
          const p = profile as OidcProfile;
          const email = verifiedEmailOf(p);
          const replaced = await readReplacedSessionId(env);
          await recordSignIn({
            id: sid,
            subject: p.sub,
            email,
            signedInAt: new Date(signedInAt),
            authTime: typeof p.auth_time === "number" ? new Date(p.auth_time * 1000) : null,
            expiresAt: new Date(signedInAt + env.sessionMaxAgeS * 1000),
            groups: groupsOf(profile),
            accessToken: account.access_token ?? null,
            accessTokenExpiresAt: typeof account.expires_at === "number" ? new Date(account.expires_at * 1000) : null,
            refreshToken: account.refresh_token ?? null,
          });
          // The session this one replaces ends now, so a copy of its cookie is worth nothing.
          // Only here: its IdP tokens may belong to the same grant as the new ones, and
          // revoking them at the IdP could end the new session as well.
          if (replaced && replaced !== sid) await revokeSession(replaced, "replaced by a new sign-in", { atIdp: false });
          return { sub: p.sub, issuer: env.issuer, name: token.name, email, sid, signedInAt };
        }
        // /api/auth/session: a revoked or expired session is no session (next-auth then clears the cookie).
        const resolved = await resolveSession(token);
        if (resolved.status !== "ok") throw new Error("session ended");
        return token;
      },
      async session({ session, token }) {
        const resolved = await resolveSession(token);
        const user = resolved.status === "ok" ? resolved.session.user : null;
        session.user = { id: user?.id ?? "", email: user?.email ?? null, name: user?.name ?? null, roles: user?.roles ?? [] };
        return session;
      },
    },
    events: {
      // Awaited by next-auth before it answers the sign-out, so the cookie is dead before the browser moves on.
      async signOut({ token }) {
        if (typeof token?.sid === "string") await revokeSession(token.sid, "signed out");
      },
    },
  };
}

let cached: AuthOptions | undefined;

export function getAuthOptions(): AuthOptions {
  cached ??= buildAuthOptions(getAuthEnv());
  return cached;
}
