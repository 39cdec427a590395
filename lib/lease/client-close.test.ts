import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { collectEvents, countKinds, createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { LeaseClient } from "./client";
import { LeaseError } from "./errors";
import { sleep } from "./testing/isolation";
import type { LeaseStore } from "./types";
import { compareFencingTokens } from "./validation";

/** LeaseClient.close(): what a service does on SIGTERM so a rolling deploy strands no lease. */
describe.each(["redis", "postgres"] as const)("LeaseClient.close on %s", (kind) => {
  let fixture: StoreFixture;
  let store: LeaseStore;

  beforeEach(async () => {
    fixture = await createStoreFixture(kind);
    store = fixture.store;
  });
  afterEach(async () => {
    await fixture.cleanup();
  });

  const isClientClosed = (error: unknown) => error instanceof LeaseError && error.code === "client_closed";

  it("aborts running work, which releases its lease: released, not expired, and the next holder gets a higher token", async () => {
    const client = new LeaseClient(store, { owner: "deploying-worker" });
    let started!: () => void;
    const isStarted = new Promise<void>((resolve) => (started = resolve));
    let token = "";
    const run = client.withLease(
      "close:running",
      async ({ signal, fencingToken }) => {
        token = fencingToken;
        started();
        // Work that listens to its signal, as work under a lease should.
        await new Promise<void>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
      },
      { task: "batch", ttlMs: 30_000 },
    );
    const outcome = run.catch((error: unknown) => error);
    await isStarted;

    const result = await client.close({ graceMs: 5_000 });
    expect(result).toEqual({ aborted: 1, released: 0 });
    expect(isClientClosed(await outcome)).toBe(true);

    expect(await store.get("close:running")).toBeNull();
    const counts = countKinds(await collectEvents(store, { resource: "close:running" }));
    expect(counts).toMatchObject({ acquired: 1, released: 1, expired: 0, lost: 0 });

    const next = await store.acquire({ resource: "close:running", owner: "new-replica", task: "batch", ttlMs: 5_000 });
    expect(next.acquired).toBe(true);
    if (next.acquired) expect(compareFencingTokens(next.lease.fencingToken, token)).toBeGreaterThan(0);
  });

  it("releases the lease under work that ignores its signal once the grace is over, and its result does not count", async () => {
    const client = new LeaseClient(store, { owner: "stubborn-worker" });
    let finish!: () => void;
    const isFinished = new Promise<void>((resolve) => (finish = resolve));
    let started!: () => void;
    const isStarted = new Promise<void>((resolve) => (started = resolve));
    let sawAbort = false;
    const run = client.withLease(
      "close:stubborn",
      async ({ signal }) => {
        started();
        await isFinished;
        sawAbort = signal.aborted;
        return "done anyway";
      },
      { task: "batch", ttlMs: 30_000 },
    );
    const outcome = run.catch((error: unknown) => error);
    await isStarted;

    const result = await client.close({ graceMs: 200 });
    expect(result).toEqual({ aborted: 1, released: 1 });
    // Released while the work still runs: the resource is free for another replica now.
    expect(await store.get("close:stubborn")).toBeNull();

    finish();
    expect(isClientClosed(await outcome)).toBe(true);
    expect(sawAbort).toBe(true);
    const counts = countKinds(await collectEvents(store, { resource: "close:stubborn" }));
    expect(counts).toMatchObject({ acquired: 1, released: 1, expired: 0, lost: 0, renew_failed: 0 });
  });

  it("releases handles from acquire(), stops waiting acquires and refuses new ones", async () => {
    const client = new LeaseClient(store, { owner: "worker-a" });
    const handle = await client.acquire("close:manual", { task: "loop", ttlMs: 30_000 });
    const released = await client.acquire("close:given-back", { task: "loop", ttlMs: 30_000 });
    await released.release();

    // A second client waits for the first one's lease; closing it ends the wait.
    const waiter = new LeaseClient(store, { owner: "worker-b" });
    const waiting = waiter.withLease("close:manual", async () => "got it", { task: "loop", ttlMs: 5_000, waitMs: 60_000 }).catch((error: unknown) => error);
    await sleep(100);
    expect(await waiter.close()).toEqual({ aborted: 0, released: 0 });
    expect(isClientClosed(await waiting)).toBe(true);

    expect(await client.close()).toEqual({ aborted: 0, released: 1 });
    expect(handle.isReleased).toBe(true);
    expect(await store.get("close:manual")).toBeNull();
    const counts = countKinds(await collectEvents(store, { prefix: "close:" }));
    expect(counts).toMatchObject({ acquired: 2, released: 2, expired: 0, lost: 0 });

    await expect(client.acquire("close:after", { task: "loop", ttlMs: 5_000 })).rejects.toSatisfy(isClientClosed);
    await expect(client.withLease("close:after", async () => 1, { task: "loop", ttlMs: 5_000 })).rejects.toSatisfy(isClientClosed);
    expect(await store.get("close:after")).toBeNull();
  });
});
