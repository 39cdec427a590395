/**
 * API tokens under a tenant-scoped console role (`team-billing:operator:tenant_1:*`):
 * the operator creates tokens only within tenant_1:, sees and revokes only tokens
 * whose every prefix lies within it, and every refusal is in the audit log with
 * the scope. Real Postgres: the tokens table and the audit log in one test schema.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TokenStore } from "@/lib/api/tokens";
import { createTokenAudited, revokeTokenAudited, type TokenAuditDeps } from "@/lib/audit/api-tokens";
import { SCOPE_ALL, prefixesOutsideScope, scopeOf } from "@/lib/auth/scope";
import { listApiTokenViews } from "@/lib/console/tokens/list-tokens";
import { ALICE, REQUEST, createAuditFixture, type AuditFixture, auditEntriesFor } from "@/test/support/audit";

const DAVE = { id: "dave", email: "dave@example.test", roles: ["operator"] };
const TENANT_1 = scopeOf(["tenant_1:"]);
const IN_30_DAYS = () => new Date(Date.now() + 30 * 86_400_000);
const token = (name: string, prefixes: string[]) => ({ name, prefixes, stores: ["pg-main"], actions: ["acquire" as const, "release" as const], expiresAt: IN_30_DAYS() });

const SHARED_READER = Symbol.for("leasewatch.console.api-tokens");

/**
 * Points the console's token read model at `audit`'s schema, as the console's environment would
 * (the shared reader of an earlier schema is dropped so a fresh one finds it). The returned
 * function closes that reader and puts the environment back.
 */
