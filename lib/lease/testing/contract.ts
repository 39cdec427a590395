import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LeaseError } from "../errors";
import {
  leaseStateAt,
  HOLD_HISTOGRAM_BOUNDS_MS,
  LEASE_EVENT_KINDS,
  SLACK_BUCKET_COUNT,
  SLACK_PREFIX_DEPTH,
  TERMINAL_EVENT_KINDS,
  type Lease,
  type LeaseEvent,
  type LeaseSort,
  type LeaseState,
  type LeaseAnalytics,
  type LeaseHistory,
  type LeaseStore,
  type ListQuery,
  type EventQuery,
  type LockStore,
} from "../types";
import { compareFencingTokens, resourcePrefix } from "../validation";
import { holdBucketIndex } from "../histogram";
import { createRandom, sleep } from "./isolation";

/**
 * The behaviour every store must show, run against real servers, in parts that follow the
 * contract's interfaces: the lock (LockStore), its history (LeaseHistory) and its analytics
 * (LeaseAnalytics). describeLeaseStoreContract runs them all, plus the input rules that span
 * every part; a kind that implements only some parts runs those. Each part checks what the lock
 * recorded through `events()`, so every part needs it. Uses only the interfaces, so the same
 * cases hold each store to the same contract.
 *
 * `makeStore` is called once per test and must return a store on fresh, isolated
 * storage (own schema / key namespace) plus a cleanup that removes it. Expiry is
 * produced with short TTLs and sleeps; nothing here asserts on elapsed time.
 */
export type MakeStore<S extends LockContractStore = LeaseStore> = () => Promise<{ store: S; cleanup: () => Promise<void> }>;

/** What the lock part needs: the lock, and the events it recorded. */
export type LockContractStore = LockStore & Pick<LeaseHistory, "events">;
export type HistoryContractStore = LockStore & LeaseHistory;
export type AnalyticsContractStore = LockContractStore & LeaseAnalytics;

const SHORT_TTL_MS = 150;
/** Comfortably past SHORT_TTL_MS so the store's own clock has passed the expiry. */
const PAST_SHORT_TTL_MS = 400;
const LONG_TTL_MS = 60_000;

/** Every LeaseStore part: lock, history, analytics, and the input rules of every method. */
export function describeLeaseStoreContract(label: string, makeStore: MakeStore): void {
  describe(`LeaseStore contract: ${label}`, () => {
    describe("lock", () => lockCases(makeStore));
    describe("history", () => historyCases(makeStore));
    describe("analytics", () => analyticsCases(makeStore));
    describe("input rules", () => inputRuleCases(makeStore));
  });
}

export function describeLockStoreContract<S extends LockContractStore>(label: string, makeStore: MakeStore<S>): void {
  describe(`LockStore contract: ${label}`, () => lockCases(makeStore));
}

export function describeHistoryContract<S extends HistoryContractStore>(label: string, makeStore: MakeStore<S>): void {
  describe(`LeaseHistory contract: ${label}`, () => historyCases(makeStore));
}

export function describeAnalyticsContract<S extends AnalyticsContractStore>(label: string, makeStore: MakeStore<S>): void {
  describe(`LeaseAnalytics contract: ${label}`, () => analyticsCases(makeStore));
}

/**
 * A fresh store for each test (made before it, cleaned up after it), and the helpers the cases
 * share. `onStore` hands the test's store and resource namespace to the cases.
 */
function freshStorePerTest<S extends LockContractStore>(makeStore: MakeStore<S>, onStore: (store: S, ns: string) => void) {
  let store: S;
  let ns: string;
  let cleanup: (() => Promise<void>) | undefined;

  beforeEach(async () => {
    const made = await makeStore();
    store = made.store;
    cleanup = made.cleanup;
    // Resources are also namespaced per test, so a store accidentally shared between tests still fails loudly.
    ns = `t${randomUUID().slice(0, 8)}`;
    onStore(store, ns);
  });

  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  const res = (name: string) => `${ns}:${name}`;

  async function allEvents(query: EventQuery = {}): Promise<LeaseEvent[]> {
    const items: LeaseEvent[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 1000; page++) {
      const result = await store.events({ ...query, limit: 500, ...(cursor ? { cursor } : {}) });
      items.push(...result.items);
      cursor = result.nextCursor;
      if (!cursor) return items;
    }
    throw new Error("events() never stopped paginating");
  }

  async function mustAcquire(resource: string, owner = "owner-a", task = "task-1", ttlMs = LONG_TTL_MS) {
    const result = await store.acquire({ resource, owner, task, ttlMs });
    if (!result.acquired) throw new Error(`expected to acquire ${resource}, held by ${result.holder.owner}`);
    return result;
  }

  return { res, allEvents, mustAcquire };
}

function countKinds(events: readonly LeaseEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of events) counts[e.kind] = (counts[e.kind] ?? 0) + 1;
  return counts;
}

