import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { type AcquireResult, compareFencingTokens, fencedWrite, RedisLeaseStore, type StoreWarning } from "@leasewatch/lease";
import { freshRedisNamespace, sleep, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { buildClockShim } from "@/test/support/clock-shift";
import { startRedis, stopAllServers } from "@/test/support/servers";
import { createFencedDownstream } from "@/test/support/stores";

afterAll(stopAllServers);

/**
 * After a restart that lost every key, a Redis token is floored by the server's clock alone.
 * What docs/library.md promises for that case: the store warns when a server runs without an
 * append-only file, and tokens after such a loss are only as monotonic as the server's clock.
 */
describe("a Redis without persistence, restarted empty with its clock set back", () => {
  it("warns at start, issues the next holder a lower token than the one before the restart, and the fence takes the old holder's write", async () => {
    // Started 30 s fast; the restart below comes back with the right time.
    const env: Record<string, string> = { LD_PRELOAD: buildClockShim(), CLOCK_SHIFT_SECONDS: "30" };
    const server = await startRedis({ env });
    const fresh = freshRedisNamespace(server.url);
    const warnings: StoreWarning[] = [];
    const store = new RedisLeaseStore({ name: "redis-clock", url: server.url, namespace: fresh.namespace, onWarning: (w) => warnings.push(w) });
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
    const downstream = await createFencedDownstream(pool, "ledger");
    const write = (who: string, token: string) =>
      fencedWrite({ pool, table: downstream.table, key: "ledger", value: { who }, fencingToken: token, resource: "ledger", by: "ledger-db", store });
    try {
      const first = await store.acquire({ resource: "ledger", owner: "old", task: "t", ttlMs: 60_000 });
      if (!first.acquired) throw new Error("expected to acquire");
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ store: "redis-clock", code: "no_persistence" });
      expect(warnings[0]!.message).toMatch(/without an append-only file.*only as monotonic as that server's clock/);

      env.CLOCK_SHIFT_SECONDS = "0";
      await server.restart();
      let second: AcquireResult | undefined;
      for (let attempt = 0; attempt < 50 && !second; attempt++) {
        second = await store.acquire({ resource: "ledger", owner: "new", task: "t", ttlMs: 60_000 }).catch(async () => {
          await sleep(100);
          return undefined;
        });
      }
      if (!second?.acquired) throw new Error("expected the resource to be free after the restart lost every key");
      expect(compareFencingTokens(second.lease.fencingToken, first.lease.fencingToken), `${second.lease.fencingToken} < ${first.lease.fencingToken}`).toBe(-1);
      // Warned once per server, not again after the reconnect.
      expect(warnings).toHaveLength(1);

      // The old holder, paused across all this, writes after the new one: its higher token wins.
      expect(await write("new", second.lease.fencingToken)).toMatchObject({ accepted: true });
      expect(await write("old", first.lease.fencingToken)).toMatchObject({ accepted: true });
    } finally {
      await store.close();
      await downstream.drop();
      await pool.end();
    }
  }, 60_000);
});
