import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken, TokenStore } from "@/lib/api/tokens";
import { createTokenAudited, recordTokenRefusal, revokeTokenAudited, type TokenAuditDeps } from "@/lib/audit/api-tokens";
import { AuditLog } from "@/lib/audit/log";
import { verifyAuditChain } from "@/lib/audit/verify";
import { TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { ALICE, REQUEST, createAuditFixture, type AuditFixture, auditEntriesFor } from "@/test/support/audit";

const IN_30_DAYS = () => new Date(Date.now() + 30 * 86_400_000);
const scope = (name: string) => ({ name, prefixes: ["tenant_1:"], stores: ["pg-main"], actions: ["acquire" as const, "release" as const], expiresAt: IN_30_DAYS() });

describe("API token changes in the audit log", () => {
  let audit: AuditFixture;
  let deps: TokenAuditDeps;
  let reader: TokenStore;

  beforeAll(async () => {
    audit = await createAuditFixture();
    // The tokens table in the audit log's own schema, as with the console's defaults.
    deps = { getAuditLog: async () => audit.log, tokenDb: { url: audit.url, schema: audit.schema } };
    reader = new TokenStore({ url: audit.url, schema: audit.schema });
  });
  afterAll(async () => {
    await reader?.close();
    await audit?.cleanup();
  });

  it("create: the token works, its entry names the actor and scope, and neither the secret nor its hash is in the log", async () => {
    const outcome = await createTokenAudited({ actor: ALICE, request: REQUEST, token: scope("billing") }, deps);
    if (outcome.outcome !== "created") throw new Error(`expected created, got ${outcome.outcome}`);
    expect(outcome.token).toMatch(/^lwk_/);
    expect(outcome.record.createdBy).toBe(ALICE.id);
    expect((await reader.authenticate(outcome.token))?.name).toBe("billing");

    const [entry, ...others] = await auditEntriesFor(audit.log, "billing");
    expect(others).toEqual([]);
    expect(entry).toMatchObject({ id: outcome.auditId, action: "token_create", outcome: "created", actorSub: ALICE.id, actorEmail: ALICE.email, store: "", resource: "billing", requestId: REQUEST.requestId });
    expect(entry?.detail).toContain(outcome.record.id);
    expect(entry?.detail).toContain("prefixes tenant_1:");

    const rows = await audit.admin.query(`SELECT row_to_json(a)::text AS json FROM "${audit.schema}".audit_log a`);
    const everything = rows.rows.map((r: { json: string }) => r.json).join("\n");
    expect(everything).not.toContain(outcome.token);
    expect(everything).not.toContain(outcome.token.slice(4));
    expect(everything).not.toContain(hashToken(outcome.token).toString("hex"));
  });

  it("create with a name already taken: nothing created, the refused attempt is recorded", async () => {
    const outcome = await createTokenAudited({ actor: ALICE, request: REQUEST, token: { ...scope("billing"), prefixes: ["tenant_9:"] } }, deps);
    expect(outcome.outcome).toBe("name_taken");
    const tokens = (await reader.list()).filter((t) => t.name === "billing");
    expect(tokens.map((t) => t.prefixes)).toEqual([["tenant_1:"]]);
    expect((await auditEntriesFor(audit.log, "billing")).map((e) => [e.action, e.outcome])).toEqual([
      ["token_create", "created"],
      ["token_create", "invalid_input"],
    ]);
  });

  it("revoke: the token is refused at once, with a `revoked` entry; revoking again is `not_found`, audited too", async () => {
    const created = await createTokenAudited({ actor: ALICE, request: REQUEST, token: scope("exports") }, deps);
    if (created.outcome !== "created") throw new Error("setup");
    const revoked = await revokeTokenAudited({ actor: ALICE, request: REQUEST, token: { id: created.record.id } }, deps);
    expect(revoked).toMatchObject({ outcome: "revoked", record: { name: "exports" } });
    expect(await reader.authenticate(created.token, Date.now() + 1_000)).toBeNull();

    const again = await revokeTokenAudited({ actor: ALICE, request: REQUEST, token: { id: created.record.id } }, deps);
    expect(again).toMatchObject({ outcome: "not_found", record: { name: "exports" } });
    const unknown = await revokeTokenAudited({ actor: ALICE, request: REQUEST, token: { name: "never-created" } }, deps);
    expect(unknown).toMatchObject({ outcome: "not_found", record: null });

    expect((await auditEntriesFor(audit.log, "exports")).map((e) => [e.action, e.outcome])).toEqual([
      ["token_create", "created"],
      ["token_revoke", "revoked"],
      ["token_revoke", "not_found"],
    ]);
    expect((await auditEntriesFor(audit.log, "never-created")).map((e) => e.detail)).toEqual(["no token has this name"]);
  });

  it("a refused attempt is recorded with the actor and why", async () => {
    const bob = { id: "sub-bob", email: "bob@example.test", roles: ["viewer"] };
    const recorded = await recordTokenRefusal({ actor: bob, request: REQUEST, action: "token_create", name: "sneaky", outcome: "denied_role", detail: "needs tokens:manage" }, deps);
    expect("auditId" in recorded).toBe(true);
    expect(await auditEntriesFor(audit.log, "sneaky")).toMatchObject([{ action: "token_create", outcome: "denied_role", actorSub: "sub-bob", actorRoles: ["viewer"], detail: "needs tokens:manage" }]);
    expect((await reader.list()).some((t) => t.name === "sneaky")).toBe(false);
  });

  it("fails closed: when the entry cannot be written, the token is not created either", async () => {
    // The tokens table is reachable, the audit table is not (an unmigrated schema): the transaction rolls back.
    const broken = new AuditLog({ connectionString: audit.url, schema: "lw_test_000000000000", key: audit.key });
    try {
      const outcome = await createTokenAudited({ actor: ALICE, request: REQUEST, token: scope("no-entry-no-token") }, { ...deps, getAuditLog: async () => broken });
      expect(outcome.outcome).toBe("audit_unavailable");
      expect((await reader.list()).some((t) => t.name === "no-entry-no-token")).toBe(false);
      const down = await createTokenAudited({ actor: ALICE, request: REQUEST, token: scope("audit-down") }, { ...deps, getAuditLog: () => Promise.reject(new Error("down")) });
      expect(down.outcome).toBe("audit_unavailable");
    } finally {
      await broken.close();
    }
  });

  it("refuses to work across two databases (no shared transaction)", async () => {
    const elsewhere = TEST_DATABASE_URL.replace(/\/[^/?]*(\?|$)/, "/some_other_db$1");
    const outcome = await createTokenAudited({ actor: ALICE, request: REQUEST, token: scope("two-dbs") }, { ...deps, tokenDb: { url: elsewhere, schema: audit.schema } });
    expect(outcome.outcome).toBe("audit_unavailable");
  });

  it("token entries keep the chain verifiable (npm run audit:verify)", async () => {
    const result = await verifyAuditChain({ pool: audit.admin, schema: audit.schema, key: audit.key });
    expect(result).toMatchObject({ ok: true });
    expect(result.entries).toBeGreaterThanOrEqual(7);
  });

  it("the database still refuses an action it does not know", async () => {
    const a = `"${audit.schema}"`;
    await expect(
      audit.admin.query(`INSERT INTO ${a}.audit_log (at, actor_sub, actor_roles, action, store, resource, outcome, prev_hash, hash) VALUES (now(), 'x', '{}', 'token_steal', '', 'x', 'created', 'p', 'h-${Date.now()}')`),
    ).rejects.toThrow(/audit_log_action_check/);
  });
});
