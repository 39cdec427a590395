import { afterAll, describe, expect, it } from "vitest";
import { LeaseClient } from "@/lib/lease/client";
import { sleep } from "@/lib/lease/testing/isolation";
import { startPostgres, stopAllServers } from "@/test/support/servers";
import { checkConservation, createStoreFixture } from "@/test/support/stores";

afterAll(stopAllServers);

/**
 * PostgreSQL restarts (fast shutdown) under load: pooled connections die with
 * 57P01, clients must reconnect and carry on, tokens keep increasing, and the
 * books still balance afterwards.
 */
describe("Postgres restart mid-run", () => {
  it("clients reconnect, work resumes, tokens increase and conservation holds", async () => {
    const server = await startPostgres();
    const fixture = await createStoreFixture("postgres", server.url);
    const resources = ["acct:0", "acct:1", "acct:2"];
    const tokens = new Map<string, bigint[]>(resources.map((r) => [r, []]));
    let phase: "before" | "after" = "before";
    const acquiredIn = { before: 0, after: 0 };
    let isRunning = true;
    const ttlMs = 400;

    const loops = Array.from({ length: 4 }, async (_, i) => {
      const client = new LeaseClient(fixture.open(), { owner: `w${i}`, backoff: { baseMs: 5, capMs: 40 } });
      let n = i;
      while (isRunning) {
        const resource = resources[n++ % resources.length]!;
        try {
          await client.withLease(
            resource,
            async ({ fencingToken }) => {
              tokens.get(resource)!.push(BigInt(fencingToken));
              acquiredIn[phase] += 1;
              await sleep(10);
            },
            { task: "restart-run", ttlMs, waitMs: 300 },
          );
        } catch {
          await sleep(20);
        }
      }
    });

    await sleep(1_500);
    await server.restart();
    phase = "after";
    await sleep(2_500);
    isRunning = false;
    await Promise.all(loops);

    expect(acquiredIn.before).toBeGreaterThan(10);
    expect(acquiredIn.after).toBeGreaterThan(10);
    for (const [resource, list] of tokens) {
      for (let i = 1; i < list.length; i++) {
        if (!(list[i]! > list[i - 1]!)) throw new Error(`${resource}: token ${list[i]} after ${list[i - 1]} (index ${i})`);
      }
    }

    // Leases orphaned by the restart (acquired, reply lost) lapse; a final sweep records them.
    await sleep(ttlMs + 200);
    await fixture.store.sweep();
    const books = await checkConservation(fixture.store);
    expect(books.acquired).toBe(books.ended + books.held);
    expect(books.held).toBe(0);
    await fixture.cleanup();
  });
});