// Taking, keeping and giving back leases, and what each of those records.
function lockCases<S extends LockContractStore>(makeStore: MakeStore<S>): void {
  let store!: S;
  let ns!: string;
  const { res, allEvents, mustAcquire } = freshStorePerTest(makeStore, (made, namespace) => {
    store = made;
    ns = namespace;
  });

  it("grants a lease, refuses a second acquire with the holder's details and records a contended event", async () => {
    const r = res("billing:2026-04");
    const first = await mustAcquire(r, "worker-a", "run-1", 10_000);
    const { lease } = first;
    expect(lease).toMatchObject({ store: store.name, resource: r, owner: "worker-a", task: "run-1", ttlMs: 10_000, renewals: 0 });
    expect(lease.fencingToken).toMatch(/^[0-9]+$/);
    expect(lease.leaseId.length).toBeGreaterThan(0);
    expect(Math.abs(lease.expiresAt.getTime() - lease.acquiredAt.getTime() - 10_000)).toBeLessThanOrEqual(1);

    const second = await store.acquire({ resource: r, owner: "worker-b", task: "run-2", ttlMs: 10_000 });
    expect(second.acquired).toBe(false);
    if (second.acquired) return;
    expect(second.holder).toMatchObject({ owner: "worker-a", task: "run-1", leaseId: lease.leaseId, fencingToken: lease.fencingToken });
    expect(second.holder.expiresAt.getTime()).toBe(lease.expiresAt.getTime());

    const contended = await allEvents({ resource: r, kinds: ["contended"] });
    expect(contended).toHaveLength(1);
    expect(contended[0]).toMatchObject({
      kind: "contended",
      resource: r,
      owner: "worker-b",
      task: "run-2",
      leaseId: lease.leaseId,
      fencingToken: lease.fencingToken,
      detail: expect.objectContaining({ holderOwner: "worker-a", holderTask: "run-1" }),
    });

    const current = await store.get(r);
    expect(current).toMatchObject({ leaseId: lease.leaseId, owner: "worker-a", fencingToken: lease.fencingToken });
    const acquiredEvents = await allEvents({ resource: r, kinds: ["acquired"] });
    expect(acquiredEvents).toHaveLength(1);
    expect(acquiredEvents[0]).toMatchObject({ leaseId: lease.leaseId, owner: "worker-a", task: "run-1", fencingToken: lease.fencingToken });
  });

  it("refuses a release by the wrong lease id and changes nothing", async () => {
    const r = res("release");
    const { lease } = await mustAcquire(r);
    const before = await allEvents();

    const wrong = await store.release({ resource: r, leaseId: randomUUID() });
    expect(wrong).toEqual({ released: false, reason: "not_owner" });
    expect(await store.get(r)).toMatchObject({ leaseId: lease.leaseId, fencingToken: lease.fencingToken, expiresAt: lease.expiresAt });
    const after = await allEvents();
    expect(after.filter((e) => e.kind === "released")).toHaveLength(0);
    expect(after.length).toBe(before.length);

    const right = await store.release({ resource: r, leaseId: lease.leaseId });
    expect(right.released).toBe(true);
    if (!right.released) return;
    expect(right.holdMs).toBeGreaterThanOrEqual(0);
    expect(right.event).toMatchObject({ kind: "released", resource: r, leaseId: lease.leaseId, fencingToken: lease.fencingToken });
    expect(await store.get(r)).toBeNull();

    // A release sent again (its reply lost, or the holder unsure) learns its release ran, even
    // after another lease of the resource came and went; nothing is recorded twice.
    const other = await mustAcquire(r, "owner-b");
    expect((await store.release({ resource: r, leaseId: other.lease.leaseId })).released).toBe(true);
    const again = await store.release({ resource: r, leaseId: lease.leaseId });
    expect(again).toEqual(right);
    expect((await allEvents({ resource: r, kinds: ["released"] })).length).toBe(2);
  });

  it("renews on the store's clock; a wrong lease id is not_owner and recorded", async () => {
    const r = res("renew");
    const { lease } = await mustAcquire(r, "owner-a", "task-1", 1_000);

    const renewed = await store.renew({ resource: r, leaseId: lease.leaseId, ttlMs: 5_000 });
    expect(renewed.renewed).toBe(true);
    if (!renewed.renewed) return;
    expect(renewed.renewals).toBe(1);
    expect(renewed.expiresAt.getTime()).toBeGreaterThan(lease.expiresAt.getTime());

    const current = await store.get(r);
    expect(current).not.toBeNull();
    expect(current!.renewals).toBe(1);
    expect(current!.ttlMs).toBe(5_000);
    expect(current!.expiresAt.getTime()).toBe(renewed.expiresAt.getTime());
    expect(current!.fencingToken).toBe(lease.fencingToken);
    // The new expiry is the store's renewal time plus the ttl, not the client's.
    expect(Math.abs(current!.expiresAt.getTime() - current!.renewedAt.getTime() - 5_000)).toBeLessThanOrEqual(1);

    const wrong = await store.renew({ resource: r, leaseId: randomUUID(), ttlMs: 5_000 });
    expect(wrong).toEqual({ renewed: false, reason: "not_owner" });
    const unchanged = await store.get(r);
    expect(unchanged!.expiresAt.getTime()).toBe(renewed.expiresAt.getTime());
    expect(unchanged!.renewals).toBe(1);

    const failures = await allEvents({ resource: r, kinds: ["renew_failed"] });
    expect(failures).toHaveLength(1);
    expect(failures[0]!.reason).toBe("not_owner");
  });

  it("after expiry refuses renew and release, and records the expiry once", async () => {
    const r = res("lapse");
    const { lease } = await mustAcquire(r, "owner-a", "task-1", SHORT_TTL_MS);
    await sleep(PAST_SHORT_TTL_MS);

    const renewed = await store.renew({ resource: r, leaseId: lease.leaseId, ttlMs: 5_000 });
    expect(renewed.renewed).toBe(false);
    if (!renewed.renewed) expect(["expired", "not_owner"]).toContain(renewed.reason);

    const released = await store.release({ resource: r, leaseId: lease.leaseId });
    expect(released.released).toBe(false);
    if (!released.released) expect(["expired", "not_owner"]).toContain(released.reason);

    await Promise.all([store.sweep(), store.sweep()]);
    await store.sweep();
    const expired = await allEvents({ resource: r, kinds: ["expired"] });
    expect(expired.filter((e) => e.leaseId === lease.leaseId)).toHaveLength(1);
    expect(await allEvents({ resource: r, kinds: ["released"] })).toHaveLength(0);
    expect((await allEvents({ resource: r, kinds: ["renew_failed"] })).length).toBeGreaterThanOrEqual(1);
    expect(await store.get(r)).toBeNull();
  });

  it("records the same expiry detail (renewals, expiredAt, recordedBy) whichever operation records it", async () => {
    type Recorder = "sweep" | "acquire" | "renew" | "release" | "force_release";
    const record: Record<Recorder, (resource: string, leaseId: string) => Promise<unknown>> = {
      sweep: () => store.sweep(),
      acquire: (resource) => mustAcquire(resource, "owner-b", "task-2"),
      renew: (resource, leaseId) => store.renew({ resource, leaseId, ttlMs: 5_000 }),
      release: (resource, leaseId) => store.release({ resource, leaseId }),
      force_release: (resource, leaseId) => store.forceRelease({ resource, leaseId, actor: "ops@example.com", reason: "stuck" }),
    };
    const recorders = Object.keys(record) as Recorder[];
    // Held long, then renewed once onto a short TTL: one renewal, and an expiry the test knows.
    const leases = await Promise.all(
      recorders.map(async (by) => {
        const { lease } = await mustAcquire(res(`detail-${by}`), "owner-a", "task-1", LONG_TTL_MS);
        const renewed = await store.renew({ resource: lease.resource, leaseId: lease.leaseId, ttlMs: SHORT_TTL_MS });
        if (!renewed.renewed) throw new Error(`renew of ${lease.resource} failed: ${renewed.reason}`);
        return { by, lease, expiresAt: renewed.expiresAt };
      }),
    );
    await sleep(PAST_SHORT_TTL_MS);
    // The sweep goes last so every other operation finds its lease still unrecorded.
    for (const { by, lease } of [...leases.filter((l) => l.by !== "sweep"), ...leases.filter((l) => l.by === "sweep")]) {
      await record[by](lease.resource, lease.leaseId);
    }
    for (const { by, lease, expiresAt } of leases) {
      const expired = (await allEvents({ resource: lease.resource, kinds: ["expired"] })).filter((e) => e.leaseId === lease.leaseId);
      expect(expired, by).toHaveLength(1);
      expect(expired[0]?.detail, by).toEqual({ renewals: 1, expiredAt: expiresAt.toISOString(), recordedBy: by });
    }
  });

  it("takes over an expired lease with a higher token and exactly one expired event", async () => {
    const r = res("takeover");
    const { lease: old } = await mustAcquire(r, "owner-a", "task-1", SHORT_TTL_MS);
    await sleep(PAST_SHORT_TTL_MS);

    const next = await mustAcquire(r, "owner-b", "task-2", LONG_TTL_MS);
    expect(compareFencingTokens(next.lease.fencingToken, old.fencingToken)).toBe(1);
    expect(next.lease.leaseId).not.toBe(old.leaseId);

    expect((await store.renew({ resource: r, leaseId: old.leaseId, ttlMs: 5_000 })).renewed).toBe(false);
    expect((await store.release({ resource: r, leaseId: old.leaseId })).released).toBe(false);
    expect(await store.get(r)).toMatchObject({ leaseId: next.lease.leaseId, owner: "owner-b" });

    await Promise.all([store.sweep(), store.sweep(), store.sweep()]);
    const expired = await allEvents({ resource: r, kinds: ["expired"] });
    expect(expired).toHaveLength(1);
    expect(expired[0]).toMatchObject({ leaseId: old.leaseId, owner: "owner-a", task: "task-1", fencingToken: old.fencingToken });
    // The new holder is untouched by the sweeps.
    expect(await store.get(r)).toMatchObject({ leaseId: next.lease.leaseId });
  });

  it("lets exactly one of many concurrent acquires win, on a free and on a lapsed resource", async () => {
    for (const lapsed of [false, true]) {
      const r = res(lapsed ? "crowd:lapsed" : "crowd:free");
      const old = lapsed ? await mustAcquire(r, "owner-old", "task-old", SHORT_TTL_MS) : null;
      if (old) await sleep(PAST_SHORT_TTL_MS);
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => store.acquire({ resource: r, owner: `w${i}`, task: "t", ttlMs: LONG_TTL_MS })),
      );
      const winners = results.filter((x) => x.acquired);
      expect(winners, r).toHaveLength(1);
      const winner = winners[0]!;
      if (!winner.acquired) return;
      for (const x of results) {
        if (!x.acquired) expect(x.holder).toMatchObject({ leaseId: winner.lease.leaseId, owner: winner.lease.owner, fencingToken: winner.lease.fencingToken });
      }
      expect(await store.get(r)).toMatchObject({ leaseId: winner.lease.leaseId });
      await store.sweep();
      const events = await allEvents({ resource: r });
      expect(countKinds(events), r).toEqual({ acquired: old ? 2 : 1, contended: 11, ...(old ? { expired: 1 } : {}) });
      if (old) expect(compareFencingTokens(winner.lease.fencingToken, old.lease.fencingToken)).toBe(1);
    }
  });

  it("records exactly one expired per expiry while sweeps race acquires", async () => {
    const count = 24;
    const resources = Array.from({ length: count }, (_, i) => res(`race:${i}`));
    const leases = await Promise.all(resources.map((r) => mustAcquire(r, "owner-a", "task-1", SHORT_TTL_MS)));
    await sleep(PAST_SHORT_TTL_MS);

    const sweeps: Promise<{ expired: number }>[] = [];
    const takeovers: Promise<unknown>[] = [];
    for (let round = 0; round < 3; round++) {
      for (let s = 0; s < 3; s++) sweeps.push(store.sweep());
      for (let i = round; i < count; i += 3) {
        takeovers.push(store.acquire({ resource: resources[i]!, owner: `owner-${round}`, task: "take", ttlMs: LONG_TTL_MS }));
      }
    }
    const [sweepResults, takeoverResults] = await Promise.all([Promise.all(sweeps), Promise.all(takeovers)]);
    const finalSweep = await store.sweep();

    const expired = await allEvents({ prefix: `${ns}:race:`, kinds: ["expired"] });
    for (const { lease } of leases) {
      expect(expired.filter((e) => e.leaseId === lease.leaseId), `expired events for ${lease.resource}`).toHaveLength(1);
    }
    expect(expired).toHaveLength(count);
    // Every expiry was counted by exactly one sweep or recorded by exactly one takeover.
    const swept = sweepResults.reduce((n, s) => n + s.expired, 0) + finalSweep.expired;
    const tookOver = (takeoverResults as Awaited<ReturnType<LeaseStore["acquire"]>>[]).filter(
      (t) => t.acquired && t.tookOverExpired === true,
    ).length;
    expect(swept + tookOver).toBe(count);
    // Every resource ended up held by exactly one new lease, with a higher token.
    for (const [i, r] of resources.entries()) {
      const current = await store.get(r);
      expect(current, r).not.toBeNull();
      expect(compareFencingTokens(current!.fencingToken, leases[i]!.lease.fencingToken)).toBe(1);
    }
  });

  it("issues strictly increasing tokens across release, force-release and expiry", async () => {
    const r = res("tokens");
    const tokens: string[] = [];
    const a = await mustAcquire(r);
    tokens.push(a.lease.fencingToken);
    expect((await store.release({ resource: r, leaseId: a.lease.leaseId })).released).toBe(true);

    const b = await mustAcquire(r);
    tokens.push(b.lease.fencingToken);
    expect((await store.forceRelease({ resource: r, leaseId: b.lease.leaseId, actor: "oncall@example.com", reason: "stuck" })).released).toBe(true);

    const c = await mustAcquire(r, "owner-a", "task-1", SHORT_TTL_MS);
    tokens.push(c.lease.fencingToken);
    await sleep(PAST_SHORT_TTL_MS);
    const d = await mustAcquire(r);
    tokens.push(d.lease.fencingToken);
    expect((await store.release({ resource: r, leaseId: d.lease.leaseId })).released).toBe(true);

    const e = await mustAcquire(r, "owner-a", "task-1", SHORT_TTL_MS);
    tokens.push(e.lease.fencingToken);
    await sleep(PAST_SHORT_TTL_MS);
    await store.sweep();
    const f = await mustAcquire(r);
    tokens.push(f.lease.fencingToken);

    for (let i = 1; i < tokens.length; i++) {
      expect(compareFencingTokens(tokens[i]!, tokens[i - 1]!), `token ${i} (${tokens[i]}) > token ${i - 1} (${tokens[i - 1]})`).toBe(1);
    }
  });

  it("force-releases only the lease id that still holds the resource", async () => {
    const r = res("force");
    const { lease } = await mustAcquire(r, "owner-a", "task-1");

    const stale = await store.forceRelease({ resource: r, leaseId: randomUUID(), actor: "oncall@example.com", reason: "stuck" });
    expect(stale.released).toBe(false);
    if (stale.released) return;
    expect(stale.reason).toBe("lease_changed");
    expect(stale.current).toMatchObject({ leaseId: lease.leaseId, owner: "owner-a", fencingToken: lease.fencingToken });
    expect(await store.get(r)).toMatchObject({ leaseId: lease.leaseId });

    const missing = await store.forceRelease({ resource: res("nothing-here"), leaseId: randomUUID(), actor: "oncall@example.com", reason: "stuck" });
    expect(missing).toEqual({ released: false, reason: "not_found", current: null });

    const done = await store.forceRelease({ resource: r, leaseId: lease.leaseId, actor: "oncall@example.com", reason: "worker hung" });
    expect(done.released).toBe(true);
    if (!done.released) return;
    expect(done.lease).toMatchObject({ leaseId: lease.leaseId, fencingToken: lease.fencingToken });
    expect(done.event).toMatchObject({ kind: "force_released", resource: r, leaseId: lease.leaseId, actor: "oncall@example.com", reason: "worker hung" });
    expect(done.holdMs).toBeGreaterThanOrEqual(0);
    expect(await store.get(r)).toBeNull();

    expect(await store.renew({ resource: r, leaseId: lease.leaseId, ttlMs: 5_000 })).toEqual({ renewed: false, reason: "not_owner" });
    const next = await mustAcquire(r, "owner-b");
    expect(compareFencingTokens(next.lease.fencingToken, lease.fencingToken)).toBe(1);
    expect(await allEvents({ resource: r, kinds: ["force_released"] })).toHaveLength(1);
  });

  it("puts holdMs on every terminal event", async () => {
    const released = await mustAcquire(res("hold:released"));
    await store.release({ resource: released.lease.resource, leaseId: released.lease.leaseId });
    const forced = await mustAcquire(res("hold:forced"));
    await store.forceRelease({ resource: forced.lease.resource, leaseId: forced.lease.leaseId, actor: "oncall", reason: "test" });
    const expiring = await mustAcquire(res("hold:expired"), "owner-a", "task-1", SHORT_TTL_MS);
    await sleep(PAST_SHORT_TTL_MS);
    await store.sweep();

    const terminal = await allEvents({ prefix: `${ns}:hold:`, kinds: [...TERMINAL_EVENT_KINDS] });
    expect(countKinds(terminal)).toEqual({ released: 1, force_released: 1, expired: 1 });
    for (const e of terminal) {
      expect(typeof e.holdMs, `${e.kind} holdMs`).toBe("number");
      expect(e.holdMs!).toBeGreaterThanOrEqual(0);
    }
    // An expired lease was held for (at least) its whole ttl.
    const expired = terminal.find((e) => e.kind === "expired")!;
    expect(expired.leaseId).toBe(expiring.lease.leaseId);
    expect(expired.holdMs!).toBeGreaterThanOrEqual(SHORT_TTL_MS - 1);
  });

  it("conserves leases: acquired = released + expired + force_released + held, after a concurrent mixed history", async () => {
    const seed = Math.floor(Math.random() * 2 ** 31);
    const random = createRandom(seed);
    const resources = Array.from({ length: 6 }, (_, i) => res(`mix:${i}`));
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

    async function worker(id: number): Promise<void> {
      for (let step = 0; step < 12; step++) {
        const resource = pick(resources);
        const ttlMs = random() < 0.5 ? SHORT_TTL_MS : 5_000;
        const result = await store.acquire({ resource, owner: `w${id}`, task: `s${step}`, ttlMs });
        if (!result.acquired) {
          if (random() < 0.3) await store.sweep();
          continue;
        }
        const roll = random();
        if (roll < 0.15) await store.renew({ resource, leaseId: result.lease.leaseId, ttlMs });
        if (roll < 0.45) await store.release({ resource, leaseId: result.lease.leaseId });
        else if (roll < 0.6) await store.forceRelease({ resource, leaseId: result.lease.leaseId, actor: "oncall", reason: "mix" });
        else if (roll < 0.7) await sleep(SHORT_TTL_MS);
        // otherwise: abandon it (a crashed holder); it expires or stays held
      }
    }
    await Promise.all([...Array.from({ length: 6 }, (_, i) => worker(i)), store.sweep(), store.sweep()]);
    await sleep(PAST_SHORT_TTL_MS);
    await store.sweep();

    const events = await allEvents({ prefix: `${ns}:mix:` });
    const counts = countKinds(events);
    let held = 0;
    for (const r of resources) if ((await store.get(r)) !== null) held++;
    const message = `seed ${seed}: ${JSON.stringify(counts)}, held ${held}`;
    expect(counts.acquired ?? 0, message).toBeGreaterThan(0);
    expect(counts.acquired ?? 0, message).toBe((counts.released ?? 0) + (counts.expired ?? 0) + (counts.force_released ?? 0) + held);

    // Each hold ends at most once, and only holds that were acquired end.
    const acquiredIds = new Set(events.filter((e) => e.kind === "acquired").map((e) => e.leaseId));
    const ended = new Map<string, number>();
    for (const e of events) {
      if (!(TERMINAL_EVENT_KINDS as readonly string[]).includes(e.kind)) continue;
      expect(acquiredIds.has(e.leaseId), message).toBe(true);
      ended.set(e.leaseId!, (ended.get(e.leaseId!) ?? 0) + 1);
    }
    for (const [leaseId, n] of ended) expect(n, `${message}: ${leaseId} ended ${n} times`).toBe(1);
  });

  it("reports fencing rejections and lost leases as events", async () => {
    const r = res("fence");
    const { lease } = await mustAcquire(r);
    const rejected = await store.reportFencingRejection({ resource: r, fencingToken: lease.fencingToken, seenToken: "999999999", by: "ledger-db", owner: lease.owner, task: lease.task, leaseId: lease.leaseId });
    // The same shape from every store: who refused it and what it had seen are in detail.
    expect(rejected).toMatchObject({
      kind: "fencing_rejected",
      resource: r,
      leaseId: lease.leaseId,
      owner: lease.owner,
      task: lease.task,
      fencingToken: lease.fencingToken,
      detail: { by: "ledger-db", seenToken: "999999999" },
    });
    expect(rejected.actor).toBeUndefined();
    const lost = await store.reportLost({ resource: r, leaseId: lease.leaseId, owner: lease.owner, task: lease.task, fencingToken: lease.fencingToken, reason: "deadline_passed" });
    expect(lost).toMatchObject({ kind: "lost", resource: r, leaseId: lease.leaseId, reason: "deadline_passed" });
    const stored = await allEvents({ resource: r, kinds: ["fencing_rejected", "lost"] });
    expect(stored.map((e) => e.id).sort()).toEqual([rejected.id, lost.id].sort());
  });
}

