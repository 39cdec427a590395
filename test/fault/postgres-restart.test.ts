import { afterAll, describe, expect, it } from "vitest";
import { sleep } from "@/lib/lease/testing/isolation";
import { runAcrossRestart } from "@/test/support/restart-load";
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
    const ttlMs = 400;
    const { tokens, acquiredIn } = await runAcrossRestart(fixture, server, { ttlMs, retryMs: 20, afterMs: 2_500 });

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
