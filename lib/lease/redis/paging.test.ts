import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { sleep } from "../testing/isolation";
import type { Lease } from "../types";
import { buildBucketKeys } from "./keys";
import { RedisLeaseStore } from "./store";

/**
 * Reads that page through a listing zset in batches (list, heldAt) while leases leave it: the
 * store under test reads through a client that, once, right after its first batch of the `acq`
 * zset comes back, has other leases end and projected, so the zset loses entries between two
 * batches of one read. Paging by offset skipped as many unread entries as had left; the
 * answers must be those of a read made without the interruption.
 */
describe("RedisLeaseStore: paging through a listing while leases leave it", () => {
  let fx: StoreFixture<"redis">;
  let client: Redis;
  let reader: RedisLeaseStore;
  /** Runs once, after the next pipeline that read the `acq` zset. */
  let afterFirstBatch: (() => Promise<void>) | undefined;

  beforeEach(async () => {
    fx = await createStoreFixture("redis", { options: { buckets: 1 } });
    client = new Redis(fx.spec.url);
    const acq = buildBucketKeys(fx.spec.namespace, 0).acq;
    const pipeline = client.pipeline.bind(client);
    client.pipeline = ((...args: Parameters<Redis["pipeline"]>) => {
      const p = pipeline(...args);
      let readsAcq = false;
      const zrangebyscore = p.zrangebyscore.bind(p) as (...a: unknown[]) => unknown;
      (p as unknown as { zrangebyscore: (...a: unknown[]) => unknown }).zrangebyscore = (...a: unknown[]) => {
        if (a[0] === acq) readsAcq = true;
        return zrangebyscore(...a);
      };
      const exec = p.exec.bind(p);
      p.exec = (async (...a: Parameters<typeof exec>) => {
        const replies = await exec(...a);
        const hook = afterFirstBatch;
        if (readsAcq && hook) {
          afterFirstBatch = undefined;
          await hook();
        }
        return replies;
      }) as typeof p.exec;
      return p;
    }) as Redis["pipeline"];
    reader = new RedisLeaseStore({ name: fx.store.name, client, namespace: fx.spec.namespace, buckets: 1 });
  }, 60_000);
  afterEach(async () => {
    await reader?.close();
    client?.disconnect();
    await fx?.cleanup();
  });

  async function grant(resource: string, ttlMs = 60_000): Promise<Lease> {
    const r = await fx.store.acquire({ resource, owner: "o", task: "t", ttlMs });
    if (!r.acquired) throw new Error(`${resource} was not free`);
    return r.lease;
  }
  const name = (i: number) => `page:${String(i).padStart(3, "0")}`;

  it("list, held longest first: leases ending after the first batch shift nothing past the page", async () => {
    const leases: Lease[] = [];
    for (let i = 0; i < 150; i++) leases.push(await grant(name(i)));
    await fx.store.projectHolds();
    afterFirstBatch = async () => {
      for (const lease of leases.slice(0, 10)) await fx.store.release({ resource: lease.resource, leaseId: lease.leaseId });
      await fx.store.projectHolds();
    };
    const page = await reader.list({ sort: "held_longest", limit: 100 });
    expect(afterFirstBatch, "the leases ended during the read").toBeUndefined();
    expect(page.items.map((l) => l.resource)).toEqual(leases.slice(10, 110).map((l) => l.resource));
  }, 60_000);

  it("heldAt: lapsed leases swept after the first batch shift no held lease out of the answer", async () => {
    // The oldest 20 lapse before the instant; the 100 after them are held through it.
    const lapsing: Lease[] = [];
    for (let i = 0; i < 20; i++) lapsing.push(await grant(name(i), 100));
    await sleep(250);
    const held: Lease[] = [];
    for (let i = 20; i < 120; i++) held.push(await grant(name(i)));
    await fx.store.projectHolds();
    const at = new Date(held[held.length - 1]!.acquiredAt.getTime());
    await sleep(5);
    afterFirstBatch = async () => {
      expect((await fx.store.sweep()).expired).toBe(20);
    };
    const result = await reader.heldAt({ at, limit: 60 });
    expect(afterFirstBatch, "the sweep ran during the read").toBeUndefined();
    if (!result.covered) throw new Error(`not covered: ${result.reason}`);
    expect(result.items.map((h) => h.resource)).toEqual(held.slice(0, 60).map((l) => l.resource));
    expect(result.hasMore).toBe(true);
  }, 60_000);
});