// Listing the current leases and reading the event history.
function historyCases<S extends HistoryContractStore>(makeStore: MakeStore<S>): void {
  let store!: S;
  let ns!: string;
  const { res, allEvents, mustAcquire } = freshStorePerTest(makeStore, (made, namespace) => {
    store = made;
    ns = namespace;
  });

  async function allLeases(query: ListQuery = {}, limit = 1000): Promise<{ items: Lease[]; pages: number }> {
    const items: Lease[] = [];
    let cursor: string | undefined;
    for (let page = 1; page < 1000; page++) {
      const result = await store.list({ ...query, limit, ...(cursor ? { cursor } : {}) });
      items.push(...result.items);
      cursor = result.nextCursor;
      if (!cursor) return { items, pages: page };
    }
    throw new Error("list() never stopped paginating");
  }

  it("lists with prefix, owner, task and state filters, three sorts and gap-free cursor pages", async () => {
    const created: Lease[] = [];
    const specs: Array<[string, string, string]> = [];
    for (let i = 0; i < 9; i++) specs.push([`a:${i}`, i % 2 === 0 ? "owner-even" : "owner-odd", `task-${i % 3}`]);
    for (let i = 0; i < 6; i++) specs.push([`b:${i}`, "owner-b", "task-b"]);
    // Names that would match a careless LIKE pattern for the prefix "a_" or "a%".
    specs.push(["ab", "owner-x", "task-x"], ["a_x", "owner-x", "task-x"], ["a%y", "owner-x", "task-x"]);
    for (const [i, [name, owner, task]] of specs.entries()) {
      // Different ttls so sorting by expiry differs from sorting by acquisition.
      created.push((await mustAcquire(res(name), owner, task, LONG_TTL_MS + ((i * 7919) % 17) * 1_000)).lease);
    }
    const ours = (items: Lease[]) => items.map((l) => l.resource).sort();
    const names = (filter: (spec: [string, string, string]) => boolean) =>
      specs.filter(filter).map(([name]) => res(name)).sort();

    expect(ours((await allLeases({ prefix: res("a:") })).items)).toEqual(names(([n]) => n.startsWith("a:")));
    expect(ours((await allLeases({ prefix: res("a_") })).items)).toEqual([res("a_x")]);
    expect(ours((await allLeases({ prefix: res("a%") })).items)).toEqual([res("a%y")]);
    expect(ours((await allLeases({ prefix: ns })).items)).toEqual(names(() => true));
    expect(ours((await allLeases({ prefix: ns, owner: "owner-even" })).items)).toEqual(names(([, o]) => o === "owner-even"));
    expect(ours((await allLeases({ prefix: ns, task: "task-1" })).items)).toEqual(names(([, , t]) => t === "task-1"));
    expect(ours((await allLeases({ prefix: ns, owner: "owner-odd", task: "task-1" })).items)).toEqual(
      names(([, o, t]) => o === "owner-odd" && t === "task-1"),
    );
    expect((await store.list({ prefix: res("zzz") })).items).toEqual([]);

    // All of these are freshly acquired with long ttls: every one is "held", none "lapsed".
    expect(ours((await allLeases({ prefix: ns, state: "held" })).items)).toEqual(names(() => true));
    expect((await store.list({ prefix: ns, state: "lapsed" })).items).toEqual([]);

    // A lease that has missed its heartbeats (overdue, or on a slow machine lapsed) and one that ran out (lapsed, not swept yet).
    const late = await mustAcquire(res("late"), "owner-late", "task-late", 1_200);
    const gone = await mustAcquire(res("gone"), "owner-gone", "task-gone", SHORT_TTL_MS);
    await sleep(850);
    let lateListedIn: LeaseState | undefined;
    for (const state of ["held", "expiring", "overdue", "lapsed"] as LeaseState[]) {
      const page = await store.list({ prefix: ns, state, limit: 1000 });
      expect(page.now).toBeInstanceOf(Date);
      for (const item of page.items) {
        const actual = leaseStateAt(item, page.now);
        if (state === "held") expect(actual, item.resource).not.toBe("lapsed");
        else expect(actual, item.resource).toBe(state);
      }
      // Each lease we know of is listed exactly where its state, at the page's own store time, puts it.
      const listed = new Set(page.items.map((l) => l.leaseId));
      const lateState = leaseStateAt(late.lease, page.now);
      expect(listed.has(late.lease.leaseId), `${state}: the late lease is ${lateState} at ${page.now.toISOString()}`).toBe(
        state === "held" ? lateState !== "lapsed" : lateState === state,
      );
      if (listed.has(late.lease.leaseId)) lateListedIn = state === "held" ? lateListedIn : state;
      expect(listed.has(gone.lease.leaseId), `${state}: the lapsed lease`).toBe(state === "lapsed");
      if (state === "held") for (const lease of created) expect(listed.has(lease.leaseId), `held: ${lease.resource}`).toBe(true);
      // "expiring" cannot be asserted to contain a lease: a lease with under a quarter of its ttl
      // left has gone two thirds of it unrenewed, and overdue wins as the label.
    }
    expect(["overdue", "lapsed"]).toContain(lateListedIn);
    await store.release({ resource: late.lease.resource, leaseId: late.lease.leaseId });
    await store.sweep();
    expect(await store.get(gone.lease.resource)).toBeNull();

    const everything = names(() => true);
    const checks: Array<[LeaseSort, (a: Lease, b: Lease) => boolean]> = [
      ["expires", (a, b) => a.expiresAt.getTime() <= b.expiresAt.getTime()],
      ["held_longest", (a, b) => a.acquiredAt.getTime() <= b.acquiredAt.getTime()],
      ["newest", (a, b) => a.acquiredAt.getTime() >= b.acquiredAt.getTime()],
    ];
    for (const [sort, inOrder] of checks) {
      const whole = await store.list({ prefix: ns, sort, limit: 1000 });
      expect(whole.nextCursor, sort).toBeUndefined();
      const paged = await allLeases({ prefix: ns, sort }, 4);
      expect(paged.pages, sort).toBe(Math.ceil(everything.length / 4));
      const ids = paged.items.map((l) => l.resource);
      expect(new Set(ids).size, `${sort}: no duplicates across pages`).toBe(ids.length);
      expect([...ids].sort(), `${sort}: no gaps across pages`).toEqual(everything);
      // Pages concatenate to exactly the single-page order (stable order, including ties).
      expect(ids, sort).toEqual(whole.items.map((l) => l.resource));
      for (let i = 1; i < paged.items.length; i++) {
        expect(inOrder(paged.items[i - 1]!, paged.items[i]!), `${sort} order at ${i}`).toBe(true);
      }
    }
    expect(created).toHaveLength(specs.length);
  });

  it("filters events by resource, prefix, owner, kinds and time, and pages both ways", async () => {
    const ra = res("ev:a");
    const rb = res("ev:b");
    const other = res("other:c");
    for (let i = 0; i < 4; i++) {
      const a = await mustAcquire(ra, `owner-${i % 2}`, `task-${i}`);
      await store.acquire({ resource: ra, owner: "intruder", task: "x", ttlMs: 1_000 });
      await store.release({ resource: ra, leaseId: a.lease.leaseId });
    }
    const b = await mustAcquire(rb, "owner-b", "task-b");
    await store.forceRelease({ resource: rb, leaseId: b.lease.leaseId, actor: "oncall", reason: "test" });
    await mustAcquire(other, "owner-c", "task-c");

    const all = await allEvents();
    const mine = all.filter((e) => e.resource.startsWith(`${ns}:`));
    expect(mine.length).toBe(4 * 3 + 2 + 1);

    const byResource = await allEvents({ resource: ra });
    expect(byResource.length).toBe(12);
    expect(byResource.every((e) => e.resource === ra)).toBe(true);
    const byPrefix = await allEvents({ prefix: res("ev:") });
    expect(byPrefix.length).toBe(14);
    expect(byPrefix.every((e) => e.resource.startsWith(res("ev:")))).toBe(true);
    const byOwner = await allEvents({ prefix: ns, owner: "owner-1" });
    expect(byOwner.length).toBe(4); // two acquired + two released
    expect(byOwner.every((e) => e.owner === "owner-1")).toBe(true);
    const byTask = await allEvents({ prefix: ns, task: "task-2" });
    expect(countKinds(byTask)).toEqual({ acquired: 1, released: 1 });
    const byLease = await allEvents({ leaseId: b.lease.leaseId });
    expect(countKinds(byLease)).toEqual({ acquired: 1, force_released: 1 });
    expect(byLease.every((e) => e.leaseId === b.lease.leaseId)).toBe(true);
    const byToken = await allEvents({ fencingToken: String(b.lease.fencingToken) });
    expect(byToken.map((e) => e.id).sort()).toEqual(byLease.map((e) => e.id).sort());
    expect(await allEvents({ leaseId: "not-a-lease-id" })).toEqual([]);
    expect(await allEvents({ fencingToken: "99999999999999999999999" })).toEqual([]);
    const byKinds = await allEvents({ prefix: ns, kinds: ["released", "force_released"] });
    expect(countKinds(byKinds)).toEqual({ released: 4, force_released: 1 });
    expect(await allEvents({ prefix: ns, kinds: ["fencing_rejected"] })).toEqual([]);
    // Several kinds and nothing else: pages in both orders hold exactly those kinds, in id order.
    for (const order of ["desc", "asc"] as const) {
      const paged: LeaseEvent[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.events({ kinds: ["released", "force_released"], order, limit: 2, ...(cursor ? { cursor } : {}) });
        paged.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor);
      const expected = all.filter((e) => e.kind === "released" || e.kind === "force_released").map((e) => e.id);
      expect(paged.map((e) => e.id)).toEqual(order === "desc" ? expected : [...expected].reverse());
    }

    // Default order is newest first; asc is its exact reverse; cursors page without gaps or repeats.
    const desc = await store.events({ prefix: ns, limit: 1000 });
    const asc = await store.events({ prefix: ns, limit: 1000, order: "asc" });
    expect(asc.items.map((e) => e.id)).toEqual([...desc.items.map((e) => e.id)].reverse());
    for (let i = 1; i < asc.items.length; i++) {
      expect(asc.items[i]!.at.getTime()).toBeGreaterThanOrEqual(asc.items[i - 1]!.at.getTime());
    }
    for (const order of ["asc", "desc"] as const) {
      const ids: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.events({ prefix: ns, order, limit: 4, ...(cursor ? { cursor } : {}) });
        ids.push(...page.items.map((e) => e.id));
        cursor = page.nextCursor;
        pages++;
      } while (cursor && pages < 100);
      expect(ids, order).toEqual((order === "asc" ? asc : desc).items.map((e) => e.id));
    }

    // Time window: [from, to) on the store's clock.
    const middle = asc.items[Math.floor(asc.items.length / 2)]!;
    const fromMiddle = await allEvents({ prefix: ns, from: middle.at });
    expect(fromMiddle.length).toBeGreaterThan(0);
    expect(fromMiddle.every((e) => e.at.getTime() >= middle.at.getTime())).toBe(true);
    expect(fromMiddle.map((e) => e.id)).toContain(middle.id);
    const beforeMiddle = await allEvents({ prefix: ns, to: middle.at });
    expect(beforeMiddle.every((e) => e.at.getTime() < middle.at.getTime() + 1)).toBe(true);
    expect(beforeMiddle.length + fromMiddle.length, "[-inf, t) and [t, inf) partition the events").toBe(mine.length);
    const future = new Date(Date.now() + 3_600_000);
    expect(await allEvents({ prefix: ns, from: future })).toEqual([]);
  });
}

