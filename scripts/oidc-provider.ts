/**
 * A small local OpenID Connect provider for the demo and the browser tests,
 * built on the `oidc-provider` package. It is a real IdP (discovery, PKCE,
 * authorization code flow, signed id tokens) with these demo users:
 *
 *   alice    groups ["leasewatch-operators"]  → operator
 *   bob      groups ["leasewatch-viewers"]    → viewer
 *   mallory  groups ["contractors"]           → no Leasewatch role ("not authorised")
 *   dave     groups ["team-billing"]          → operator for tenant_1:* only (the demo's
 *                                                role map scopes that group to one tenant)
 *
 *   carol    groups ["leasewatch-operators"]  → operator (the browser tests take her
 *                                                groups away; alice stays an operator)
 *   eve      groups ["leasewatch-operators"]  → operator whose account claims alice's
 *                                                email, unverified: she is still eve
 *
 * Every user's email is verified (`email_verified: true`) except eve's.
 *
 * DEMO ONLY: its development login form accepts ANY password for these users.
 * Never point a real deployment at it; use your organisation's IdP instead. It
 * refuses to start with NODE_ENV=production unless LEASEWATCH_DEMO=1.
 *
 * It issues refresh tokens and answers userinfo with the user's *current*
 * groups, so the console can re-read them after sign-in; `setGroups` on the
 * running provider changes a user's groups (the e2e stack's control endpoint
 * exposes it to tests; there is no HTTP route for it here).
 *
 * CLI: `tsx scripts/oidc-provider.ts` — OIDC_PORT (default 4400), OIDC_CLIENT_ID,
 * OIDC_CLIENT_SECRET, OIDC_REDIRECT_URIS (comma-separated; default the console on :3000).
 */
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import { pathToFileURL } from "node:url";
import { DEMO_CLIENT_SECRET } from "../lib/auth/env";

export const DEFAULT_OIDC_PORT = 4400;
export const DEFAULT_CLIENT_ID = "leasewatch-console";
export const DEFAULT_CLIENT_SECRET = DEMO_CLIENT_SECRET;

export interface DemoUser {
  sub: string;
  name: string;
  email: string;
  /** The IdP's `email_verified` claim. */
  emailVerified: boolean;
  groups: string[];
}

export const DEMO_USERS: Record<string, DemoUser> = {
  alice: { sub: "alice", name: "alice", email: "alice@example.test", emailVerified: true, groups: ["leasewatch-operators"] },
  bob: { sub: "bob", name: "bob", email: "bob@example.test", emailVerified: true, groups: ["leasewatch-viewers"] },
  mallory: { sub: "mallory", name: "mallory", email: "mallory@example.test", emailVerified: true, groups: ["contractors"] },
  carol: { sub: "carol", name: "carol", email: "carol@example.test", emailVerified: true, groups: ["leasewatch-operators"] },
  dave: { sub: "dave", name: "dave", email: "dave@example.test", emailVerified: true, groups: ["team-billing"] },
  // Any IdP that lets users type their own address can say this; the console must not take it as alice.
  eve: { sub: "eve", name: "eve", email: "alice@example.test", emailVerified: false, groups: ["leasewatch-operators"] },
};

export class DemoIdpRefusedError extends Error {
  constructor() {
    super("the demo identity provider accepts any password and must not run in production: set LEASEWATCH_DEMO=1 only for the demo");
    this.name = "DemoIdpRefusedError";
  }
}

/** Throws unless this is plainly not production, or the demo flag is set. */
export function assertDemoIdpAllowed(env: Readonly<Record<string, string | undefined>> = process.env): void {
  if (env.NODE_ENV === "production" && env.LEASEWATCH_DEMO !== "1") throw new DemoIdpRefusedError();
}

const GRANTED_SCOPE = "openid email profile groups";
const GRANTED_CLAIMS = ["sub", "email", "email_verified", "name", "preferred_username", "groups"];

export interface OidcProviderOptions {
  port?: number;
  host?: string;
  clientId?: string;
  clientSecret?: string;
  /** Where the console receives the code: `<console>/api/auth/callback/oidc`. */
  redirectUris: string[];
  /** Where the console sends people after sign-out. */
  postLogoutRedirectUris?: string[];
  /** Access-token lifetime (default 1 h); short in tests so the refresh path runs. */
  accessTokenTtlS?: number;
  /** Checked by assertDemoIdpAllowed (default process.env). */
  env?: Readonly<Record<string, string | undefined>>;
}

