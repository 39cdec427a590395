import { afterAll, describe, expect, it } from "vitest";
import { runAcrossRestart } from "@/test/support/restart-load";
import { startRedis, stopAllServers } from "@/test/support/servers";
import { createStoreFixture } from "@/test/support/stores";

afterAll(stopAllServers);

/**
 * A Redis without persistence restarts mid-run and loses every key, counters
 * included. Fencing tokens must still never go backwards for any resource.
 */
describe("Redis restart mid-run (no persistence)", () => {
  it("tokens per resource strictly increase across the restart, and work resumes", async () => {
    const server = await startRedis();
    const fixture = await createStoreFixture("redis", server.url);
    const { tokens, acquiredIn } = await runAcrossRestart(fixture, server, { ttlMs: 1_000, retryMs: 10, afterMs: 2_000 });
    await fixture.cleanup();

    expect(acquiredIn.before).toBeGreaterThan(10);
    expect(acquiredIn.after).toBeGreaterThan(10);
    for (const [resource, list] of tokens) {
      for (let i = 1; i < list.length; i++) {
        if (!(list[i]! > list[i - 1]!)) throw new Error(`${resource}: token ${list[i]} after ${list[i - 1]} (index ${i})`);
      }
    }
  });
});
