/**
 * Server-only read model of `/tokens`: the lock API's tokens as plain views,
 * never the secret or its hash. The tokens table lives in the console's
 * database (LEASEWATCH_AUDIT_URL or the first Postgres store), in its schema.
 */
import { TokenStore, type ApiToken } from "@/lib/api/tokens";
import { prefixesOutsideScope, type ViewerScope } from "@/lib/auth/scope";
import { resolveConsoleDbConfig } from "@/lib/auth/session-store";
import type { ApiTokenState, ApiTokenView } from "@/lib/console/tokens/token-types";

export function tokenStateOf(token: Pick<ApiToken, "revokedAt" | "expiresAt">, nowMs: number): ApiTokenState {
  if (token.revokedAt !== null) return "revoked";
  return token.expiresAt.getTime() <= nowMs ? "expired" : "live";
}

export function reshapeApiToken(token: ApiToken, nowMs = Date.now()): ApiTokenView {
  return {
    id: token.id,
    name: token.name,
    prefixes: [...token.prefixes],
    stores: [...token.stores],
    actions: [...token.actions],
    ratePerSec: token.ratePerSec,
    maxConcurrent: token.maxConcurrent,
    createdAt: token.createdAt.toISOString(),
    createdBy: token.createdBy,
    expiresAt: token.expiresAt.toISOString(),
    revokedAt: token.revokedAt ? token.revokedAt.toISOString() : null,
    state: tokenStateOf(token, nowMs),
  };
}

const GLOBAL_KEY = Symbol.for("leasewatch.console.api-tokens");
type GlobalWithTokens = typeof globalThis & { [GLOBAL_KEY]?: TokenStore };

/** The console's reader of the tokens table (one pool per process). */
function processTokenStore(): TokenStore {
  const g = globalThis as GlobalWithTokens;
  if (!g[GLOBAL_KEY]) {
    const db = resolveConsoleDbConfig();
    g[GLOBAL_KEY] = new TokenStore({ url: db.url, schema: db.schema, ...(db.pooler ? { pooler: db.pooler } : {}) });
  }
  return g[GLOBAL_KEY];
}

/** Closes the tokens pool (the console's shutdown). */
export async function closeConsoleTokenStore(): Promise<void> {
  const g = globalThis as GlobalWithTokens;
  const store = g[GLOBAL_KEY];
  delete g[GLOBAL_KEY];
  await store?.close();
}

/**
 * The tokens this viewer may see, newest first (at most 1000). A tenant-scoped viewer
 * sees only tokens whose every prefix lies within their scope: a token that also
 * reaches another tenant is hidden whole, since showing it would tell them about that
 * tenant's workers. The database applies the scope before the limit; the check here
 * keeps the rule in one place (prefixesOutsideScope) for whatever it returns.
 */
export async function listApiTokenViews(scope: ViewerScope, nowMs = Date.now()): Promise<ApiTokenView[]> {
  const tokens = await processTokenStore().list(scope.kind === "all" ? {} : { within: scope.prefixes });
  return tokens.filter((t) => prefixesOutsideScope(scope, t.prefixes).length === 0).map((t) => reshapeApiToken(t, nowMs));
}
