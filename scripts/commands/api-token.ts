/**
 * The lock API's tokens: `create --name billing --prefix tenant_1: [--prefix …] [--store pg-main …]
 *   [--action acquire …] [--days 90] [--rate 200] [--concurrency 32]` creates one and prints it once;
 * `list`; `revoke --name billing`. Defaults: every configured store, every action, 90 days.
 *
 * With LEASEWATCH_AUDIT_KEY set, create and revoke are written to the console's
 * audit log (actor `cli:<os user>`) in the same transaction as the change, as the
 * console does; without it they are not, and the command says so.
 */
import { randomUUID } from "node:crypto";
import { userInfo } from "node:os";
import { parseArgs } from "node:util";
import { resolveConsoleDbConfig } from "../../lib/auth/session-store";
import { parseStoresConfig } from "../../lib/server/store-config";
import { API_ACTIONS, TokenStore, ZNewToken, type ApiAction } from "../../lib/api/tokens";
import { createTokenAudited, revokeTokenAudited, type TokenAuditDeps } from "../../lib/audit/api-tokens";
import { parseAuditConfig } from "../../lib/audit/config";
import type { AuditActor, RequestMeta } from "../../lib/audit/force-release";
import { AuditLog } from "../../lib/audit/log";

export const API_TOKEN_USAGE = `Usage: leasewatch token create --name NAME --prefix PREFIX [--prefix …] [--store STORE …]
                              [--action ACTION …] [--days 90] [--rate N] [--concurrency N]
       leasewatch token list
       leasewatch token revoke --name NAME
(in the console's installation; also: npm run api:token -- create|list|revoke …)

Manages the lock API's bearer tokens. create prints the new token once (on stdout).
Defaults: every configured store, every action (${API_ACTIONS.join(", ")}), 90 days.
With LEASEWATCH_AUDIT_KEY set, create and revoke are written to the console's audit log
(actor cli:<os user>); without it they are not, and the command says so.
Exit 0 done, 1 failed, 2 usage error.`;

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? "unknown";
  }
}

/** The audit log when its key is configured (migrated, so token entries are accepted), else null. */
async function openAuditLog(): Promise<AuditLog | null> {
  if (!process.env.LEASEWATCH_AUDIT_KEY) return null;
  const config = parseAuditConfig();
  const audit = new AuditLog({ connectionString: config.url, schema: config.schema, key: config.key, ...(config.pooler ? { pooler: config.pooler } : {}) });
  await audit.migrate();
  return audit;
}

/** Runs `create`, `list` or `revoke` (the first of `args`); resolves to the exit status. */
export async function runApiToken(args: readonly string[], userAgent: string): Promise<number> {
  const [command, ...rest] = args;
  if (command !== "create" && command !== "list" && command !== "revoke") {
    console.error(command === undefined ? API_TOKEN_USAGE : `unknown command "${command}"\n\n${API_TOKEN_USAGE}`);
    return 2;
  }
  const options = {
    name: { type: "string" },
    prefix: { type: "string", multiple: true },
    store: { type: "string", multiple: true },
    action: { type: "string", multiple: true },
    days: { type: "string", default: "90" },
    rate: { type: "string" },
    concurrency: { type: "string" },
  } as const;
  let values: TokenArgs;
  try {
    ({ values } = parseArgs({ args: rest, options, strict: true, allowPositionals: false }));
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${API_TOKEN_USAGE}`);
    return 2;
  }
  if (command === "revoke" && !values.name) {
    console.error(`revoke needs --name\n\n${API_TOKEN_USAGE}`);
    return 2;
  }
  try {
    await manageTokens(command, values, userAgent);
    return 0;
  } catch (error) {
    console.error(`[api:token] ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

interface TokenArgs {
  name?: string;
  prefix?: string[];
  store?: string[];
  action?: string[];
  days: string;
  rate?: string;
  concurrency?: string;
}

async function manageTokens(command: "create" | "list" | "revoke", values: TokenArgs, userAgent: string): Promise<void> {
  const db = resolveConsoleDbConfig();
  const tokens = new TokenStore({ url: db.url, schema: db.schema, ...(db.pooler ? { pooler: db.pooler } : {}) });
  const audit = command === "create" || command === "revoke" ? await openAuditLog() : null;
  const user = osUser();
  const actor: AuditActor = { id: `cli:${user}`, email: null, roles: [] };
  const request: RequestMeta = { requestId: randomUUID(), ip: null, userAgent };
  const deps: TokenAuditDeps | null = audit ? { getAuditLog: async () => audit, tokenDb: db } : null;
  if ((command === "create" || command === "revoke") && !deps) console.error("[api:token] LEASEWATCH_AUDIT_KEY is not set: this change is not written to the audit log");
  try {
    if (command === "create") {
      const input = ZNewToken.safeParse({
        name: values.name,
        prefixes: values.prefix ?? [],
        stores: values.store ?? parseStoresConfig().map((s) => s.name),
        actions: (values.action ?? [...API_ACTIONS]) as ApiAction[],
        expiresAt: new Date(Date.now() + Number(values.days) * 86_400_000),
        ...(values.rate ? { ratePerSec: Number(values.rate) } : {}),
        ...(values.concurrency ? { maxConcurrent: Number(values.concurrency) } : {}),
        createdBy: actor.id,
      });
      if (!input.success) throw new Error(input.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
      let created: { token: string; record: Awaited<ReturnType<TokenStore["create"]>>["record"] };
      if (deps) {
        const { name, prefixes, stores, actions, expiresAt, ratePerSec, maxConcurrent } = input.data;
        const token = { name, prefixes, stores, actions, expiresAt, ratePerSec, maxConcurrent };
        const outcome = await createTokenAudited({ actor, request, token }, deps);
        if (outcome.outcome === "name_taken") throw new Error(`a token named "${token.name}" already exists (audit entry ${outcome.auditId})`);
        if (outcome.outcome === "audit_unavailable") throw new Error(outcome.message);
        // The CLI runs as the OS user, with no console scope; kept for the type's sake.
        if (outcome.outcome === "out_of_scope") throw new Error(`prefixes ${outcome.outside.join(", ")} are outside the scope (audit entry ${outcome.auditId})`);
        created = { token: outcome.token, record: outcome.record };
      } else {
        created = await tokens.create(input.data);
      }
      const { token, record } = created;
      console.error(`created token "${record.name}" for ${record.prefixes.join(", ")} on ${record.stores.join(", ")}, expires ${record.expiresAt.toISOString()}; it is shown once:`);
      console.log(token);
    } else if (command === "list") {
      for (const t of await tokens.list()) {
        const state = t.revokedAt ? "revoked" : t.expiresAt.getTime() <= Date.now() ? "expired" : "live";
        console.log(`${t.name}\t${state}\t${t.prefixes.join(",")}\t${t.stores.join(",")}\t${t.actions.join(",")}\texpires ${t.expiresAt.toISOString()}`);
      }
    } else {
      if (!values.name) throw new Error("revoke needs --name");
      let revoked: boolean;
      if (deps) {
        const outcome = await revokeTokenAudited({ actor, request, token: { name: values.name } }, deps);
        if (outcome.outcome === "audit_unavailable") throw new Error(outcome.message);
        revoked = outcome.outcome === "revoked";
      } else {
        revoked = (await tokens.revoke(values.name)).revoked;
      }
      console.log(revoked ? `revoked "${values.name}"` : `no live token named "${values.name}"`);
    }
  } finally {
    await tokens.close();
    await audit?.close();
  }
}
