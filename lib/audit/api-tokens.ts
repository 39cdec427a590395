/**
 * Audited changes to the lock API's bearer tokens (create, revoke), in the same
 * hash-chained log as force-release. Framework-free: the console's route handlers
 * and the `api:token` CLI call these after checking who is asking; the actor
 * always comes from the session (or the OS user, for the CLI), never from a form.
 *
 * Fail closed: the token row and its audit entry are one transaction (the tokens
 * table lives in the audit log's database), so there is never a token without
 * its entry. The secret itself is never written to the log, only the token's id
 * and scope.
 *
 * A tenant-scoped operator (LEASEWATCH_ROLE_MAP `group:operator:<prefix>*`) passes
 * `scope`: a token may then only reach prefixes within it, and a token that reaches
 * anything outside it is treated as not there, so it can be neither revoked nor
 * told apart from one that does not exist.
 */
import pg from "pg";
import { SCOPE_ALL, describeScope, prefixesOutsideScope, type ViewerScope } from "@/lib/auth/scope";
import { TokenStore, type ApiToken, type TNewToken } from "@/lib/api/tokens";
import type { AuditOutcome } from "./chain";
import { isSameDatabase } from "./config";
import { recordedActor, type AuditActor, type RequestMeta } from "./force-release";
import type { AuditLog } from "./log";
import type { AuditDraft } from "./entry";
import { auditText } from "./text";
import { getLogger } from "@/lib/log/logger";

export type TokenAuditAction = "token_create" | "token_revoke";
export type TokenRefusedOutcome = "denied_role" | "reauth_required" | "rate_limited" | "invalid_input";

export interface TokenAuditDeps {
  /** The audit log, migrated. Throws when it is not configured or reachable. */
  getAuditLog(): Promise<AuditLog>;
  /** Where the tokens table is: its schema, in the audit log's database. */
  tokenDb: { url: string; schema: string };
}

export type AuditUnavailable = { outcome: "audit_unavailable"; message: string };

export type CreateTokenOutcome =
  | { outcome: "created"; auditId: string; token: string; record: ApiToken }
  /** Nothing created: another token (live, expired or revoked) has this name. */
  | { outcome: "name_taken"; auditId: string }
  /** Nothing created: these requested prefixes are outside the operator's scope (refusal audited). */
  | { outcome: "out_of_scope"; auditId: string; outside: string[] }
  | AuditUnavailable;

export type RevokeTokenOutcome =
  | { outcome: "revoked"; auditId: string; record: ApiToken }
  /** Nothing changed: no token has this id, or it was revoked already (`record` says which). */
  | { outcome: "not_found"; auditId: string; record: ApiToken | null }
  | AuditUnavailable;

const UNAVAILABLE: AuditUnavailable = {
  outcome: "audit_unavailable",
  message: "The audit log cannot be written right now, so nothing was changed (every token change is recorded first).",
};

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

function unavailable(error: unknown): AuditUnavailable {
  getLogger("audit").error({ error: errorText(error) }, "audit log unavailable: token change refused");
  return { ...UNAVAILABLE };
}

/** The scope of a token in words, for the entry's detail: never the secret or its hash. */
export function describeToken(token: Pick<ApiToken, "id" | "prefixes" | "stores" | "actions" | "expiresAt">): string {
  return `token ${token.id}; prefixes ${token.prefixes.join(" ")}; stores ${token.stores.join(" ")}; actions ${token.actions.join(" ")}; expires ${token.expiresAt.toISOString()}`;
}

/**
 * One entry about a token. The lease columns stay empty; `resource` holds the
 * token's name (so the log's prefix filter finds a token's history) and `store`
 * is empty (a token spans stores; its detail lists them).
 */
