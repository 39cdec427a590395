/**
 * Turns a decoded session cookie into the signed-in user, or into nobody.
 *
 * The cookie (a next-auth JWT) only says *which* session this is (`sid`) and when
 * it began (`signedInAt`). Whether it still counts, and with which roles, is
 * decided here on every request:
 *
 *   - absolute lifetime: `signedInAt + LEASEWATCH_SESSION_MAX_AGE`, however often
 *     next-auth re-issued the cookie;
 *   - the server-side record (lib/auth/session-store.ts) must exist and not be
 *     revoked — sign-out revokes it (and its tokens at the IdP), and so does a
 *     new sign-in in the same browser, so a copied cookie stops working;
 *   - groups are re-read from the IdP every LEASEWATCH_GROUPS_REFRESH seconds
 *     (always, for a fresh check) and mapped to roles with the current
 *     LEASEWATCH_ROLE_MAP on each request.
 */
import { getAuthEnv, type AuthEnv } from "@/lib/auth/env";
import { identityId } from "./identity";
import { lookUpGroups, revokeTokenAtIdp, type GroupsLookup, type IdpClientConfig } from "./idp";
import { mapGroupsToAccess, type Role, type RoleAccess } from "./roles";
import { resolveConsoleDbConfig, SessionStore, type NewSessionRecord, type SessionRecord } from "./session-store";
import { getLogger } from "@/lib/log/logger";

/** The signed-in user as pages and handlers see it. */
export interface AppSession {
  user: {
    /** The stable id: the IdP's `sub` with its issuer (./identity). What records name the person by. */
    id: string;
    /** Only an address the IdP verified; a label, never an identity. */
    email: string | null;
    name: string | null;
    roles: Role[];
    /** Per role held, the resources it applies to (LEASEWATCH_ROLE_MAP scopes); a role without an entry applies nowhere. See scopeFor() in ./session. */
    scopes: RoleAccess["scopes"];
  };
  /** Sign-in time (ms since epoch); the session ends `sessionMaxAgeS` after it. */
  signedInAt: number;
  /** When the IdP last made the user authenticate (ms since epoch), from the id token's `auth_time`; null if it never said. */
  authTime: number | null;
}

/** What the console keeps in the (encrypted) session cookie. */
export interface SessionTokenClaims {
  sid?: unknown;
  signedInAt?: unknown;
  sub?: unknown;
  issuer?: unknown;
  email?: unknown;
  name?: unknown;
}

/**
 * Records are cached in this process for 5 s: a sign-out handled by this process
 * takes effect at once (it drops the entry), one handled by another replica within 5 s.
 * A fresh check (force-release) always reads the record from the database.
 */
const RECORD_CACHE_MS = 5_000;
const RECORD_CACHE_MAX = 10_000;
/**
 * When the IdP cannot be asked, the last groups it gave are used for at most this
 * long after they were read; after that the session has no role until the IdP answers.
 */
export const GROUPS_MAX_STALE_MS = 5 * 60_000;

/**
 * Next.js bundles pages and route handlers separately, each with its own copy of this
 * module; keeping the state on globalThis gives the whole process one pool, one cache
 * and one in-flight IdP lookup per session, so a sign-out handled by the auth route
 * is seen at once by pages too.
 */
interface ProcessSessionState {
  store?: SessionStore;
  recordCache: Map<string, { record: SessionRecord; fetchedAt: number }>;
  groupLookups: Map<string, Promise<GroupsLookup>>;
}
const STATE_KEY = Symbol.for("leasewatch.console.session-state");
const shared: ProcessSessionState = ((globalThis as Record<symbol, unknown>)[STATE_KEY] as ProcessSessionState | undefined) ?? {
  recordCache: new Map(),
  groupLookups: new Map(),
};
(globalThis as Record<symbol, unknown>)[STATE_KEY] = shared;
const recordCache = shared.recordCache;
const groupLookups = shared.groupLookups;

export function getSessionStore(): SessionStore {
  if (!shared.store) {
    const env = getAuthEnv();
    const db = resolveConsoleDbConfig();
    shared.store = new SessionStore({ url: db.url, schema: db.schema, secret: env.secret, ...(db.pooler ? { pooler: db.pooler } : {}) });
  }
  return shared.store;
}

/** Closes the sessions pool (the console's shutdown). */
export async function closeSessionStore(): Promise<void> {
  const store = shared.store;
  shared.store = undefined;
  await store?.close();
}

function cacheRecord(record: SessionRecord): void {
  recordCache.delete(record.id);
  if (recordCache.size >= RECORD_CACHE_MAX) {
    const oldest = recordCache.keys().next().value;
    if (oldest !== undefined) recordCache.delete(oldest);
  }
  recordCache.set(record.id, { record, fetchedAt: Date.now() });
}

async function loadRecord(sid: string, bypassCache: boolean): Promise<SessionRecord | null> {
  const cached = recordCache.get(sid);
  if (!bypassCache && cached && Date.now() - cached.fetchedAt < RECORD_CACHE_MS) return cached.record;
  const record = await getSessionStore().get(sid);
  if (record) cacheRecord(record);
  else recordCache.delete(sid);
  return record;
}

/** One IdP round trip per session at a time, however many requests need it at once. */
function idpClientOf(env: AuthEnv): IdpClientConfig {
  return { issuer: env.issuer, clientId: env.clientId, clientSecret: env.clientSecret, groupsClaim: env.groupsClaim };
}

function lookUpGroupsOnce(env: AuthEnv, record: SessionRecord): Promise<GroupsLookup> {
  let pending = groupLookups.get(record.id);
  if (!pending) {
    pending = lookUpGroups(
      idpClientOf(env),
      record.subject,
      { accessToken: record.accessToken, accessTokenExpiresAt: record.accessTokenExpiresAt, refreshToken: record.refreshToken },
    ).finally(() => groupLookups.delete(record.id));
    groupLookups.set(record.id, pending);
  }
  return pending;
}

