/**
 * AcquireInput.leaseId against real stores: a repeat of the same acquire, from another
 * connection, answers as the first did and records nothing; once that lease has ended, a
 * repeat is refused instead of granting the same id a second time.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sleep } from "./testing/isolation";
import { collectEvents } from "@/test/support/stores";
import { setUpStoreFixture } from "@/test/support/store-suite";
import { LeaseError } from "./errors";

for (const kind of ["postgres", "redis"] as const) {
  describe(`acquire with a chosen lease id (${kind})`, () => {
    const fixture = setUpStoreFixture(kind);

    it("a repeat while it holds answers with the same lease and records one acquire", async () => {
      const resource = `chosen:${randomUUID()}`;
      const input = { resource, owner: "w1", task: "job", ttlMs: 30_000, leaseId: randomUUID() };
      const first = await fixture.store.acquire(input);
      const again = await fixture.open().acquire(input);
      if (!first.acquired || !again.acquired) throw new Error("expected both to answer with the lease");
      expect(again.lease.leaseId).toBe(input.leaseId);
      expect(again.lease.fencingToken).toBe(first.lease.fencingToken);
      expect(again.lease.expiresAt).toEqual(first.lease.expiresAt);
      expect((await collectEvents(fixture.store, { resource })).map((e) => e.kind)).toEqual(["acquired"]);
    });

    it("after a release, or a lapse not yet recorded, a repeat is refused with lease_ended and grants nothing", async () => {
      const released = `chosen:${randomUUID()}`;
      const input = { resource: released, owner: "w1", task: "job", ttlMs: 30_000, leaseId: randomUUID() };
      const first = await fixture.store.acquire(input);
      if (!first.acquired) throw new Error("expected a lease");
      expect((await fixture.store.release({ resource: released, leaseId: input.leaseId })).released).toBe(true);
      await expect(fixture.store.acquire(input)).rejects.toMatchObject({ code: "lease_ended" });
      expect(await fixture.store.get(released)).toBeNull();

      const lapsed = `chosen:${randomUUID()}`;
      const short = { resource: lapsed, owner: "w1", task: "job", ttlMs: 150, leaseId: randomUUID() };
      expect((await fixture.store.acquire(short)).acquired).toBe(true);
      await sleep(300);
      await expect(fixture.store.acquire(short)).rejects.toBeInstanceOf(LeaseError);
      expect((await collectEvents(fixture.store, { resource: lapsed })).filter((e) => e.kind === "acquired")).toHaveLength(1);
    });

    it("a lease id that is not a UUID is refused before the store is touched", async () => {
      await expect(fixture.store.acquire({ resource: "chosen:x", owner: "w", task: "t", ttlMs: 1_000, leaseId: "not-a-uuid" })).rejects.toMatchObject({ code: "invalid_input" });
    });
  });
}
