import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { LeaseClient } from "@leasewatch/lease";
import { sleep } from "@leasewatch/lease/testing";
import { checkConservation, collectEvents, createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { spawnWorker, stopAllWorkers } from "@/test/support/worker-process";

afterAll(stopAllWorkers);

/**
 * A holder dies with kill -9 (no release, no goodbye). The store's TTL must end
 * the lease on the store's clock; exactly one `expired` is recorded even though
 * several clients sweep concurrently and a rescuer takes the resource over; the
 * rescuer's token is higher.
 */
describe.each(["redis", "postgres"] as const)("kill -9 of a lease holder (%s)", (kind) => {
  let fixture: StoreFixture;
  beforeEach(async () => {
    fixture = await createStoreFixture(kind);
  });
  afterEach(async () => {
    await stopAllWorkers();
    await fixture.cleanup();
  });

  it("the lease lapses, exactly one expired is recorded, and the next token is higher", async () => {
    const resource = "billing:close:2026-04";
    const ttlMs = 800;
    const victim = spawnWorker({ store: fixture.spec, owner: "victim", mode: "hold", resources: [resource], ttlMs, writeEveryMs: 50 });
    const acquired = await victim.waitFor((l) => l.type === "acquired");
    await victim.waitFor((l) => l.type === "renewed");
    await victim.kill9();
    expect(victim.isRunning).toBe(false);

    // Nothing was released: the store still names the dead holder until its TTL runs out.
    const stillHeld = await fixture.store.get(resource);
    expect(stillHeld?.leaseId).toBe(acquired.leaseId);

    // Three independent clients sweep in a loop while a rescuer waits for the resource.
    let isSweeping = true;
    const sweepers = [fixture.open(), fixture.open(), fixture.open()].map(async (store) => {
      let expired = 0;
      while (isSweeping) {
        expired += (await store.sweep()).expired;
        await sleep(5);
      }
      return expired;
    });
    const rescuer = new LeaseClient(fixture.open(), { owner: "rescuer", backoff: { baseMs: 5, capMs: 40 }, sweepEveryMs: 0 });
    const handle = await rescuer.acquire(resource, { task: "rescue", ttlMs: 10_000, waitMs: 15_000 });
    await sleep(100);
    isSweeping = false;
    const sweptBySweepers = (await Promise.all(sweepers)).reduce((a, b) => a + b, 0);

    expect(BigInt(handle.fencingToken) > BigInt(String(acquired.token))).toBe(true);
    const expired = (await collectEvents(fixture.store, { resource, kinds: ["expired"] })).filter((e) => e.leaseId === acquired.leaseId);
    expect(expired).toHaveLength(1);
    expect(expired[0]).toMatchObject({ owner: "victim", fencingToken: acquired.token });
    expect(expired[0]?.holdMs).toBeGreaterThan(0);
    // Whoever recorded it (a sweeper or the takeover), it was recorded once.
    expect(sweptBySweepers).toBeLessThanOrEqual(1);

    expect((await handle.release()).released).toBe(true);
    const conservation = await checkConservation(fixture.store);
    expect(conservation.acquired).toBe(conservation.ended + conservation.held);
    expect(conservation.counts).toMatchObject({ acquired: 2, expired: 1, released: 1 });
  });
});