export type ResolvedSession =
  | { status: "signed_out" }
  | {
      status: "ok";
      session: AppSession;
      /** Groups were read from the IdP during this call. */
      isGroupsFresh: boolean;
      /** Set when the IdP should have been asked and could not be. */
      idpProblem?: string;
    };

const isUuid = (v: unknown): v is string => typeof v === "string" && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(v);

/**
 * The session behind a decoded cookie. `fresh` re-reads the groups from the IdP
 * now and bypasses the record cache (for mutations); `offline` never asks the IdP.
 */
export async function resolveSession(claims: SessionTokenClaims | null, options: { fresh?: boolean; offline?: boolean } = {}): Promise<ResolvedSession> {
  if (!claims || !isUuid(claims.sid) || typeof claims.signedInAt !== "number" || typeof claims.sub !== "string") return { status: "signed_out" };
  const env = getAuthEnv();
  // A `sub` means someone only at the issuer that said it (and a cookie without one predates verified-email labels).
  if (claims.issuer !== env.issuer) return { status: "signed_out" };
  const now = Date.now();
  if (now >= claims.signedInAt + env.sessionMaxAgeS * 1000) return { status: "signed_out" };

  const fresh = options.fresh ?? false;
  let record = await loadRecord(claims.sid, fresh);
  if (!record || record.revokedAt !== null || record.subject !== claims.sub || now >= record.expiresAt.getTime()) return { status: "signed_out" };

  let isGroupsFresh = false;
  let idpProblem: string | undefined;
  // offline: who is asking, from the session record alone (a rate limit taken before any IdP call).
  if (!options.offline && (fresh || now - record.groupsCheckedAt.getTime() >= env.groupsRefreshS * 1000)) {
    let lookup = await lookUpGroupsOnce(env, record);
    if (!lookup.ok && lookup.reason === "grant_revoked") {
      // Another console replica may have just refreshed (and an IdP that rotates refresh
      // tokens then refuses the old one): retry once with what the database holds now.
      const latest = await loadRecord(record.id, true);
      if (latest && latest.revokedAt === null && latest.refreshToken !== record.refreshToken) {
        record = latest;
        lookup = await lookUpGroupsOnce(env, record);
      }
    }
    if (lookup.ok) {
      const checkedAt = new Date();
      await getSessionStore().updateGroups(record.id, { groups: lookup.groups, checkedAt, tokens: lookup.refreshed });
      record = {
        ...record,
        groups: lookup.groups,
        groupsCheckedAt: checkedAt,
        ...(lookup.refreshed ?? {}),
      };
      cacheRecord(record);
      isGroupsFresh = true;
    } else if (lookup.reason === "grant_revoked") {
      // The IdP no longer stands behind this session (user disabled, grant withdrawn).
      getLogger("session").warn({ subject: record.subject, reason: lookup.message }, "session ended: the IdP no longer stands behind it");
      await revokeSession(record.id, `idp: ${lookup.message}`, { atIdp: false });
      return { status: "signed_out" };
    } else {
      getLogger("session").warn({ subject: record.subject, reason: lookup.message }, "could not re-read groups from the IdP");
      idpProblem = lookup.message;
    }
  }

  const isTooStale = Date.now() - record.groupsCheckedAt.getTime() > GROUPS_MAX_STALE_MS;
  const { roles, scopes } = isTooStale ? { roles: [], scopes: {} } : mapGroupsToAccess(record.groups, env.roleMap);
  return {
    status: "ok",
    isGroupsFresh,
    ...(idpProblem !== undefined ? { idpProblem } : {}),
    session: {
      user: {
        id: identityId(env.issuer, claims.sub),
        email: typeof claims.email === "string" ? claims.email : null,
        name: typeof claims.name === "string" ? claims.name : null,
        roles,
        scopes,
      },
      signedInAt: record.signedInAt.getTime(),
      authTime: record.authTime?.getTime() ?? null,
    },
  };
}

/** Records a new sign-in; called from next-auth's jwt callback. */
export async function recordSignIn(record: NewSessionRecord): Promise<void> {
  await getSessionStore().create(record);
}

/**
 * Ends a session on the server (sign-out). The cached copy in this process goes at once.
 * `atIdp` (default): the IdP is then asked to revoke its refresh and access tokens too,
 * so they cannot mint or read anything more; most IdPs end the grant behind them with
 * it. A failure there is logged and the sign-out stands.
 */
export async function revokeSession(sid: string, reason: string, options: { atIdp?: boolean } = {}): Promise<void> {
  recordCache.delete(sid);
  // Read before revoking: the revocation clears the tokens from the record.
  const record = options.atIdp === false ? null : await getSessionStore().get(sid);
  await getSessionStore().revoke(sid, reason);
  recordCache.delete(sid);
  if (!record || record.revokedAt !== null) return;
  const idp = idpClientOf(getAuthEnv());
  const tokens = [
    ...(record.refreshToken ? [{ token: record.refreshToken, hint: "refresh_token" as const }] : []),
    ...(record.accessToken ? [{ token: record.accessToken, hint: "access_token" as const }] : []),
  ];
  // Side by side: an IdP that does not answer holds the sign-out up for one timeout, not two.
  await Promise.all(
    tokens.map(async ({ token, hint }) => {
      const result = await revokeTokenAtIdp(idp, token, hint);
      if (!result.ok) getLogger("session").warn({ subject: record.subject, hint, reason: result.message }, "session ended here, but the IdP did not revoke its token");
    }),
  );
}