function tokenDraft(
  actor: AuditActor,
  request: RequestMeta,
  action: TokenAuditAction,
  name: string,
  outcome: AuditOutcome,
  detail: string | null,
): AuditDraft {
  return {
    requestId: request.requestId,
    actorSub: actor.id,
    actorEmail: actor.email,
    actorRoles: actor.roles,
    action,
    store: "",
    resource: name,
    leaseId: null,
    owner: null,
    task: null,
    fencingToken: null,
    reason: null,
    outcome,
    newHolder: null,
    ip: request.ip,
    userAgent: request.userAgent,
    resolvesId: null,
    detail,
  };
}

/** One TokenStore per audit log, on the log's own pool, so token rows can join its transactions. */
const storesByLog = new WeakMap<AuditLog, Map<string, TokenStore>>();
function tokenStoreOn(audit: AuditLog, schema: string): TokenStore {
  let byLog = storesByLog.get(audit);
  if (!byLog) storesByLog.set(audit, (byLog = new Map()));
  let store = byLog.get(schema);
  if (!store) byLog.set(schema, (store = new TokenStore({ schema, pool: audit.pool })));
  return store;
}

async function open(deps: TokenAuditDeps): Promise<{ audit: AuditLog; tokens: TokenStore } | AuditUnavailable> {
  try {
    const audit = await deps.getAuditLog();
    // One transaction needs one database; the configuration puts both there, this keeps it so.
    if (audit.connectionString !== undefined && !isSameDatabase(audit.connectionString, deps.tokenDb.url)) {
      return unavailable(new Error("the API tokens table and the audit log are in different databases"));
    }
    const tokens = tokenStoreOn(audit, deps.tokenDb.schema);
    await tokens.migrate();
    return { audit, tokens };
  } catch (error) {
    return unavailable(error);
  }
}

/** The entry of a refused attempt (for one that is only counted: see refusal-tally.ts). */
export function tokenRefusalDraft(input: { actor: AuditActor; request: RequestMeta; action: TokenAuditAction; name: string; outcome: TokenRefusedOutcome; detail: string }): AuditDraft {
  return tokenDraft(input.actor, input.request, input.action, input.name, input.outcome, input.detail);
}

/** Records a refused attempt (role, sign-in age, rate, input, origin). The refusal stands whether or not this is written. */
export async function recordTokenRefusal(
  input: { actor: AuditActor; request: RequestMeta; action: TokenAuditAction; name: string; outcome: TokenRefusedOutcome; detail: string },
  deps: Pick<TokenAuditDeps, "getAuditLog">,
): Promise<{ auditId: string } | AuditUnavailable> {
  try {
    const audit = await deps.getAuditLog();
    const entry = await audit.append(tokenDraft(input.actor, input.request, input.action, input.name, input.outcome, input.detail));
    if (!entry) return unavailable(new Error("audit entry was not written"));
    return { auditId: entry.id };
  } catch (error) {
    return unavailable(error);
  }
}

const UNIQUE_VIOLATION = "23505";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a scoped operator may see and change this token: every one of its prefixes lies within the scope. */
export function isTokenInScope(scope: ViewerScope, token: Pick<ApiToken, "prefixes">): boolean {
  return prefixesOutsideScope(scope, token.prefixes).length === 0;
}

