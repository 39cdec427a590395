import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { verifyAuditChain } from "@/lib/audit/verify";
import { parseStoresConfig } from "@/lib/server/store-config";
import { freshPgSchema, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { setUpStoreFixture } from "@/test/support/store-suite";
import { startDemoApi } from "./demo-api";

/** `npm run demo` prints a lock API token; like every token, its creation is in the audit log. */
describe("the demo's lock API token", () => {
  /**
   * The console's tables (tokens, audit log) and the lease store's, in schemas of their own as in
   * the demo; the store's comes migrated, as the demo migrates its stores before it starts the lock API.
   */
  const fresh = freshPgSchema();
  const leases = setUpStoreFixture("postgres", { name: "pg-demo-test" });
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
  pool.on("error", () => {});

  afterAll(async () => {
    await pool.end();
    await fresh.drop();
  });

  it("is created with a token_create entry by the actor demo, in the same chain the console writes", async () => {
    const env: NodeJS.ProcessEnv = {
      NODE_ENV: "test",
      LEASEWATCH_STORES: JSON.stringify([leases.spec]),
      LEASEWATCH_CONSOLE_SCHEMA: fresh.schema,
      LEASEWATCH_AUDIT_KEY: "demo-api-test-audit-key-0000000000000000",
    };
    const { api, token } = await startDemoApi({ port: 0, env, stores: parseStoresConfig(env) });
    try {
      const tokens = await pool.query<{ name: string; created_by: string; prefixes: string[] }>(`SELECT name, created_by, prefixes FROM "${fresh.schema}".api_tokens`);
      expect(tokens.rows).toHaveLength(1);
      const [row] = tokens.rows;
      expect(row).toMatchObject({ created_by: "demo", prefixes: ["demo:"] });
      const entries = await pool.query<{ action: string; outcome: string; actor_sub: string; resource: string; user_agent: string; detail: string }>(
        `SELECT action, outcome, actor_sub, resource, user_agent, detail FROM "${fresh.schema}".audit_log ORDER BY id`,
      );
      expect(entries.rows).toEqual([
        expect.objectContaining({ action: "token_create", outcome: "created", actor_sub: "demo", resource: row!.name, user_agent: "npm run demo" }),
      ]);
      expect(entries.rows[0]!.detail).not.toContain(token);
      expect(await verifyAuditChain({ pool, schema: fresh.schema, key: env.LEASEWATCH_AUDIT_KEY! })).toMatchObject({ ok: true });
      // The printed token is the one the lock API accepts.
      const listed = await fetch(`${api.url}/v1/locks?prefix=demo:`, { headers: { authorization: `Bearer ${token}` } });
      expect(listed.status, await listed.clone().text()).toBe(200);
    } finally {
      await api.close();
    }
  });
});
