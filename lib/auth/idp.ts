/**
 * Asking the identity provider about a signed-in user after sign-in: the groups
 * (userinfo with the session's access token), and a new access token from the
 * refresh token when the old one expired. Used to re-derive roles every few
 * minutes and, for force-release, right now. And, at sign-out, telling the IdP
 * to revoke the session's tokens (RFC 7009).
 */
import { z } from "zod";
import { readGroupsClaim } from "./roles";

/** An IdP that does not answer in this long counts as unavailable (the fresh check then fails closed). */
const IDP_TIMEOUT_MS = 5_000;
/** An access token this close to its expiry is refreshed first rather than risk a 401 mid-check. */
const EXPIRY_MARGIN_MS = 10_000;

const ZDiscovery = z.object({ token_endpoint: z.url(), userinfo_endpoint: z.url(), revocation_endpoint: z.url().optional() });
const ZTokenResponse = z.object({
  access_token: z.string().min(1),
  expires_in: z.number().optional(),
  refresh_token: z.string().min(1).optional(),
});
const ZUserinfo = z.looseObject({ sub: z.string() });

export interface IdpClientConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  groupsClaim: string;
}

export interface IdpTokens {
  accessToken: string | null;
  accessTokenExpiresAt: Date | null;
  refreshToken: string | null;
}

export type GroupsLookup =
  | { ok: true; groups: string[]; refreshed?: { accessToken: string; accessTokenExpiresAt: Date | null; refreshToken: string | null } }
  /** The IdP answered that this session's grant is gone (user disabled, grant revoked): end the session. */
  | { ok: false; reason: "grant_revoked"; message: string }
  /** The IdP could not be asked (down, slow, odd answer): keep what we have for now, never grant more. */
  | { ok: false; reason: "unavailable"; message: string };

class IdpUnavailable extends Error {}
class GrantRevoked extends Error {}

const discoveryCache = new Map<string, Promise<z.infer<typeof ZDiscovery>>>();

