import type { AuthOptions } from "next-auth";
import type { OAuthConfig } from "next-auth/providers/oauth";
import { getAuthEnv, type AuthEnv } from "@/lib/env";
import { isRole, mapGroupsToRoles, readGroupsClaim, type Role } from "./roles";

/** The id of the one sign-in provider; `/api/auth/signin/oidc`, `/api/auth/callback/oidc`. */
export const OIDC_PROVIDER_ID = "oidc";
export const SIGNIN_PATH = "/signin";
export const NOT_AUTHORISED_PATH = "/signin/not-authorised";
/** Sessions last one working day; roles are re-read from the IdP at the next sign-in. */
const SESSION_MAX_AGE_S = 8 * 60 * 60;

declare module "next-auth" {
  interface Session {
    user: { id: string; email: string | null; name: string | null; roles: Role[] };
  }
}
declare module "next-auth/jwt" {
  interface JWT {
    roles?: Role[];
  }
}

type OidcProfile = Record<string, unknown> & { sub: string; email?: string; name?: string; preferred_username?: string };

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
        email: profile.email ?? null,
      };
    },
  };
}

/** next-auth options from the validated environment. Throws EnvError when sign-in is misconfigured. */
export function buildAuthOptions(env: AuthEnv): AuthOptions {
  const rolesOf = (profile: unknown): Role[] =>
    profile && typeof profile === "object"
      ? mapGroupsToRoles(readGroupsClaim(profile as Record<string, unknown>, env.groupsClaim), env.roleMap)
      : [];

  return {
    secret: env.secret,
    providers: [buildOidcProvider(env)],
    session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_S },
    pages: { signIn: SIGNIN_PATH, error: SIGNIN_PATH },
    callbacks: {
      // No mapped group, no session: the user is sent to a page that says so instead of an empty console.
      signIn({ profile }) {
        return rolesOf(profile).length > 0 ? true : NOT_AUTHORISED_PATH;
      },
      jwt({ token, profile }) {
        // `profile` is only present on the sign-in request; afterwards the roles ride in the token.
        if (profile) token.roles = rolesOf(profile);
        return token;
      },
      session({ session, token }) {
        session.user = {
          id: token.sub ?? "",
          email: token.email ?? null,
          name: token.name ?? null,
          roles: (token.roles ?? []).filter(isRole),
        };
        return session;
      },
    },
  };
}

let cached: AuthOptions | undefined;

export function getAuthOptions(): AuthOptions {
  cached ??= buildAuthOptions(getAuthEnv());
  return cached;
}