/** Creates a token and its `created` entry in one transaction; a taken name is refused and audited. */
export async function createTokenAudited(
  req: { actor: AuditActor; request: RequestMeta; token: Omit<TNewToken, "createdBy">; scope?: ViewerScope },
  deps: TokenAuditDeps,
): Promise<CreateTokenOutcome> {
  const scope = req.scope ?? SCOPE_ALL;
  const outside = prefixesOutsideScope(scope, req.token.prefixes);
  if (outside.length > 0) {
    // Decided on the request alone, before the tokens table is read: the answer says nothing about other tokens.
    const refused = await recordTokenRefusal(
      {
        actor: req.actor,
        request: req.request,
        action: "token_create",
        name: req.token.name,
        outcome: "denied_role",
        detail: `prefixes ${outside.join(" ")} outside the operator scope (${describeScope(scope)})`,
      },
      deps,
    );
    return "auditId" in refused ? { outcome: "out_of_scope", auditId: refused.auditId, outside } : refused;
  }
  const opened = await open(deps);
  if ("outcome" in opened) return opened;
  const { audit, tokens } = opened;
  try {
    return await audit.inChain(async (tx) => {
      const created = await tokens.create({ ...req.token, createdBy: recordedActor(req.actor) }, tx.db);
      const entry = await tx.append(tokenDraft(req.actor, req.request, "token_create", created.record.name, "created", describeToken(created.record)));
      if (!entry) throw new Error("audit entry was not written");
      return { outcome: "created", auditId: entry.id, token: created.token, record: created.record } as const;
    });
  } catch (error) {
    if (error instanceof pg.DatabaseError && error.code === UNIQUE_VIOLATION) {
      // Rolled back; the attempt is still recorded, on its own.
      const refused = await recordTokenRefusal(
        { actor: req.actor, request: req.request, action: "token_create", name: req.token.name, outcome: "invalid_input", detail: "name: a token with this name already exists" },
        deps,
      );
      return "auditId" in refused ? { outcome: "name_taken", auditId: refused.auditId } : refused;
    }
    // Rolled back: neither the token nor its entry exists.
    return unavailable(error);
  }
}

/** Revokes a live token and writes its `revoked` entry in one transaction; an unknown or already revoked one is `not_found` (audited too). */
export async function revokeTokenAudited(
  req: { actor: AuditActor; request: RequestMeta; token: { id: string } | { name: string }; scope?: ViewerScope },
  deps: TokenAuditDeps,
): Promise<RevokeTokenOutcome> {
  const scope = req.scope ?? SCOPE_ALL;
  const opened = await open(deps);
  if ("outcome" in opened) return opened;
  const { audit, tokens } = opened;
  try {
    // A key no token can have (an id that is not a UUID, a name Postgres would refuse) is looked up as no token, not as an error.
    const which: { id: string } | { name: string } = "id" in req.token ? { id: req.token.id } : { name: auditText(req.token.name, { maxBytes: 1024 }) };
    const isPossible = !("id" in which) || UUID.test(which.id);
    const find = (db: pg.PoolClient) => (!isPossible ? null : "id" in which ? tokens.get(which.id, db) : tokens.getByName(which.name, db));
    return await audit.inChain(async (tx) => {
      if (scope.kind !== "all") {
        // A token's prefixes never change, so this look-up still holds when the revoke below runs.
        const target = await find(tx.db);
        if (target && !isTokenInScope(scope, target)) {
          const detail = `token ${target.id} is outside the operator scope (${describeScope(scope)})`;
          const entry = await tx.append(tokenDraft(req.actor, req.request, "token_revoke", target.name, "not_found", detail));
          if (!entry) throw new Error("audit entry was not written");
          // Answered as a token that does not exist: the caller learns nothing about it.
          return { outcome: "not_found", auditId: entry.id, record: null } as const;
        }
      }
      const result = !isPossible ? { revoked: false } : "id" in which ? await tokens.revokeById(which.id, tx.db) : await tokens.revoke(which.name, tx.db);
      if (result.revoked && result.token) {
        const entry = await tx.append(tokenDraft(req.actor, req.request, "token_revoke", result.token.name, "revoked", describeToken(result.token)));
        if (!entry) throw new Error("audit entry was not written");
        return { outcome: "revoked", auditId: entry.id, record: result.token } as const;
      }
      const existing = await find(tx.db);
      const detail = existing ? `token ${existing.id} was already revoked` : "id" in which ? `no token has id ${which.id}` : "no token has this name";
      const entry = await tx.append(tokenDraft(req.actor, req.request, "token_revoke", existing?.name ?? ("id" in which ? which.id : which.name), "not_found", detail));
      if (!entry) throw new Error("audit entry was not written");
      return { outcome: "not_found", auditId: entry.id, record: existing } as const;
    });
  } catch (error) {
    return unavailable(error);
  }
}