function discover(issuer: string): Promise<z.infer<typeof ZDiscovery>> {
  let found = discoveryCache.get(issuer);
  if (!found) {
    found = fetch(`${issuer}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(IDP_TIMEOUT_MS) })
      .then(async (r) => {
        if (!r.ok) throw new IdpUnavailable(`discovery answered HTTP ${r.status}`);
        return ZDiscovery.parse(await r.json());
      })
      .catch((error: unknown) => {
        discoveryCache.delete(issuer);
        throw error instanceof IdpUnavailable ? error : new IdpUnavailable(`discovery failed: ${String(error)}`);
      });
    discoveryCache.set(issuer, found);
  }
  return found;
}

/** client_secret_basic (RFC 6749 §2.3.1: id and secret form-encoded first). */
function basicAuth(config: IdpClientConfig): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(config.clientId)}:${encodeURIComponent(config.clientSecret)}`).toString("base64")}`;
}

async function refreshAccessToken(config: IdpClientConfig, refreshToken: string) {
  const { token_endpoint } = await discover(config.issuer);
  let response: Response;
  try {
    response = await fetch(token_endpoint, {
      method: "POST",
      headers: { authorization: basicAuth(config), "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken }),
      signal: AbortSignal.timeout(IDP_TIMEOUT_MS),
    });
  } catch (error) {
    throw new IdpUnavailable(`token endpoint unreachable: ${String(error)}`);
  }
  if (response.status === 400 || response.status === 401) {
    const body = (await response.json().catch(() => ({}))) as { error?: unknown };
    if (body.error === "invalid_grant") throw new GrantRevoked("the IdP refused the refresh token (invalid_grant)");
  }
  if (!response.ok) throw new IdpUnavailable(`token endpoint answered HTTP ${response.status}`);
  const tokens = ZTokenResponse.safeParse(await response.json().catch(() => null));
  if (!tokens.success) throw new IdpUnavailable("token endpoint gave an unreadable answer");
  return {
    accessToken: tokens.data.access_token,
    accessTokenExpiresAt: tokens.data.expires_in ? new Date(Date.now() + tokens.data.expires_in * 1000) : null,
    // IdPs that rotate refresh tokens send a new one; others keep the old one valid.
    refreshToken: tokens.data.refresh_token ?? refreshToken,
  };
}

/** `null` when the access token was refused (expired or revoked at the IdP). */
async function readUserinfo(config: IdpClientConfig, accessToken: string): Promise<Record<string, unknown> | null> {
  const { userinfo_endpoint } = await discover(config.issuer);
  let response: Response;
  try {
    response = await fetch(userinfo_endpoint, {
      headers: { authorization: `Bearer ${accessToken}`, accept: "application/json" },
      signal: AbortSignal.timeout(IDP_TIMEOUT_MS),
    });
  } catch (error) {
    throw new IdpUnavailable(`userinfo unreachable: ${String(error)}`);
  }
  if (response.status === 401) return null;
  if (!response.ok) throw new IdpUnavailable(`userinfo answered HTTP ${response.status}`);
  const body = ZUserinfo.safeParse(await response.json().catch(() => null));
  if (!body.success) throw new IdpUnavailable("userinfo gave an unreadable answer");
  return body.data;
}

export type RevocationResult = { ok: true } | { ok: false; message: string };

/**
 * Asks the IdP to revoke a token (RFC 7009) at the revocation endpoint its discovery
 * document names. Never throws: sign-out goes on whatever the IdP says, and the
 * caller logs a failure. An IdP without a revocation endpoint is a failure to log too.
 */
export async function revokeTokenAtIdp(config: IdpClientConfig, token: string, hint: "refresh_token" | "access_token"): Promise<RevocationResult> {
  try {
    const { revocation_endpoint } = await discover(config.issuer);
    if (!revocation_endpoint) return { ok: false, message: "the IdP's discovery document names no revocation_endpoint" };
    const response = await fetch(revocation_endpoint, {
      method: "POST",
      headers: { authorization: basicAuth(config), "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({ token, token_type_hint: hint }),
      signal: AbortSignal.timeout(IDP_TIMEOUT_MS),
    });
    // 200 also for a token the IdP no longer knows (RFC 7009 §2.2).
    return response.ok ? { ok: true } : { ok: false, message: `revocation endpoint answered HTTP ${response.status}` };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The user's groups as the IdP sees them now. Uses the access token while it is
 * valid, refreshes it first when it is (nearly) expired or refused.
 */
export async function lookUpGroups(config: IdpClientConfig, subject: string, tokens: IdpTokens): Promise<GroupsLookup> {
  try {
    let refreshed: Awaited<ReturnType<typeof refreshAccessToken>> | undefined;
    let accessToken = tokens.accessToken;
    const isExpiring = tokens.accessTokenExpiresAt !== null && tokens.accessTokenExpiresAt.getTime() - EXPIRY_MARGIN_MS <= Date.now();
    if ((!accessToken || isExpiring) && tokens.refreshToken) {
      refreshed = await refreshAccessToken(config, tokens.refreshToken);
      accessToken = refreshed.accessToken;
    }
    if (!accessToken) throw new GrantRevoked("the session holds no usable access or refresh token");
    let claims = await readUserinfo(config, accessToken);
    if (claims === null && !refreshed && tokens.refreshToken) {
      refreshed = await refreshAccessToken(config, tokens.refreshToken);
      claims = await readUserinfo(config, refreshed.accessToken);
    }
    if (claims === null) throw new GrantRevoked("the IdP refused the access token");
    // The answer must be about the same person (OIDC Core 5.3.2).
    if (claims.sub !== subject) throw new GrantRevoked("userinfo answered for a different subject");
    return { ok: true, groups: readGroupsClaim(claims, config.groupsClaim), ...(refreshed ? { refreshed } : {}) };
  } catch (error) {
    if (error instanceof GrantRevoked) return { ok: false, reason: "grant_revoked", message: error.message };
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, reason: "unavailable", message };
  }
}
