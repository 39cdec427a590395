/**
 * A small local OpenID Connect provider for the demo and the browser tests,
 * built on the `oidc-provider` package. It is a real IdP (discovery, PKCE,
 * authorization code flow, signed id tokens) with three demo users:
 *
 *   alice    groups ["leasewatch-operators"]  → operator
 *   bob      groups ["leasewatch-viewers"]    → viewer
 *   mallory  groups ["contractors"]           → no Leasewatch role ("not authorised")
 *
 * DEMO ONLY: its development login form accepts ANY password for these users.
 * Never point a real deployment at it; use your organisation's IdP instead.
 *
 * CLI: `tsx scripts/oidc-provider.ts` — OIDC_PORT (default 4400), OIDC_CLIENT_ID,
 * OIDC_CLIENT_SECRET, OIDC_REDIRECT_URIS (comma-separated; default the console on :3000).
 */
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import { pathToFileURL } from "node:url";

export const DEFAULT_OIDC_PORT = 4400;
export const DEFAULT_CLIENT_ID = "leasewatch-console";
export const DEFAULT_CLIENT_SECRET = "leasewatch-demo-secret";

export interface DemoUser {
  sub: string;
  name: string;
  email: string;
  groups: string[];
}

export const DEMO_USERS: Record<string, DemoUser> = {
  alice: { sub: "alice", name: "alice", email: "alice@example.test", groups: ["leasewatch-operators"] },
  bob: { sub: "bob", name: "bob", email: "bob@example.test", groups: ["leasewatch-viewers"] },
  mallory: { sub: "mallory", name: "mallory", email: "mallory@example.test", groups: ["contractors"] },
};

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
}

export interface RunningOidcProvider {
  issuer: string;
  port: number;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

/** Starts the IdP; resolves once it listens. */
export async function startOidcProvider(options: OidcProviderOptions): Promise<RunningOidcProvider> {
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
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
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
    ttl: { AccessToken: 3600, AuthorizationCode: 60, IdToken: 3600, Interaction: 600, Session: 86_400, Grant: 86_400 },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, id) {
      const user = DEMO_USERS[id];
      if (!user) return undefined;
      return {
        accountId: user.sub,
        async claims() {
          return { sub: user.sub, name: user.name, preferred_username: user.sub, email: user.email, email_verified: true, groups: user.groups };
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