// Rollups and durable totals, checked against the events they count.
function analyticsCases<S extends AnalyticsContractStore>(makeStore: MakeStore<S>): void {
  let store!: S;
  let ns!: string;
  const { res, allEvents, mustAcquire } = freshStorePerTest(makeStore, (made, namespace) => {
    store = made;
    ns = namespace;
  });

  it("a release after the holder lost the lease to its local deadline ends it as an expiry, on the crash side of the expired-to-released ratio", async () => {
    const r = res("release-after-loss");
    const { lease } = await mustAcquire(r);
    const before = await store.lifetimeTotals();
    const ended = await store.release({ resource: r, leaseId: lease.leaseId, afterDeadlineLoss: true });
    expect(ended).toMatchObject({ released: true, event: { kind: "expired", leaseId: lease.leaseId, fencingToken: lease.fencingToken } });
    expect(await store.get(r)).toBeNull();
    expect((await allEvents({ resource: r })).map((e) => e.kind).sort()).toEqual(["acquired", "expired"]);
    const after = await store.lifetimeTotals();
    expect(after.counts.expired - before.counts.expired).toBe(1);
    expect(after.counts.released - before.counts.released).toBe(0);
  });

  it("stats from rollups match the events: counts, renewals, hold histogram and contention by prefix", async () => {
    const renewedA = await mustAcquire(res("st:a:1"), "o", "t");
    await store.renew({ resource: renewedA.lease.resource, leaseId: renewedA.lease.leaseId, ttlMs: LONG_TTL_MS });
    await store.renew({ resource: renewedA.lease.resource, leaseId: renewedA.lease.leaseId, ttlMs: LONG_TTL_MS });
    await store.acquire({ resource: res("st:a:1"), owner: "p", task: "t", ttlMs: 1_000 });
    await store.acquire({ resource: res("st:a:1"), owner: "q", task: "t", ttlMs: 1_000 });
    await store.release({ resource: renewedA.lease.resource, leaseId: renewedA.lease.leaseId });
    const forced = await mustAcquire(res("st:b:1"));
    await store.renew({ resource: forced.lease.resource, leaseId: forced.lease.leaseId, ttlMs: LONG_TTL_MS });
    await store.acquire({ resource: res("st:b:1"), owner: "p", task: "t", ttlMs: 1_000 });
    await store.forceRelease({ resource: forced.lease.resource, leaseId: forced.lease.leaseId, actor: "oncall", reason: "x" });
    const lapsing = await mustAcquire(res("st:c:1"), "o", "t", SHORT_TTL_MS);
    await mustAcquire(res("st:d:1"));
    await store.renew({ resource: res("st:d:1"), leaseId: randomUUID(), ttlMs: 1_000 });
    await store.reportLost({ resource: res("st:d:1"), leaseId: randomUUID(), owner: "o", task: "t", fencingToken: "1", reason: "not_owner" });
    await store.reportFencingRejection({ resource: res("st:d:1"), fencingToken: "1", seenToken: "2", by: "db" });
    await sleep(PAST_SHORT_TTL_MS);
    await store.sweep();
    expect(await store.get(lapsing.lease.resource)).toBeNull();

    const events = await allEvents({ prefix: ns });
    const expected = countKinds(events);
    const terminal = events.filter((e) => (TERMINAL_EVENT_KINDS as readonly string[]).includes(e.kind));
    const expectedHoldSum = terminal.reduce((n, e) => n + (e.holdMs ?? 0), 0);
    const expectedContention: Record<string, number> = {};
    for (const e of events.filter((x) => x.kind === "contended")) {
      const p = resourcePrefix(e.resource, 3);
      expectedContention[p] = (expectedContention[p] ?? 0) + 1;
    }

    for (const bucketMs of [60_000, 3_600_000]) {
      const from = new Date(Date.now() - 2 * 3_600_000);
      const to = new Date(Date.now() + 3_600_000);
      const buckets = await store.stats({ from, to, bucketMs, prefixDepth: 3 });
      expect(buckets.length, `${bucketMs}`).toBeGreaterThan(0);
      const totals: Record<string, number> = {};
      const contention: Record<string, number> = {};
      let histogramTotal = 0;
      let holdSum = 0;
      for (const b of buckets) {
        expect(b.start.getTime() % bucketMs, "bucket starts are aligned").toBe(0);
        for (const [kind, n] of Object.entries(b.counts)) totals[kind] = (totals[kind] ?? 0) + n;
        for (const [p, n] of Object.entries(b.contendedByPrefix)) contention[p] = (contention[p] ?? 0) + n;
        histogramTotal += b.holdHistogram.reduce((x, y) => x + y, 0);
        holdSum += b.holdMsSum;
      }
      const message = `bucketMs ${bucketMs}: ${JSON.stringify(totals)} vs ${JSON.stringify(expected)}`;
      for (const kind of LEASE_EVENT_KINDS) expect(totals[kind] ?? 0, `${message}: ${kind}`).toBe(expected[kind] ?? 0);
      expect(totals.acquired, message).toBe(4);
      expect(totals.contended, message).toBe(3);
      expect(totals.expired, message).toBe(1);
      // Renewals are attributed when their lease ends: 2 on the released lease + 1 on the force-released one.
      expect(totals.renewed, message).toBe(3);
      expect(histogramTotal, message).toBe(terminal.length);
      expect(Math.abs(holdSum - expectedHoldSum), message).toBeLessThanOrEqual(terminal.length);
      expect(contention, message).toEqual(expectedContention);
    }
  });

  it("keeps lifetime totals that match the events: every kind, renewals, hold histogram and sum, across sweeps", async () => {
    const before = await store.lifetimeTotals();
    const a = await mustAcquire(res("life:a:1"));
    await store.renew({ resource: a.lease.resource, leaseId: a.lease.leaseId, ttlMs: LONG_TTL_MS });
    await store.acquire({ resource: a.lease.resource, owner: "p", task: "t", ttlMs: 1_000 });
    await store.release({ resource: a.lease.resource, leaseId: a.lease.leaseId });
    // A refresh in the middle of the history: totals then come from rollups and raw events together.
    await store.sweep();
    const b = await mustAcquire(res("life:b:1"));
    await store.forceRelease({ resource: b.lease.resource, leaseId: b.lease.leaseId, actor: "oncall", reason: "x" });
    await mustAcquire(res("life:c:1"), "o", "t", SHORT_TTL_MS);
    await store.renew({ resource: res("life:d:1"), leaseId: randomUUID(), ttlMs: 1_000 });
    await store.reportLost({ resource: res("life:d:1"), leaseId: randomUUID(), owner: "o", task: "t", fencingToken: "1", reason: "not_owner" });
    await store.reportFencingRejection({ resource: res("life:d:1"), fencingToken: "1", seenToken: "2", by: "db" });
    await sleep(PAST_SHORT_TTL_MS);
    await store.sweep();
    const after = await store.lifetimeTotals();

    const events = await allEvents({ prefix: ns });
    const expected = countKinds(events);
    const terminal = events.filter((e) => (TERMINAL_EVENT_KINDS as readonly string[]).includes(e.kind));
    for (const kind of LEASE_EVENT_KINDS) expect(after.counts[kind] - before.counts[kind], kind).toBe(expected[kind] ?? 0);
    expect(after.counts.expired - before.counts.expired).toBe(1);
    expect(after.counts.renewed - before.counts.renewed).toBe(1);
    const histogramDelta = after.holdHistogram.map((n, i) => n - (before.holdHistogram[i] ?? 0));
    expect(histogramDelta.reduce((x, y) => x + y, 0)).toBe(terminal.length);
    for (const e of terminal) histogramDelta[holdBucketIndex(e.holdMs ?? 0)]! -= 1;
    expect(histogramDelta.every((n) => n === 0), `${JSON.stringify(histogramDelta)}`).toBe(true);
    expect(after.holdMsSum - before.holdMsSum).toBe(terminal.reduce((n, e) => n + (e.holdMs ?? 0), 0));
    // Reading again changes nothing: they are records, not a reader's running count.
    expect(await store.lifetimeTotals()).toEqual(after);
  });

  it("counts refused releases by reason in the refused release itself, durably", async () => {
    expect((await store.lifetimeTotals()).releaseFailures).toEqual({ not_owner: 0, expired: 0 });
    const a = await mustAcquire(res("rf:a"));
    const b = await mustAcquire(res("rf:b"), "o", "t", SHORT_TTL_MS);
    expect(await store.release({ resource: a.lease.resource, leaseId: randomUUID() })).toEqual({ released: false, reason: "not_owner" });
    expect(await store.release({ resource: res("rf:none"), leaseId: randomUUID() })).toEqual({ released: false, reason: "not_owner" });
    await sleep(PAST_SHORT_TTL_MS);
    expect(await store.release({ resource: b.lease.resource, leaseId: b.lease.leaseId })).toEqual({ released: false, reason: "expired" });
    expect((await store.release({ resource: a.lease.resource, leaseId: a.lease.leaseId })).released).toBe(true);
    // Concurrent refusals all count; a successful release counts nothing.
    const refused = await Promise.all(Array.from({ length: 20 }, () => store.release({ resource: a.lease.resource, leaseId: randomUUID() })));
    expect(refused.every((r) => !r.released && r.reason === "not_owner")).toBe(true);
    expect((await store.lifetimeTotals()).releaseFailures).toEqual({ not_owner: 22, expired: 1 });
    await store.sweep();
    expect((await store.lifetimeTotals()).releaseFailures).toEqual({ not_owner: 22, expired: 1 });
  });

  it("keeps lifetime hold and renewal-slack histograms per prefix group that match the events and renewals", async () => {
    const from = new Date(Date.now() - 3_600_000);
    const a = await mustAcquire(res("g1:x:1"));
    expect((await store.renew({ resource: a.lease.resource, leaseId: a.lease.leaseId, ttlMs: LONG_TTL_MS })).renewed).toBe(true);
    await store.release({ resource: a.lease.resource, leaseId: a.lease.leaseId });
    // Renewed late in its TTL, twice: low slack.
    const b = await mustAcquire(res("g1:y:1"), "o", "t", 300);
    let renewed = 1;
    for (let i = 0; i < 2; i++) {
      await sleep(220);
      if ((await store.renew({ resource: b.lease.resource, leaseId: b.lease.leaseId, ttlMs: 300 })).renewed) renewed += 1;
    }
    await store.release({ resource: b.lease.resource, leaseId: b.lease.leaseId });
    // A refresh / projection in the middle of the history: totals then come from both sides of it.
    await store.sweep();
    await mustAcquire(res("g2:x:1"), "o", "t", SHORT_TTL_MS);
    const d = await mustAcquire(res("g2:x:2"));
    await store.forceRelease({ resource: d.lease.resource, leaseId: d.lease.leaseId, actor: "oncall", reason: "x" });
    await store.release({ resource: d.lease.resource, leaseId: randomUUID() });
    const e = await mustAcquire(res("g3:z:1"));
    await store.renew({ resource: e.lease.resource, leaseId: e.lease.leaseId, ttlMs: LONG_TTL_MS });
    renewed += 1;
    await sleep(PAST_SHORT_TTL_MS);
    await store.sweep();

    const terminal = (await allEvents({ prefix: ns })).filter((ev) => (TERMINAL_EVENT_KINDS as readonly string[]).includes(ev.kind));
    expect(terminal).toHaveLength(4);
    const slackRows = await store.renewalSlack({ from, to: new Date(Date.now() + 3_600_000) });
    for (const depth of [1, 2, 3]) {
      const totals = await store.groupTotals({ prefixDepth: depth, maxGroups: 200 });
      // Holds: each group's buckets and sum are its terminal events'.
      const expected = new Map<string, { counts: number[]; sum: number }>();
      // Kept 2 segments deep at most (as slack is): depth 3 reads as 2.
      const groupDepth = Math.min(depth, SLACK_PREFIX_DEPTH);
      for (const ev of terminal) {
        const group = resourcePrefix(ev.resource, groupDepth);
        const g = expected.get(group) ?? { counts: new Array<number>(HOLD_HISTOGRAM_BOUNDS_MS.length + 1).fill(0), sum: 0 };
        g.counts[holdBucketIndex(ev.holdMs ?? 0)]! += 1;
        g.sum += ev.holdMs ?? 0;
        expected.set(group, g);
      }
      expect(new Map(totals.hold.map((g) => [g.group, { counts: g.counts, sum: g.sum }])), `depth ${depth}`).toEqual(expected);
      // Slack: the windowed slack rollups (every renewal is within the window) summed per group.
      const slack = new Map<string, number[]>();
      for (const row of slackRows) {
        const group = resourcePrefix(row.group, groupDepth);
        const counts = slack.get(group) ?? new Array<number>(SLACK_BUCKET_COUNT).fill(0);
        row.histogram.forEach((n, i) => (counts[i] = (counts[i] ?? 0) + n));
        slack.set(group, counts);
      }
      expect(new Map(totals.slack.map((g) => [g.group, g.counts])), `slack depth ${depth}`).toEqual(slack);
      expect(totals.slack.flatMap((g) => g.counts).reduce((x, y) => x + y, 0)).toBe(renewed);
    }

    // Past maxGroups, the groups with the fewest holds are summed under null; nothing is lost.
    const bounded = await store.groupTotals({ prefixDepth: 2, maxGroups: 1 });
    expect(bounded.hold.map((g) => g.group)).toEqual([res("g1"), null]);
    expect(bounded.hold[1]!.counts.reduce((x, y) => x + y, 0)).toBe(2);
    expect(bounded.slack.map((g) => g.group)).toEqual([res("g1"), null]);
    // Reading again changes nothing: they are records, not a reader's running count.
    expect(await store.groupTotals({ prefixDepth: 2, maxGroups: 1 })).toEqual(bounded);
    await expect(store.groupTotals({ prefixDepth: 4, maxGroups: 1 })).rejects.toThrow(LeaseError);
  });

  it("counts active leases and reports health", async () => {
    const before = await store.countActive();
    const a = await mustAcquire(res("count:1"));
    await mustAcquire(res("count:2"));
    expect(await store.countActive()).toBe(before + 2);
    await store.release({ resource: a.lease.resource, leaseId: a.lease.leaseId });
    expect(await store.countActive()).toBe(before + 1);
    const health = await store.health();
    expect(health).toMatchObject({ store: store.name, kind: store.kind, ok: true });
    expect(typeof health.latencyMs).toBe("number");
  });
}

