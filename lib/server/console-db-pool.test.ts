import pg from "pg";
import { describe, expect, it } from "vitest";
import { TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { resolveConsolePool } from "./console-db-pool";

describe("resolveConsolePool on a caller's pool", () => {
  it("adds one idle-error listener however many components share the pool, and an idle client's death crashes nothing", async () => {
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      // Sessions and API tokens per schema, all on one pool: eleven listeners is where Node warns of a leak.
      for (let component = 0; component < 12; component++) {
        const { pool: resolved, ownsPool } = resolveConsolePool({ pool });
        expect(resolved).toBe(pool);
        expect(ownsPool).toBe(false);
      }
      expect(pool.listenerCount("error")).toBe(1);

      // An idle client whose backend the server ends: the pool emits "error", which with no
      // listener would be an uncaught exception and fail this run.
      const client = await pool.connect();
      const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      client.release();
      expect(pool.idleCount).toBe(1);
      await admin.query("SELECT pg_terminate_backend($1)", [rows[0]!.pid]);
      await expect.poll(() => pool.totalCount, { timeout: 5_000 }).toBe(0);
      expect((await pool.query<{ one: number }>("SELECT 1 AS one")).rows[0]!.one).toBe(1);
    } finally {
      await admin.end();
      await pool.end();
    }
  });
});
