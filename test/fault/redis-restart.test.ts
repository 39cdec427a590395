import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { LeaseClient, LeaseLostError } from "@leasewatch/lease";
import { runAcrossRestart } from "@/test/support/restart-load";
import { startRedis, stopAllServers, type ThrowawayServer } from "@/test/support/servers";
import { createStoreFixture } from "@/test/support/stores";

afterAll(stopAllServers);

/**
 * A Redis without persistence restarts mid-run and loses every key, counters
 * included. Fencing tokens must still never go backwards for any resource.
 */
describe("Redis restart mid-run (no persistence)", () => {
  it("tokens per resource strictly increase across the restart, and work resumes", async () => {
    const server = await startRedis();
    const fixture = await createStoreFixture("redis", { url: server.url });
    if (fixture.spec.kind !== "redis") throw new Error("expected a redis fixture");
    const probe = new Redis(server.url);
    probe.on("error", () => undefined);

    // What the restart did, seen from outside the store: the keys there were just before it,
    // and whether a key written just before it survived.
    const sentinel = `${fixture.spec.namespace}:restart-sentinel`;
    const seen = { keysBefore: 0, sentinelAfter: -1 };
    const observed: ThrowawayServer = Object.assign(Object.create(server) as ThrowawayServer, {
      restart: async () => {
        seen.keysBefore = await probe.dbsize();
        await probe.set(sentinel, "1");
        await server.restart();
        seen.sentinelAfter = await probe.exists(sentinel);
      },
    });

    // A holder with a long lease across the restart: its lock key is lost with the rest, so its
    // next renew is refused and it must learn it lost the lease.
    const holder = new LeaseClient(fixture.open(), { owner: "long-holder" });
    let isHolding = false;
    const held = holder.withLease(
      "acct:long",
      ({ signal }) =>
        new Promise<string>((resolve) => {
          isHolding = true;
          // Longer than the run can last, stretched phases included: only the restart ends it.
          const timer = setTimeout(() => resolve("never interrupted"), 45_000);
          signal.addEventListener("abort", () => {
            clearTimeout(timer);
            resolve("aborted");
          });
        }),
      { task: "long", ttlMs: 3_000 },
    );
    const heldOutcome = held.then(
      (value) => value,
      (error: unknown) => error,
    );

    const { tokens, acquiredIn } = await runAcrossRestart(fixture, observed, { ttlMs: 1_000, retryMs: 10, afterMs: 2_000, minAcquiredPerPhase: 11 });
    const outcome = await heldOutcome;
    await fixture.cleanup();
    probe.disconnect();

    // The restart really happened and emptied Redis.
    expect(seen.keysBefore).toBeGreaterThan(0);
    expect(seen.sentinelAfter).toBe(0);
    // A lease was interrupted by it, and its holder was told.
    expect(isHolding).toBe(true);
    expect(outcome).toBeInstanceOf(LeaseLostError);

    expect(acquiredIn.before).toBeGreaterThan(10);
    expect(acquiredIn.after).toBeGreaterThan(10);
    for (const [resource, list] of tokens) {
      for (let i = 1; i < list.length; i++) {
        if (!(list[i]! > list[i - 1]!)) throw new Error(`${resource}: token ${list[i]} after ${list[i - 1]} (index ${i})`);
      }
    }
  });
});
