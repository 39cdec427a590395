import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { TokenStore } from "@/lib/api/tokens";
import { SessionStore } from "@/lib/auth/session-store";
import { freshPgSchema, type FreshPgSchema, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { runAuditMigrations } from "./migrations";

/**
 * The console's sessions, audit log and API tokens live in one schema and each migrate
 * under a lock of their own. On a fresh database `npm run demo` starts them together
 * (the console, and the lock API next to it): all three create that schema at the same
 * moment, and two concurrent CREATE SCHEMA IF NOT EXISTS fail one of them.
 */
describe("the console schema's three migrators, started at once on a fresh database", () => {
  const schemas: FreshPgSchema[] = [];
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 8 });
  pool.on("error", () => {});

  afterAll(async () => {
    for (const s of schemas) await s.drop();
    await pool.end();
  });

  it("all succeed, round after round", async () => {
    for (let round = 0; round < 8; round++) {
      const fresh = freshPgSchema();
      schemas.push(fresh);
      const sessions = new SessionStore({ schema: fresh.schema, secret: "s".repeat(32), pool });
      const tokens = new TokenStore({ schema: fresh.schema, pool });
      const results = await Promise.allSettled([sessions.migrate(), tokens.migrate(), runAuditMigrations(pool, fresh.schema)]);
      expect(results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
      const tables = await pool.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1", [fresh.schema]);
      expect(tables.rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(["api_tokens", "audit_log", "console_sessions"]));
    }
  });
});
