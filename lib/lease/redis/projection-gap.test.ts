import { afterEach, describe, expect, it } from "vitest";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";
import type { Lease, LeaseSort } from "../types";
import { buildBucketKeys } from "./keys";
import { EVENTS_BACKLOG_FACTOR } from "./scripts";
import type { RedisLeaseStore } from "./store";

/**
 * Workers alone (no console, no sweeper) do not project: events pile up unprojected in the
 * bucket stream. The stream's length cap must not drop them before the projector has folded
 * them into the listings; past the backlog ceiling, the listings are rebuilt from the leases.
 */

const CAP = 20;
const OWNERS = ["gap-a", "gap-b", "gap-c"];
const opened: StoreFixture<"redis">[] = [];

async function openStore() {
  const fixture = await createStoreFixture("redis", { options: { buckets: 1, eventsMaxLen: CAP } });
  opened.push(fixture);
  return { store: fixture.store, events: buildBucketKeys(fixture.spec.namespace, 0).events };
}

afterEach(async () => {
  for (const fixture of opened.splice(0)) await fixture.cleanup();
});

/** Leases acquired first (their `acquired` events are the oldest), then one of them released. */
async function holdLeases(store: RedisLeaseStore, count: number): Promise<{ held: Lease[]; ended: Lease }> {
  const leases: Lease[] = [];
  for (let i = 0; i < count; i++) {
    const r = await store.acquire({ resource: `gap:held:${String(i).padStart(3, "0")}`, owner: OWNERS[i % OWNERS.length]!, task: "gap-task", ttlMs: 600_000 });
    if (!r.acquired) throw new Error("test setup: acquire failed");
    leases.push(r.lease);
  }
  const ended = leases.pop()!;
  await store.release({ resource: ended.resource, leaseId: ended.leaseId });
  return { held: leases, ended };
}

/** `count` more events in the bucket: refused acquires of a held resource (`contended`). */
async function contend(store: RedisLeaseStore, resource: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => store.acquire({ resource, owner: "other", task: "other", ttlMs: 1_000 })));
  }
}

async function projectAll(store: RedisLeaseStore): Promise<void> {
  for (let i = 0; i < 50 && !(await store.project()).isCaughtUp; i++);
}

const resources = (leases: readonly Lease[]) => leases.map((l) => l.resource).sort();

/** What a person checks: every held lease in the prefix list, its owner's list and the newest list; the ended one in none. */
async function expectListed(store: RedisLeaseStore, held: readonly Lease[], ended: Lease): Promise<void> {
  for (const sort of ["expires", "newest", "held_longest"] as LeaseSort[]) {
    const page = await store.list({ prefix: "gap:held:", sort, limit: 500 });
    expect(resources(page.items), `prefix list, sort=${sort}`).toEqual(resources(held));
  }
  const newest = await store.list({ sort: "newest", limit: 500 });
  expect(resources(newest.items.filter((l) => l.resource.startsWith("gap:held:")))).toEqual(resources(held));
  for (const owner of OWNERS) {
    const page = await store.list({ owner, sort: "newest", limit: 500 });
    expect(page.partial, `owner ${owner}`).toBeUndefined();
    expect(resources(page.items), `owner ${owner}`).toEqual(resources(held.filter((l) => l.owner === owner)));
  }
  expect(await store.get(ended.resource)).toBeNull();
}

describe("Redis projection when no projector runs for a while", () => {
  it("keeps events past eventsMaxLen until they are projected: held leases, and their history, reach the read models", async () => {
    const { store, events } = await openStore();
    const { held, ended } = await holdLeases(store, 30);
    // Far more events than the cap, fewer than the backlog ceiling; nothing projects meanwhile.
    await contend(store, held[0]!.resource, 8 * CAP);
    expect(await store.client.xlen(events)).toBeGreaterThan(8 * CAP);

    await projectAll(store);
    await expectListed(store, held, ended);
    // The oldest events were folded in, not lost: a lease's history starts with its acquire.
    const history = await store.events({ resource: held[1]!.resource, order: "asc" });
    expect(history.items.map((e) => e.kind)).toEqual(["acquired"]);

    // Once projected, the cap applies again as events are appended.
    await contend(store, held[0]!.resource, 3 * CAP);
    expect(await store.client.xlen(events)).toBeLessThanOrEqual(CAP + 100);
  });

  it("the same after a projection: the cap never trims past the projection cursor", async () => {
    const { store } = await openStore();
    await contend(store, "gap:warm-up", 1);
    await projectAll(store);
    const { held, ended } = await holdLeases(store, 30);
    await contend(store, held[0]!.resource, 8 * CAP);
    await projectAll(store);
    await expectListed(store, held, ended);
  });

  it("bounds the stream when nobody projects, and rebuilds the listings from the leases once the ceiling trimmed unprojected events", async () => {
    const { store, events } = await openStore();
    await contend(store, "gap:warm-up", 1);
    await projectAll(store);
    const { held, ended } = await holdLeases(store, 30);
    const ceiling = EVENTS_BACKLOG_FACTOR * CAP;
    await contend(store, held[0]!.resource, ceiling + 300);
    // Stream nodes hold 100 entries, and only whole nodes are trimmed.
    expect(await store.client.xlen(events)).toBeLessThanOrEqual(ceiling + 100);
    expect((await store.events({ resource: held[1]!.resource })).items).toEqual([]);

    await projectAll(store);
    await expectListed(store, held, ended);
  });

  it("finds a gap nobody marked (the projection cursor's own entry is gone) and rebuilds the listings", async () => {
    const { store, events } = await openStore();
    await contend(store, "gap:warm-up", 1);
    await projectAll(store);
    const { held, ended } = await holdLeases(store, 30);
    // A trim past the cursor that sets no mark: what a process of an earlier version did at the cap.
    await store.client.xtrim(events, "MAXLEN", 1);
    await projectAll(store);
    await expectListed(store, held, ended);
  });

  it("rebuilds the listings the same way for a bucket that was never projected", async () => {
    const { store } = await openStore();
    const { held, ended } = await holdLeases(store, 30);
    await contend(store, held[0]!.resource, EVENTS_BACKLOG_FACTOR * CAP + 300);
    await projectAll(store);
    await expectListed(store, held, ended);
  });
});