// Every method refuses bad input with a LeaseError and writes nothing.
function inputRuleCases(makeStore: MakeStore<LeaseStore>): void {
  let store!: LeaseStore;
  let ns!: string;
  const { res, allEvents, mustAcquire } = freshStorePerTest(makeStore, (made, namespace) => {
    store = made;
    ns = namespace;
  });

  it("rejects bad input with a LeaseError and writes nothing", async () => {
    const r = res("valid");
    const { lease } = await mustAcquire(r);
    const eventsBefore = (await allEvents()).length;
    const activeBefore = await store.countActive();

    const bad: Array<[string, () => Promise<unknown>]> = [
      ["empty resource", () => store.acquire({ resource: "", owner: "o", task: "t", ttlMs: 1_000 })],
      ["over-long resource", () => store.acquire({ resource: "r".repeat(513), owner: "o", task: "t", ttlMs: 1_000 })],
      ["control char in resource", () => store.acquire({ resource: "a\u0000b", owner: "o", task: "t", ttlMs: 1_000 })],
      ["newline in resource", () => store.acquire({ resource: "a\nb", owner: "o", task: "t", ttlMs: 1_000 })],
      ["empty owner", () => store.acquire({ resource: res("x"), owner: "", task: "t", ttlMs: 1_000 })],
      ["over-long owner", () => store.acquire({ resource: res("x"), owner: "o".repeat(257), task: "t", ttlMs: 1_000 })],
      ["control char in task", () => store.acquire({ resource: res("x"), owner: "o", task: "t\u0007", ttlMs: 1_000 })],
      ["over-long task", () => store.acquire({ resource: res("x"), owner: "o", task: "é".repeat(129), ttlMs: 1_000 })],
      ["ttl 99", () => store.acquire({ resource: res("x"), owner: "o", task: "t", ttlMs: 99 })],
      ["ttl 24h + 1", () => store.acquire({ resource: res("x"), owner: "o", task: "t", ttlMs: 24 * 3_600_000 + 1 })],
      ["fractional ttl", () => store.acquire({ resource: res("x"), owner: "o", task: "t", ttlMs: 150.5 })],
      ["unknown option", () => store.acquire({ resource: res("x"), owner: "o", task: "t", ttlMs: 1_000, extra: 1 } as never)],
      ["renew ttl 99", () => store.renew({ resource: r, leaseId: lease.leaseId, ttlMs: 99 })],
      ["renew unknown option", () => store.renew({ resource: r, leaseId: lease.leaseId, ttlMs: 1_000, force: true } as never)],
      ["release empty lease id", () => store.release({ resource: r, leaseId: "" })],
      ["release bad resource", () => store.release({ resource: "\u0001", leaseId: lease.leaseId })],
      ["force-release without reason", () => store.forceRelease({ resource: r, leaseId: lease.leaseId, actor: "a", reason: "" })],
      ["fencing report with bad token", () => store.reportFencingRejection({ resource: r, fencingToken: "12a", seenToken: "1", by: "db" })],
      ["lost with unknown reason", () => store.reportLost({ resource: r, leaseId: lease.leaseId, owner: "o", task: "t", fencingToken: "1", reason: "bored" as never })],
      ["list with unknown option", () => store.list({ prefix: ns, bogus: true } as never)],
      ["list limit 0", () => store.list({ limit: 0 })],
      ["list garbage cursor", () => store.list({ cursor: "not-a-cursor" })],
      ["events with unknown kind", () => store.events({ kinds: ["exploded" as never] })],
      ["events garbage cursor", () => store.events({ cursor: "%%%" })],
      ["stats bucket 5 min", () => store.stats({ from: new Date(0), to: new Date(), bucketMs: 300_000 })],
    ];
    for (const [what, call] of bad) {
      const error = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, what).toBeInstanceOf(LeaseError);
    }

    expect((await allEvents()).length).toBe(eventsBefore);
    expect(await store.countActive()).toBe(activeBefore);
    expect(await store.get(r)).toMatchObject({ leaseId: lease.leaseId, renewals: 0, expiresAt: lease.expiresAt });
  });

  it("accepts input at the exact limits, refuses one past each and surrounding whitespace, and writes nothing when refusing", async () => {
    // Exactly `bytes` long in UTF-8, inside this test's namespace; `unit` may be multi-byte.
    const resourceOf = (bytes: number, unit = "r") => {
      const head = res("lim:");
      const free = bytes - Buffer.byteLength(head, "utf8");
      const unitBytes = Buffer.byteLength(unit, "utf8");
      return head + unit.repeat(Math.floor(free / unitBytes)) + "r".repeat(free % unitBytes);
    };
    const acceptedCases: Array<[string, { resource: string; owner: string; task: string; ttlMs: number }]> = [
      ["ttl 100 ms", { resource: res("lim:ttl-min"), owner: "o", task: "t", ttlMs: 100 }],
      ["ttl 24 h", { resource: res("lim:ttl-max"), owner: "o", task: "t", ttlMs: 24 * 3_600_000 }],
      ["resource 512 bytes", { resource: resourceOf(512), owner: "o", task: "t", ttlMs: 5_000 }],
      ["resource 512 bytes, two-byte characters", { resource: resourceOf(512, "é"), owner: "o", task: "t", ttlMs: 5_000 }],
      ["owner 256 bytes", { resource: res("lim:owner"), owner: "o".repeat(256), task: "t", ttlMs: 5_000 }],
      ["owner 256 bytes, two-byte characters", { resource: res("lim:owner2"), owner: "é".repeat(128), task: "t", ttlMs: 5_000 }],
      ["task 256 bytes", { resource: res("lim:task"), owner: "o", task: "t".repeat(256), ttlMs: 5_000 }],
      ["inner spaces", { resource: res("lim:in ner"), owner: "an owner", task: "a task", ttlMs: 5_000 }],
    ];
    expect(Buffer.byteLength(resourceOf(512, "é"), "utf8")).toBe(512);
    for (const [what, input] of acceptedCases) {
      const got = await store.acquire(input);
      expect(got.acquired, what).toBe(true);
      if (!got.acquired) continue;
      expect(got.lease, what).toMatchObject({ resource: input.resource, owner: input.owner, task: input.task, ttlMs: input.ttlMs });
      // A 100 ms lease may lapse before the next call on a loaded machine; it is swept below.
      if (input.ttlMs === 100) continue;
      expect((await store.renew({ resource: input.resource, leaseId: got.lease.leaseId, ttlMs: input.ttlMs })).renewed, `${what}: renew`).toBe(true);
      expect((await store.release({ resource: input.resource, leaseId: got.lease.leaseId })).released, `${what}: release`).toBe(true);
    }
    await sleep(PAST_SHORT_TTL_MS);
    await store.sweep();
    const held = await mustAcquire(res("lim:held"));
    const renewAt = (ttlMs: number) => store.renew({ resource: held.lease.resource, leaseId: held.lease.leaseId, ttlMs });
    expect((await renewAt(24 * 3_600_000)).renewed, "renew ttl 24 h").toBe(true);

    const eventsBefore = (await allEvents()).length;
    const activeBefore = await store.countActive();
    const ok = { resource: res("lim:x"), owner: "o", task: "t", ttlMs: 5_000 };
    const refused: Array<[string, () => Promise<unknown>]> = [
      ["ttl 99 ms", () => store.acquire({ ...ok, ttlMs: 99 })],
      ["ttl 24 h + 1 ms", () => store.acquire({ ...ok, ttlMs: 24 * 3_600_000 + 1 })],
      ["resource 513 bytes", () => store.acquire({ ...ok, resource: resourceOf(513) })],
      ["resource 513 bytes, two-byte characters", () => store.acquire({ ...ok, resource: resourceOf(511, "é") + "é" })],
      ["owner 257 bytes", () => store.acquire({ ...ok, owner: "o".repeat(257) })],
      ["owner 257 bytes, two-byte characters", () => store.acquire({ ...ok, owner: "é".repeat(128) + "o" })],
      ["task 257 bytes", () => store.acquire({ ...ok, task: "t".repeat(257) })],
      ["renew ttl 99 ms", () => renewAt(99)],
      ["renew ttl 24 h + 1 ms", () => renewAt(24 * 3_600_000 + 1)],
      ["leading space in resource", () => store.acquire({ ...ok, resource: ` ${ok.resource}` })],
      ["trailing space in resource", () => store.acquire({ ...ok, resource: `${ok.resource} ` })],
      ["leading space in owner", () => store.acquire({ ...ok, owner: " o" })],
      ["trailing space in owner", () => store.acquire({ ...ok, owner: "o " })],
      ["leading space in task", () => store.acquire({ ...ok, task: " t" })],
      ["trailing no-break space in task", () => store.acquire({ ...ok, task: "t\u00a0" })],
      ["leading ideographic space in resource", () => store.acquire({ ...ok, resource: `\u3000${ok.resource}` })],
      ["trailing space in release's resource", () => store.release({ resource: `${held.lease.resource} `, leaseId: held.lease.leaseId })],
      ["leading space in release's lease id", () => store.release({ resource: held.lease.resource, leaseId: ` ${held.lease.leaseId}` })],
      ["trailing space in renew's lease id", () => store.renew({ resource: held.lease.resource, leaseId: `${held.lease.leaseId} `, ttlMs: 5_000 })],
      ["surrounding spaces in force-release actor", () => store.forceRelease({ resource: held.lease.resource, leaseId: held.lease.leaseId, actor: " oncall ", reason: "r" })],
    ];
    for (const [what, call] of refused) {
      const error = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, what).toBeInstanceOf(LeaseError);
    }
    expect((await allEvents()).length, "a refused call writes no event").toBe(eventsBefore);
    expect(await store.countActive()).toBe(activeBefore);
    expect(await store.get(held.lease.resource)).toMatchObject({ leaseId: held.lease.leaseId, renewals: 1 });
  });
}
