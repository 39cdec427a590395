import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createTestClock, hookStore } from "@/test/support/store-hooks";
import { collectEvents, countKinds, createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { LeaseClient, type LeaseClientEvent } from "./client";
import { AcquireTimeoutError, LeaseError, LeaseLostError } from "./errors";
import { sleep } from "./testing/isolation";
import type { LeaseStore } from "./types";

/** LeaseClient against real stores (shared servers, own schema / namespace per test). */
describe.each(["redis", "postgres"] as const)("LeaseClient on %s", (kind) => {
  let fixture: StoreFixture;
  let store: LeaseStore;
  let seen: LeaseClientEvent[];
  const makeClient = (owner = "worker-1", extra: Partial<ConstructorParameters<typeof LeaseClient>[1]> = {}) =>
    new LeaseClient(store, { owner, onEvent: (e) => seen.push(e), ...extra });

  beforeEach(async () => {
    fixture = await createStoreFixture(kind);
    store = fixture.store;
    seen = [];
  });
  afterEach(async () => {
    await fixture.cleanup();
  });

  it("heartbeat keeps the lease alive past several TTLs, then releases it", async () => {
    const client = makeClient();
    const rival = makeClient("rival");
    // Long enough that a stalled event loop (a loaded 2-core machine) cannot lose it.
    const ttlMs = 1_200;
    let rivalRefusals = 0;
    const value = await client.withLease(
      "job:heartbeat",
      async ({ signal, fencingToken }) => {
        for (let i = 0; i < 3; i++) {
          await sleep(ttlMs);
          // Five TTLs in, nobody else can have it.
          await expect(rival.withLease("job:heartbeat", async () => "stolen", { task: "t", ttlMs })).rejects.toBeInstanceOf(AcquireTimeoutError);
          rivalRefusals += 1;
        }
        expect(signal.aborted).toBe(false);
        return fencingToken;
      },
      { task: "long-job", ttlMs },
    );
    expect(rivalRefusals).toBe(3);
    expect(seen.filter((e) => e.type === "renewed").length).toBeGreaterThanOrEqual(3);
    expect(seen.some((e) => e.type === "lost")).toBe(false);
    const counts = countKinds(await collectEvents(store, { resource: "job:heartbeat" }));
    expect(counts).toMatchObject({ acquired: 1, released: 1, expired: 0, renew_failed: 0, lost: 0, contended: 3 });
    expect(await store.get("job:heartbeat")).toBeNull();
    expect(typeof value).toBe("string");
  });

  it("force-release aborts the signal with LeaseLostError, records lost, and never renews again", async () => {
    const client = makeClient();
    const ttlMs = 1_200;
    let abortReason: unknown;
    const run = client.withLease(
      "job:forced",
      async ({ signal, lease }) => {
        const forced = await store.forceRelease({ resource: lease.resource, leaseId: lease.leaseId, actor: "alice", reason: "stuck" });
        expect(forced.released).toBe(true);
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
        abortReason = signal.reason;
        return "finished anyway";
      },
      { task: "t", ttlMs },
    );
    // Work that finished after losing is suspect: withLease rejects even though fn resolved.
    await expect(run).rejects.toBeInstanceOf(LeaseLostError);
    expect(abortReason).toBeInstanceOf(LeaseLostError);
    expect((abortReason as LeaseLostError).reason).toBe("not_owner");

    const lostAt = seen.findIndex((e) => e.type === "lost");
    expect(lostAt).toBeGreaterThanOrEqual(0);
    // Several heartbeat periods later: still exactly one refused renew, no more attempts.
    await sleep(ttlMs * 2);
    const after = seen.slice(lostAt + 1).filter((e) => e.type === "renewed" || e.type === "renew_refused" || e.type === "renew_error");
    expect(after).toEqual([]);
    const counts = countKinds(await collectEvents(store, { resource: "job:forced" }));
    expect(counts).toMatchObject({ acquired: 1, force_released: 1, released: 0, lost: 1, renew_failed: 1 });
    const [lost] = await collectEvents(store, { resource: "job:forced", kinds: ["lost"] });
    expect(lost).toMatchObject({ owner: "worker-1", task: "t", reason: "not_owner" });
  });

  it("fn's own error wins over the loss when it is not the abort", async () => {
    const client = makeClient();
    const run = client.withLease(
      "job:specific",
      async ({ signal, lease }) => {
        await store.forceRelease({ resource: lease.resource, leaseId: lease.leaseId, actor: "alice", reason: "test" });
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
        throw new Error("ledger refused the batch");
      },
      { task: "t", ttlMs: 1_200 },
    );
    await expect(run).rejects.toThrow("ledger refused the batch");
    expect(countKinds(await collectEvents(store, { resource: "job:specific" })).lost).toBe(1);
  });

  it("releases in finally when fn throws, without masking the error", async () => {
    const client = makeClient();
    await expect(
      client.withLease(
        "job:throws",
        async () => {
          throw new Error("boom");
        },
        { task: "t", ttlMs: 5_000 },
      ),
    ).rejects.toThrow("boom");
    expect(await store.get("job:throws")).toBeNull();
    expect(countKinds(await collectEvents(store, { resource: "job:throws" }))).toMatchObject({ acquired: 1, released: 1 });
  });

  it("waiting acquire backs off and gets the lease once the holder releases", async () => {
    const holder = await store.acquire({ resource: "job:wait", owner: "holder", task: "t", ttlMs: 30_000 });
    if (!holder.acquired) throw new Error("setup: holder must acquire");
    const client = makeClient("waiter", { backoff: { baseMs: 10, capMs: 80 } });
    const run = client.withLease("job:wait", async ({ lease }) => lease.owner, { task: "t", ttlMs: 5_000, waitMs: 10_000 });
    // Let it be refused a few times first.
    while (seen.filter((e) => e.type === "contended").length < 3) await sleep(10);
    expect((await store.release({ resource: "job:wait", leaseId: holder.lease.leaseId })).released).toBe(true);
    expect(await run).toBe("waiter");
    // Contended acquires trigger at most one opportunistic sweep per sweepEveryMs (default 10 s).
    // The sweep is fire-and-forget, so on a busy machine it may finish after the lease was won:
    // wait for its outcome, then check no second sweep was started by the later contentions.
    const sweepOutcomes = () => seen.filter((e) => e.type === "swept" || e.type === "sweep_error");
    await vi.waitFor(() => expect(sweepOutcomes().length).toBeGreaterThan(0), { timeout: 10_000, interval: 20 });
    expect(sweepOutcomes()).toHaveLength(1);
  });

  it("waiting acquire gives up with AcquireTimeoutError naming the holder", async () => {
    const holder = await store.acquire({ resource: "job:busy", owner: "holder-7", task: "nightly", ttlMs: 30_000 });
    expect(holder.acquired).toBe(true);
    const client = makeClient("waiter", { backoff: { baseMs: 10, capMs: 50 } });
    const error = await client.withLease("job:busy", async () => "never", { task: "t", ttlMs: 1_000, waitMs: 400 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AcquireTimeoutError);
    expect((error as AcquireTimeoutError).holder).toMatchObject({ owner: "holder-7", task: "nightly" });
    expect((error as AcquireTimeoutError).message).toContain("holder-7");
    expect(seen.filter((e) => e.type === "contended").length).toBeGreaterThan(1);
    expect((await store.get("job:busy"))?.owner).toBe("holder-7");
  });

  it("an aborted caller signal stops the wait", async () => {
    await store.acquire({ resource: "job:cancel", owner: "holder", task: "t", ttlMs: 30_000 });
    const client = makeClient();
    const controller = new AbortController();
    const run = client.withLease("job:cancel", async () => "never", { task: "t", ttlMs: 1_000, waitMs: 20_000, signal: controller.signal });
    while (!seen.some((e) => e.type === "contended")) await sleep(5);
    controller.abort(new Error("shutting down"));
    await expect(run).rejects.toThrow("shutting down");
  });

  it("bad options throw LeaseError before anything is written", async () => {
    const client = makeClient();
    const work = async () => "x";
    const bad: Array<[string, Record<string, unknown>]> = [
      ["job:ok", { task: "t", ttlMs: 99 }],
      ["job:ok", { task: "t", ttlMs: 24 * 3600 * 1000 + 1 }],
      ["job:ok", { task: "", ttlMs: 1_000 }],
      ["job:ok", { task: "t", ttlMs: 1_000, waitMs: -1 }],
      ["job:ok", { task: "t", ttlMs: 1_000, retries: 3 }],
      ["", { task: "t", ttlMs: 1_000 }],
      ["job:\u0000bad", { task: "t", ttlMs: 1_000 }],
      ["x".repeat(513), { task: "t", ttlMs: 1_000 }],
    ];
    for (const [resource, options] of bad) {
      await expect(client.withLease(resource, work, options as never)).rejects.toBeInstanceOf(LeaseError);
      await expect(client.acquire(resource, options as never)).rejects.toBeInstanceOf(LeaseError);
    }
    await expect(client.withLease("job:ok", work, { task: "t", ttlMs: 1_000, retries: 3 } as never)).rejects.toThrow(/unknown option.*retries/);
    expect(() => new LeaseClient(store, { owner: "" })).toThrow(LeaseError);
    expect(() => new LeaseClient(store, { owner: "w", sweepEvery: 5 } as never)).toThrow(LeaseError);
    expect(() => new LeaseClient(store, { owner: "w", backoff: { baseMs: 100, capMs: 10 } })).toThrow(LeaseError);
    expect(await collectEvents(store)).toEqual([]);
    expect(await store.countActive()).toBe(0);
  });

  it("acquire() hands back a handle the caller renews and releases", async () => {
    const client = makeClient();
    const handle = await client.acquire("job:manual", { task: "t", ttlMs: 2_000 });
    expect(handle.isValid()).toBe(true);
    expect(handle.remainingMs()).toBeGreaterThan(0);
    const renewed = await handle.renew();
    expect(renewed.renewed).toBe(true);
    expect((await store.get("job:manual"))?.renewals).toBe(1);
    expect(await handle.release()).toMatchObject({ released: true });
    // Idempotent once released; renewing a released lease is refused locally.
    expect(await handle.release()).toMatchObject({ released: true });
    await expect(handle.renew()).rejects.toBeInstanceOf(LeaseError);
    expect(countKinds(await collectEvents(store, { resource: "job:manual" }))).toMatchObject({ acquired: 1, released: 1 });
  });

  it("a handle whose renew is refused is lost: lost recorded, no further store calls", async () => {
    const client = makeClient();
    const handle = await client.acquire("job:manual-lost", { task: "t", ttlMs: 2_000 });
    await store.forceRelease({ resource: "job:manual-lost", leaseId: handle.leaseId, actor: "alice", reason: "test" });
    expect(await handle.renew()).toEqual({ renewed: false, reason: "not_owner" });
    expect(handle.isLost).toBe(true);
    await expect(handle.renew()).rejects.toBeInstanceOf(LeaseLostError);
    await expect(handle.release()).rejects.toBeInstanceOf(LeaseLostError);
    await handle.settleLostReport(2_000);
    expect(countKinds(await collectEvents(store, { resource: "job:manual-lost" }))).toMatchObject({ renew_failed: 1, lost: 1, released: 0 });
  });

  it("the local deadline counts from before the acquire was sent: a reply later than ttl − margin never starts fn", async () => {
    const clock = createTestClock();
    const ttlMs = 10_000;
    // The reply takes 9.6 s of client time: past ttl − margin (9 s), so the store may hand the resource on any moment.
    const slow = hookStore(store, (real) => ({
      acquire: async (input) => {
        const result = await real.acquire(input);
        clock.advance(9_600);
        return result;
      },
    }));
    const client = new LeaseClient(slow, { owner: "w", now: clock.now, onEvent: (e) => seen.push(e) });
    let started = false;
    const run = client.withLease(
      "job:late-reply",
      async () => {
        started = true;
        return "ran";
      },
      { task: "t", ttlMs },
    );
    await expect(run).rejects.toMatchObject({ name: "LeaseLostError", reason: "deadline_passed" });
    expect(started).toBe(false);
    // The store still held it: the client gave it back by lease id rather than leave it for a whole TTL,
    // recorded as the expiry it stands for (the expired-to-released ratio counts it with the crashes).
    expect(await store.get("job:late-reply")).toBeNull();
    const events = await collectEvents(store, { resource: "job:late-reply" });
    expect(countKinds(events)).toMatchObject({ acquired: 1, released: 0, lost: 1, expired: 1 });
    expect(events.find((e) => e.kind === "expired")?.detail).toMatchObject({ recordedBy: "release_after_deadline" });
  });

  it("a slow reply leaves fn the remaining time from before the send, and the first renew is timed from the send", async () => {
    const clock = createTestClock();
    // A reply 100 s late on a 120 s TTL: fn starts 8 s before its local deadline (120 − 12 s margin
    // − 100 s). The first renew is due ttl/3 after the send, long past, so it goes at once; timed from
    // fn's start instead, it would come 40 s later, after the lease was lost. The wide gap keeps the
    // test about the schedule, not about how fast this machine runs.
    const ttlMs = 120_000;
    const slow = hookStore(store, (real) => ({
      acquire: async (input) => {
        const result = await real.acquire(input);
        clock.advance(100_000);
        return result;
      },
    }));
    const client = new LeaseClient(slow, { owner: "w", now: clock.now, onEvent: (e) => seen.push(e) });
    const startedWith = await client.withLease(
      "job:slow-reply",
      async ({ signal, remainingMs, isValid }) => {
        const atStart = { remaining: remainingMs(), valid: isValid(), aborted: signal.aborted };
        while (!seen.some((e) => e.type === "renewed" || e.type === "lost") && !signal.aborted) await sleep(10);
        return { ...atStart, renewed: seen.some((e) => e.type === "renewed"), remainingAfterRenew: remainingMs() };
      },
      { task: "t", ttlMs },
    );
    expect(startedWith.remaining).toBeGreaterThan(0);
    expect(startedWith.remaining).toBeLessThanOrEqual(8_000);
    expect(startedWith).toMatchObject({ valid: true, aborted: false, renewed: true });
    // The renew came before the local deadline: the lease was never lost.
    expect(seen.some((e) => e.type === "lost")).toBe(false);
    expect(startedWith.remainingAfterRenew).toBeGreaterThan(100_000);
  });

  it("work that returns after the local deadline is not reported as a success", async () => {
    const clock = createTestClock();
    const client = new LeaseClient(store, { owner: "w", now: clock.now, onEvent: (e) => seen.push(e) });
    const run = client.withLease(
      "job:overran",
      async ({ isValid }) => {
        expect(isValid()).toBe(true);
        // A stall the timers could not see (a synchronous pause): 20 s pass on the client's clock.
        clock.advance(20_000);
        expect(isValid()).toBe(false);
        return "done";
      },
      { task: "t", ttlMs: 10_000 },
    );
    await expect(run).rejects.toMatchObject({ name: "LeaseLostError", reason: "deadline_passed" });
    expect(countKinds(await collectEvents(store, { resource: "job:overran" }))).toMatchObject({ acquired: 1, released: 0, expired: 1, lost: 1 });
  });

  it("a renew whose reply arrives after the deadline never counts, and the lease is released by id", async () => {
    const ttlMs = 1_000;
    const late = hookStore(store, (real) => ({
      renew: async (input) => {
        const result = await real.renew(input);
        // The store extended the lease; the client hears of it only after its deadline.
        await sleep(900);
        return result;
      },
    }));
    const client = new LeaseClient(late, { owner: "w", onEvent: (e) => seen.push(e) });
    const run = client.withLease(
      "job:zombie",
      async ({ signal }) => {
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
        return "stopped";
      },
      { task: "t", ttlMs },
    );
    await expect(run).rejects.toMatchObject({ name: "LeaseLostError", reason: "deadline_passed" });
    const lostAt = seen.findIndex((e) => e.type === "lost");
    expect(seen.slice(lostAt).filter((e) => e.type === "renewed")).toEqual([]);
    // Without the release the extension would keep the resource for another TTL.
    expect(await store.get("job:zombie")).toBeNull();
    expect(countKinds(await collectEvents(store, { resource: "job:zombie" }))).toMatchObject({ acquired: 1, released: 0, lost: 1, expired: 1 });
  });

  it("heartbeats are timed from each renew's send: renews slower than a third of the TTL still hold the lease", async () => {
    const ttlMs = 3_000;
    // Every renew answers 1,050 ms after the store extended the lease (a slow link or a busy store).
    const slow = hookStore(store, (real) => ({
      renew: async (input) => {
        const result = await real.renew(input);
        await sleep(1_050);
        return result;
      },
    }));
    const client = new LeaseClient(slow, { owner: "w", onEvent: (e) => seen.push(e) });
    const rival = makeClient("rival");
    const held = await client.withLease(
      "job:slow-renews",
      async ({ signal, isValid }) => {
        // Past two TTLs: timed from each reply, the beats would leave the deadline behind at about 3.9 s.
        await sleep(7_000);
        const rivalGot = await rival.acquire("job:slow-renews", { task: "t", ttlMs }).then(
          () => true,
          () => false,
        );
        return { aborted: signal.aborted, valid: isValid(), rivalGot };
      },
      { task: "t", ttlMs },
    );
    expect(held).toEqual({ aborted: false, valid: true, rivalGot: false });
    expect(seen.filter((e) => e.type === "lost")).toEqual([]);
    expect(seen.filter((e) => e.type === "renewed").length).toBeGreaterThanOrEqual(4);
  });

  it("a renew that never answers does not hold the next one back: the lease is kept", async () => {
    const ttlMs = 1_500;
    let hung = 0;
    let unhang: () => void = () => undefined;
    const hangs = new Promise<void>((resolve) => {
      unhang = resolve;
    });
    // The first renew's connection is half-open: no answer until the test ends.
    const halfOpen = hookStore(store, (real) => ({
      renew: async (input) => {
        if (hung++ === 0) {
          await hangs;
          return { renewed: false, reason: "expired" } as const;
        }
        return real.renew(input);
      },
    }));
    const client = new LeaseClient(halfOpen, { owner: "w", onEvent: (e) => seen.push(e) });
    try {
      const held = await client.withLease(
        "job:hung-renew",
        async ({ signal }) => {
          await sleep(4_000);
          return signal.aborted;
        },
        { task: "t", ttlMs },
      );
      expect(held).toBe(false);
      expect(seen.filter((e) => e.type === "lost")).toEqual([]);
      expect(seen.some((e) => e.type === "renew_error" && e.error instanceof LeaseError && e.error.code === "renew_timeout")).toBe(true);
      expect(seen.filter((e) => e.type === "renewed").length).toBeGreaterThanOrEqual(3);
    } finally {
      unhang();
    }
  });

  it("clockDriftMargin sets how far the local deadline stays clear of the store's expiry", async () => {
    const ttlMs = 10_000;
    const byDefault = await makeClient("a").acquire("job:margin-default", { task: "t", ttlMs });
    // An NTP daemon slews at up to 8.3 %: the default margin (10 %) covers it.
    expect(byDefault.localDeadline - byDefault.sentAt).toBeCloseTo(9_000, 6);
    const wide = await makeClient("b", { clockDriftMargin: 0.25 }).acquire("job:margin-wide", { task: "t", ttlMs });
    expect(wide.localDeadline - wide.sentAt).toBeCloseTo(7_500, 6);
    expect(() => makeClient("c", { clockDriftMargin: 0.6 })).toThrow(/clockDriftMargin/);
    await byDefault.release();
    await wide.release();
  });

  it("a release waits for the renew in flight: no spurious renew_failed or lost", async () => {
    const slowRenew = hookStore(store, (real) => ({
      // The renew leaves late (a busy pooled connection)…
      renew: async (input) => {
        await sleep(150);
        return real.renew(input);
      },
      // …and the release's reply comes back late.
      release: async (input) => {
        const result = await real.release(input);
        await sleep(300);
        return result;
      },
    }));
    const client = new LeaseClient(slowRenew, { owner: "w", onEvent: (e) => seen.push(e) });
    const handle = await client.acquire("job:ordered", { task: "t", ttlMs: 5_000 });
    const renewing = handle.renew();
    const releasing = handle.release();
    expect(await renewing).toMatchObject({ renewed: true });
    expect(await releasing).toMatchObject({ released: true });
    expect(handle.isLost).toBe(false);
    expect(seen.some((e) => e.type === "lost" || e.type === "renew_refused")).toBe(false);
    expect(countKinds(await collectEvents(store, { resource: "job:ordered" }))).toMatchObject({ acquired: 1, released: 1, renew_failed: 0, lost: 0 });
  });

  it("a store that gives up on insert races counts as contention within waitMs", async () => {
    let racesLost = 0;
    const racy = hookStore(store, (real) => ({
      acquire: async (input) => {
        // What the Postgres store throws after losing MAX_ACQUIRE_ATTEMPTS insert races in a row.
        if (racesLost < 2) {
          racesLost += 1;
          throw new LeaseError(`acquire of "${input.resource}" kept losing races with concurrent acquires; try again`, "contention");
        }
        return real.acquire(input);
      },
    }));
    const client = new LeaseClient(racy, { owner: "w", backoff: { baseMs: 5, capMs: 20 } });
    expect(await client.withLease("job:racy", async ({ lease }) => lease.owner, { task: "t", ttlMs: 2_000, waitMs: 5_000 })).toBe("w");
    expect(racesLost).toBe(2);
    // Without waitMs it is a timeout like any contended attempt, not a fatal error.
    racesLost = 0;
    await expect(client.withLease("job:racy", async () => "x", { task: "t", ttlMs: 2_000 })).rejects.toBeInstanceOf(AcquireTimeoutError);
  });
});

/** Expiry is the store's: a client clock off by an hour changes nothing on the store. */
describe.each(["redis", "postgres"] as const)("LeaseClient with a skewed clock on %s", (kind) => {
  let fixture: StoreFixture;
  beforeEach(async () => {
    fixture = await createStoreFixture(kind);
  });
  afterEach(async () => {
    await fixture.cleanup();
  });

  it.each([3_600_000, -3_600_000])("client clock jumps by %i ms: the lease still expires on the store's TTL, once, and tokens increase", async (skew) => {
    const { store } = fixture;
    const ttlMs = 1_000;
    const clock = createTestClock();
    const first = new LeaseClient(store, { owner: "first", now: clock.now });
    const sentAt = performance.now();
    const handle = await first.acquire("job:skew", { task: "t", ttlMs });
    clock.advance(skew);
    // The other client's clock is off the other way.
    const otherClock = createTestClock();
    otherClock.advance(-skew);
    const second = new LeaseClient(store, { owner: "second", now: otherClock.now, backoff: { baseMs: 10, capMs: 40 } });
    const next = await second.withLease("job:skew", async ({ lease }) => ({ token: lease.fencingToken, at: performance.now() }), {
      task: "t",
      ttlMs,
      waitMs: 10_000,
    });
    // The store started the TTL after the request left, so no takeover can come sooner than ttl after
    // sentAt. Had either client's skewed clock counted, the takeover would have come at once (caught
    // here) or an hour late (past waitMs: withLease would have thrown).
    expect(next.at - sentAt).toBeGreaterThanOrEqual(ttlMs - 5);
    expect(BigInt(next.token) > BigInt(handle.fencingToken)).toBe(true);
    // Whatever the first client's clock says, the store refuses its renew.
    expect((await handle.renew()).renewed).toBe(false);
    const counts = countKinds(await collectEvents(store, { resource: "job:skew" }));
    expect(counts).toMatchObject({ acquired: 2, expired: 1, released: 1 });
  });
});
