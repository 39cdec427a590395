import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { startPostgres, startRedis, stopAllServers } from "@/test/support/servers";

afterAll(stopAllServers);

describe("throwaway servers", () => {
  it("redis: a restart loses every key (no persistence); kill -9 then restart works", async () => {
    const server = await startRedis();
    const redis = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    redis.on("error", () => undefined);
    try {
      await redis.set("k", "v");
      expect(await redis.get("k")).toBe("v");
      await server.restart();
      expect(await redis.get("k")).toBeNull();
      await redis.set("k", "w");
      await server.kill9();
      expect(server.isRunning).toBe(false);
      await server.restart();
      expect(await redis.get("k")).toBeNull();
    } finally {
      redis.disconnect();
    }
  });

  it("postgres: data survives a restart and a kill -9 (same data dir)", async () => {
    const server = await startPostgres();
    const pool = new pg.Pool({ connectionString: server.url, max: 2 });
    pool.on("error", () => undefined);
    try {
      await pool.query("CREATE TABLE t (x int)");
      await pool.query("INSERT INTO t VALUES (1)");
      await server.restart();
      expect((await pool.query("SELECT count(*)::int AS n FROM t")).rows[0].n).toBe(1);
      await server.kill9();
      expect(server.isRunning).toBe(false);
      await server.restart();
      expect((await pool.query("SELECT count(*)::int AS n FROM t")).rows[0].n).toBe(1);
    } finally {
      await pool.end();
    }
  });
});
