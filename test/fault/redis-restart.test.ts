import { afterAll, describe, expect, it } from "vitest";
import { LeaseClient } from "@/lib/lease/client";
import { sleep } from "@/lib/lease/testing/isolation";
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
    const resources = ["acct:0", "acct:1", "acct:2"];
    const tokens = new Map<string, bigint[]>(resources.map((r) => [r, []]));
    let phase: "before" | "after" = "before";
    const acquiredIn = { before: 0, after: 0 };
    let isRunning = true;

    const loops = Array.from({ length: 4 }, async (_, i) => {
      const client = new LeaseClient(fixture.open(), { owner: `w${i}`, backoff: { baseMs: 5, capMs: 40 } });
      let n = i;
      while (isRunning) {
        const resource = resources[n++ % resources.length]!;
        try {
          await client.withLease(
            resource,
            async ({ fencingToken }) => {
              // One holder at a time per resource, so push order is acquisition order.
              tokens.get(resource)!.push(BigInt(fencingToken));
              acquiredIn[phase] += 1;
              await sleep(10);
            },
            { task: "restart-run", ttlMs: 1_000, waitMs: 300 },
          );
        } catch {
          // Contention, a lost lease across the restart, or the store briefly unreachable.
          await sleep(10);
        }
      }
    });

    await sleep(1_500);
    await server.restart();
    phase = "after";
    await sleep(2_000);
    isRunning = false;
    await Promise.all(loops);
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