export interface RunningOidcProvider {
  issuer: string;
  port: number;
  clientId: string;
  clientSecret: string;
  /** Replaces a demo user's groups; the next userinfo answer carries them. Returns false for an unknown user. */
  setGroups(username: string, groups: string[]): boolean;
  close(): Promise<void>;
}

/** Starts the IdP; resolves once it listens. */
export async function startOidcProvider(options: OidcProviderOptions): Promise<RunningOidcProvider> {
  assertDemoIdpAllowed(options.env);
  // This provider's own copy: changing a user's groups in one stack never touches another.
  const users = new Map(Object.entries(DEMO_USERS).map(([name, user]) => [name, { ...user, groups: [...user.groups] }]));
  const port = options.port ?? DEFAULT_OIDC_PORT;
  const host = options.host ?? "127.0.0.1";
  const clientId = options.clientId ?? DEFAULT_CLIENT_ID;
  const clientSecret = options.clientSecret ?? DEFAULT_CLIENT_SECRET;
  const issuer = `http://${host}:${port}`;
  // ESM-only package; loaded on demand so importing this module stays cheap.
  const { default: Provider } = await import("oidc-provider");

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        post_logout_redirect_uris: options.postLogoutRedirectUris ?? [],
        // refresh_token: the console re-reads the user's groups (userinfo) for the life of the session.
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
        // auth_time in every id token: the console checks how recent a sign-in is before a force-release.
        require_auth_time: true,
      },
    ],
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["name", "preferred_username"],
      groups: ["groups"],
    },
    // Otherwise the id token carries only `sub` and the console never sees the groups.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    ttl: {
      AccessToken: options.accessTokenTtlS ?? 3600,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 600,
      Session: 86_400,
      Grant: 86_400,
      RefreshToken: 86_400,
    },
    // Without offline_access the console still gets a refresh token (it is a confidential first-party client).
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    // The same refresh token stays valid, so two console requests refreshing at once do not invalidate each other.
    rotateRefreshToken: () => false,
    // revocation: the console revokes a session's tokens at sign-out (RFC 7009).
    features: { devInteractions: { enabled: true }, revocation: { enabled: true } },
    async findAccount(_ctx, id) {
      const user = users.get(id);
      if (!user) return undefined;
      return {
        accountId: user.sub,
        async claims() {
          return { sub: user.sub, name: user.name, preferred_username: user.sub, email: user.email, email_verified: user.emailVerified, groups: user.groups };
        },
      };
    },
    // First-party demo app: grant the console's scopes without a consent screen.
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope(GRANTED_SCOPE);
      grant.addOIDCClaims(GRANTED_CLAIMS);
      await grant.save();
      return grant;
    },
  });

  const server: Server = await new Promise((resolve, reject) => {
    const s = provider.listen(port, host, () => resolve(s));
    s.once("error", reject);
  });

  return {
    issuer,
    port,
    clientId,
    clientSecret,
    setGroups(username, groups) {
      const user = users.get(username);
      if (!user) return false;
      user.groups = [...groups];
      return true;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

async function main(): Promise<void> {
  const port = Number(process.env.OIDC_PORT ?? DEFAULT_OIDC_PORT);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new Error(`OIDC_PORT must be a port number, got "${process.env.OIDC_PORT}"`);
  const redirectUris = (process.env.OIDC_REDIRECT_URIS ?? "http://127.0.0.1:3000/api/auth/callback/oidc")
    .split(",")
    .map((u) => u.trim())
    .filter(Boolean);
  const idp = await startOidcProvider({
    port,
    clientId: process.env.OIDC_CLIENT_ID || undefined,
    clientSecret: process.env.OIDC_CLIENT_SECRET || undefined,
    redirectUris,
  });
  console.log(`[oidc] issuer ${idp.issuer} (client ${idp.clientId}); demo users: ${Object.keys(DEMO_USERS).join(", ")} — any password`);
  const stop = () => void idp.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(`[oidc] ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
