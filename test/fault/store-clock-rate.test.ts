import { afterAll, describe, expect, it } from "vitest";
import { LeaseClient } from "@leasewatch/lease";
import { sleep } from "@leasewatch/lease/testing";
import { buildClockShim } from "@/test/support/clock-shift";
import { startRedis, stopAllServers } from "@/test/support/servers";
import { createStoreFixture } from "@/test/support/stores";

afterAll(stopAllServers);

/**
 * The store's clock runs 8.3 % fast (chrony's and ntpd's largest slew rate): the store expires
 * a lease in ttl / 1.083 of real time. The client's local deadline must still come first, so
 * a holder stops before anyone else can be granted the resource.
 */
describe("a store clock slewed fast", () => {
  it("the holder's local deadline passes before the store hands the resource to a rival", async () => {
    const server = await startRedis({ env: { LD_PRELOAD: buildClockShim(), CLOCK_SHIFT_RATE: "1.083" } });
    const fixture = await createStoreFixture("redis", { url: server.url });
    try {
      const ttlMs = 20_000;
      const holder = await new LeaseClient(fixture.store, { owner: "holder" }).acquire("job:slewed", { task: "t", ttlMs });
      const rival = fixture.open();
      // Each refused attempt was served while the holder still held the lease, so the store's
      // expiry came after the send of the last refused attempt.
      let lastRefusedSentAt = holder.sentAt;
      for (;;) {
        const sentAt = performance.now();
        const result = await rival.acquire({ resource: "job:slewed", owner: "rival", task: "t", ttlMs });
        if (result.acquired) break;
        lastRefusedSentAt = sentAt;
        expect(sentAt - holder.sentAt, "the store never expired the lease").toBeLessThan(ttlMs * 2);
        await sleep(10);
      }
      const heldOnStoreAtLeastMs = lastRefusedSentAt - holder.sentAt;
      const localValidityMs = holder.localDeadline - holder.sentAt;
      // About 18.47 s of real time on the store (20 s / 1.083) against 18 s of local validity.
      expect(heldOnStoreAtLeastMs, `store held it ≥ ${Math.round(heldOnStoreAtLeastMs)} ms; local deadline after ${Math.round(localValidityMs)} ms`).toBeGreaterThan(localValidityMs);
      expect(heldOnStoreAtLeastMs).toBeLessThan(ttlMs);
    } finally {
      await fixture.cleanup();
    }
  }, 60_000);
});