function pointConsoleAt(audit: AuditFixture): () => Promise<void> {
  const saved = { LEASEWATCH_AUDIT_URL: process.env.LEASEWATCH_AUDIT_URL, LEASEWATCH_CONSOLE_SCHEMA: process.env.LEASEWATCH_CONSOLE_SCHEMA };
  const shared = globalThis as Record<symbol, TokenStore | undefined>;
  process.env.LEASEWATCH_AUDIT_URL = audit.url;
  process.env.LEASEWATCH_CONSOLE_SCHEMA = audit.schema;
  delete shared[SHARED_READER];
  return async () => {
    await shared[SHARED_READER]?.close();
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
}

describe("which token prefixes lie within a scope", () => {
  it("a narrower prefix is inside; a shorter one, the empty one or a look-alike tenant is not", () => {
    expect(prefixesOutsideScope(TENANT_1, ["tenant_1:", "tenant_1:billing:"])).toEqual([]);
    expect(prefixesOutsideScope(TENANT_1, ["tenant_", "", "tenant_10:", "tenant_2:", "Tenant_1:"])).toEqual(["tenant_", "", "tenant_10:", "tenant_2:", "Tenant_1:"]);
    expect(prefixesOutsideScope(scopeOf(["tenant_1:", "tenant_3:"]), ["tenant_3:x", "tenant_1:"])).toEqual([]);
    expect(prefixesOutsideScope(SCOPE_ALL, ["", "anything"])).toEqual([]);
  });
});

describe("API tokens for a tenant-scoped operator", () => {
  let audit: AuditFixture;
  let deps: TokenAuditDeps;
  let reader: TokenStore;
  let restoreConsole: () => Promise<void> = async () => {};

  beforeAll(async () => {
    audit = await createAuditFixture();
    deps = { getAuditLog: async () => audit.log, tokenDb: { url: audit.url, schema: audit.schema } };
    reader = new TokenStore({ url: audit.url, schema: audit.schema });
    // The console's read model finds the tokens table as the console does: from its environment.
    restoreConsole = pointConsoleAt(audit);
  });
  afterAll(async () => {
    await restoreConsole();
    await reader?.close();
    await audit?.cleanup();
  });

  it("create: a token reaching another tenant is refused, nothing is stored, and the refusal is audited with the scope", async () => {
    const other = await createTokenAudited({ actor: DAVE, request: REQUEST, token: token("dave-other", ["tenant_2:"]), scope: TENANT_1 }, deps);
    expect(other).toMatchObject({ outcome: "out_of_scope", outside: ["tenant_2:"] });
    // One prefix inside, one too broad: the whole token is refused.
    const broad = await createTokenAudited({ actor: DAVE, request: REQUEST, token: token("dave-broad", ["tenant_1:billing:", "tenant_"]), scope: TENANT_1 }, deps);
    expect(broad).toMatchObject({ outcome: "out_of_scope", outside: ["tenant_"] });

    const names = (await reader.list()).map((t) => t.name);
    expect(names).not.toContain("dave-other");
    expect(names).not.toContain("dave-broad");
    expect(await auditEntriesFor(audit.log, "dave-other")).toMatchObject([
      { action: "token_create", outcome: "denied_role", actorSub: "dave", detail: "prefixes tenant_2: outside the operator scope (tenant_1:*)" },
    ]);
    expect(await auditEntriesFor(audit.log, "dave-broad")).toMatchObject([{ action: "token_create", outcome: "denied_role", detail: "prefixes tenant_ outside the operator scope (tenant_1:*)" }]);
  });

  it("create: a token within the scope is created as usual", async () => {
    const own = await createTokenAudited({ actor: DAVE, request: REQUEST, token: token("dave-billing", ["tenant_1:billing:", "tenant_1:"]), scope: TENANT_1 }, deps);
    if (own.outcome !== "created") throw new Error(`expected created, got ${own.outcome}`);
    expect(own.record.prefixes).toEqual(["tenant_1:billing:", "tenant_1:"]);
    expect(await auditEntriesFor(audit.log, "dave-billing")).toMatchObject([{ action: "token_create", outcome: "created", actorSub: "dave" }]);
  });

  it("revoke: another tenant's token, or one that also reaches another tenant, answers as not found, stays live, and the attempt is audited", async () => {
    const foreign = await createTokenAudited({ actor: ALICE, request: REQUEST, token: token("t2-workers", ["tenant_2:"]) }, deps);
    const mixed = await createTokenAudited({ actor: ALICE, request: REQUEST, token: token("t1-and-t2", ["tenant_1:", "tenant_2:"]) }, deps);
    if (foreign.outcome !== "created" || mixed.outcome !== "created") throw new Error("setup");

    for (const created of [foreign, mixed]) {
      const byId = await revokeTokenAudited({ actor: DAVE, request: REQUEST, token: { id: created.record.id }, scope: TENANT_1 }, deps);
      // The same answer as for an id no token has: nothing about the token leaks.
      expect(byId).toMatchObject({ outcome: "not_found", record: null });
      expect(await reader.authenticate(created.token)).not.toBeNull();
    }
    const byName = await revokeTokenAudited({ actor: DAVE, request: REQUEST, token: { name: "t2-workers" }, scope: TENANT_1 }, deps);
    expect(byName).toMatchObject({ outcome: "not_found", record: null });

    expect((await auditEntriesFor(audit.log, "t2-workers")).map((e) => [e.action, e.outcome, e.actorSub, e.detail])).toEqual([
      ["token_create", "created", ALICE.id, expect.any(String)],
      ["token_revoke", "not_found", "dave", `token ${foreign.record.id} is outside the operator scope (tenant_1:*)`],
      ["token_revoke", "not_found", "dave", `token ${foreign.record.id} is outside the operator scope (tenant_1:*)`],
    ]);
    expect((await auditEntriesFor(audit.log, "t1-and-t2")).map((e) => e.outcome)).toEqual(["created", "not_found"]);
  });

  it("revoke: their own tenant's token is revoked", async () => {
    const own = await createTokenAudited({ actor: ALICE, request: REQUEST, token: token("t1-cron", ["tenant_1:cron:"]) }, deps);
    if (own.outcome !== "created") throw new Error("setup");
    const revoked = await revokeTokenAudited({ actor: DAVE, request: REQUEST, token: { id: own.record.id }, scope: TENANT_1 }, deps);
    expect(revoked).toMatchObject({ outcome: "revoked", record: { name: "t1-cron" } });
    expect(await reader.authenticate(own.token, Date.now() + 1_000)).toBeNull();
  });

  it("the token list shows a scoped viewer only tokens wholly within their scope; an unscoped one sees all", async () => {
    const scoped = (await listApiTokenViews(TENANT_1)).map((t) => t.name).sort();
    expect(scoped).toEqual(["dave-billing", "t1-cron"]);
    const all = (await listApiTokenViews(SCOPE_ALL)).map((t) => t.name).sort();
    expect(all).toEqual(["dave-billing", "t1-and-t2", "t1-cron", "t2-workers"]);
    expect(await listApiTokenViews(scopeOf(["tenant_3:"]))).toEqual([]);
  });
});

describe("the token list of a scoped viewer when the table holds more than 1000 tokens", () => {
  let audit: AuditFixture;
  let restoreConsole: () => Promise<void> = async () => {};

  beforeAll(async () => {
    audit = await createAuditFixture();
    const tokens = new TokenStore({ url: audit.url, schema: audit.schema });
    await tokens.migrate();
    await tokens.close();
    // Seeded directly: five tenant_9 tokens first, then 1200 newer ones of other tenants (and one that reaches tenant_9 and another).
    const insert = (name: string, prefixes: string[], ageS: number) =>
      `('${randomUUID()}', '${name}', '\\x${randomBytes(32).toString("hex")}', ARRAY[${prefixes.map((p) => `'${p}'`).join(",")}]::text[], ARRAY['pg-main'], ARRAY['acquire'], 10, 1, 'seed', clock_timestamp() - interval '${ageS} seconds', clock_timestamp() + interval '1 day')`;
    const rows = [
      ...Array.from({ length: 5 }, (_, i) => insert(`t9-own-${i}`, ["tenant_9:", `tenant_9:job${i}:`], 5_000 + i)),
      insert("t9-and-t8", ["tenant_9:", "tenant_8:"], 10),
      ...Array.from({ length: 1200 }, (_, i) => insert(`other-${i}`, [`tenant_${100 + (i % 7)}:`], i % 1000)),
    ];
    await audit.admin.query(
      `INSERT INTO "${audit.schema}".api_tokens (id, name, token_hash, prefixes, stores, actions, rate_per_sec, max_concurrent, created_by, created_at, expires_at) VALUES ${rows.join(",")}`,
    );
    restoreConsole = pointConsoleAt(audit);
  });
  afterAll(async () => {
    await restoreConsole();
    await audit?.cleanup();
  });

  it("a tenant_9 operator still sees every tenant_9 token, older than 1000 others, and nothing else", async () => {
    const names = (await listApiTokenViews(scopeOf(["tenant_9:"]))).map((t) => t.name).sort();
    expect(names).toEqual(["t9-own-0", "t9-own-1", "t9-own-2", "t9-own-3", "t9-own-4"]);
    expect(await listApiTokenViews(scopeOf(["tenant_7:"]))).toEqual([]);
    expect((await listApiTokenViews(scopeOf(["tenant_100:"]))).every((t) => t.prefixes.every((p) => p.startsWith("tenant_100:")))).toBe(true);
  });
});
