/**
 * Past state (`heldAt`) on both real stores: a scripted history whose every hold's
 * start and end are taken from the store's own replies (its clock), then the state at
 * chosen instants — inside the same millisecond as events, one millisecond either side,
 * while a lapsed lease is not swept yet, before the history, after it — compared with
 * what those replies say was held.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import pg from "pg";
import { setUpStoreFixture } from "@/test/support/store-suite";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { bucketOf, buildBucketKeys } from "./redis/keys";
import { PROJECT_BATCH } from "./redis/projector";
import { READ_CATCH_UP_ROUNDS } from "./redis/store";
import type { PostgresLeaseStore } from "./postgres/store";
import type { RedisLeaseStore } from "./redis/store";
import type { HeldAtResult, LeaseStore, PastHoldEnding, StoreKind } from "./types";

interface ScriptedHold {
  resource: string;
  leaseId: string;
  owner: string;
  task: string;
  fencingToken: string;
  startMs: number;
  /** End on the store's clock (release time, or the TTL's end for an expiry); null while held. */
  endMs: number | null;
  ending: PastHoldEnding;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const P = "past:";

/** Runs the script; returns every hold with its true bounds, from the store's replies. */
async function runScript(store: LeaseStore): Promise<{ holds: ScriptedHold[]; marks: Record<string, number> }> {
  const holds: ScriptedHold[] = [];
  const marks: Record<string, number> = {};
  const grant = async (resource: string, owner: string, task: string, ttlMs: number) => {
    const r = await store.acquire({ resource, owner, task, ttlMs });
    if (!r.acquired) throw new Error(`${resource} was not free`);
    const hold: ScriptedHold = {
      resource,
      leaseId: r.lease.leaseId,
      owner,
      task,
      fencingToken: r.lease.fencingToken,
      startMs: r.lease.acquiredAt.getTime(),
      endMs: null,
      ending: "held",
    };
    holds.push(hold);
    return { hold, expiresAt: r.lease.expiresAt.getTime() };
  };

  const a = await grant(`${P}r1`, "alice", "t-a", 60_000);
  const b = await grant(`${P}r2`, "bob", "t-b", 150);
  const c = await grant(`${P}r3`, "carol", "t-c", 60_000);
  await sleep(5);
  const renewed = await store.renew({ resource: `${P}r3`, leaseId: c.hold.leaseId, ttlMs: 60_000 });
  if (!renewed.renewed) throw new Error("renew failed");
  await sleep(20);
  // The next acquire right after the release: on Redis often the same millisecond. Not sent
  // together: a Postgres pool may run the acquire on another connection before the release.
  const released = await store.release({ resource: `${P}r1`, leaseId: a.hold.leaseId });
  const next = await store.acquire({ resource: `${P}r1`, owner: "dave", task: "t-d", ttlMs: 60_000 });
  if (!released.released) throw new Error("release failed");
  a.hold.endMs = released.event.at.getTime();
  a.hold.ending = "released";
  if (!next.acquired) throw new Error("dave did not get r1");
  holds.push({
    resource: `${P}r1`,
    leaseId: next.lease.leaseId,
    owner: "dave",
    task: "t-d",
    fencingToken: next.lease.fencingToken,
    startMs: next.lease.acquiredAt.getTime(),
    endMs: null,
    ending: "held",
  });
  await sleep(300);
  // bob's lease ran out at its TTL; sweep records it (the record comes later than the end).
  await store.sweep();
  b.hold.endMs = b.expiresAt;
  b.hold.ending = "expired";
  await grant(`${P}r2`, "erin", "t-e", 60_000);
  await sleep(10);
  const forced = await store.forceRelease({ resource: `${P}r3`, leaseId: c.hold.leaseId, actor: "oncall@example.com", reason: "stuck" });
  if (!forced.released) throw new Error("force release failed");
  c.hold.endMs = forced.event.at.getTime();
  c.hold.ending = "force_released";
  // frank's lease lapses and nobody sweeps it: still a row, ended at its TTL.
  const f = await grant(`${P}r4`, "frank", "t-f", 120);
  f.hold.endMs = f.expiresAt;
  f.hold.ending = "expired";
  await sleep(250);
  marks.fLapsed = f.expiresAt;
  return { holds, marks };
}

/** What the store's replies say was live at millisecond T. */
function expectedAt(holds: readonly ScriptedHold[], T: number) {
  return holds
    .filter((h) => h.startMs <= T && (h.endMs === null || h.endMs > T))
    .map((h) => ({
      resource: h.resource,
      leaseId: h.leaseId,
      owner: h.owner,
      task: h.task,
      fencingToken: h.fencingToken,
      acquiredAt: h.startMs,
      heldForMs: T - h.startMs,
      ending: h.ending,
      endedAt: h.endMs,
    }))
    .sort((x, y) => x.acquiredAt - y.acquiredAt || x.resource.localeCompare(y.resource));
}

function actualOf(result: HeldAtResult) {
  if (!result.covered) throw new Error(`not covered: ${result.reason}`);
  return result.items.map((i) => ({
    resource: i.resource,
    leaseId: i.leaseId,
    owner: i.owner,
    task: i.task,
    fencingToken: i.fencingToken,
    acquiredAt: i.acquiredAt.getTime(),
    heldForMs: i.heldForMs,
    ending: i.ending,
    endedAt: i.endedAt?.getTime() ?? null,
  }));
}

/** Ten instants (plus the ones each test adds): events' own milliseconds and their neighbours. */
function chosenInstants(holds: readonly ScriptedHold[]): number[] {
  const by = (owner: string) => holds.find((h) => h.owner === owner)!;
  const [alice, bob, carol, dave, frank] = ["alice", "bob", "carol", "dave", "frank"].map(by) as [ScriptedHold, ScriptedHold, ScriptedHold, ScriptedHold, ScriptedHold];
  return [
    alice.startMs, // the first event's own millisecond
    bob.startMs,
    alice.endMs! - 1,
    alice.endMs!, // release (and maybe dave's acquire) in this millisecond
    dave.startMs,
    bob.endMs! - 1, // last millisecond of bob's TTL
    bob.endMs!, // his TTL's end: no longer held, though the expiry was recorded later
    carol.endMs!, // force-released in this millisecond
    frank.startMs + 1, // frank's lapsed lease, not swept: held then, ending "expired"
    frank.endMs! + 5,
  ];
}

describe.each<StoreKind>(["postgres", "redis"])("heldAt on %s", (kind) => {
  let fx: StoreFixture;
  let holds: ScriptedHold[];

  beforeAll(async () => {
    fx = await createStoreFixture(kind);
    ({ holds } = await runScript(fx.store));
  }, 60_000);
  afterAll(async () => {
    await fx?.cleanup();
  });

  it("reproduces the scripted history exactly at ten chosen instants", async () => {
    const instants = chosenInstants(holds);
    expect(instants).toHaveLength(10);
    for (const T of instants) {
      const result = await fx.store.heldAt({ at: new Date(T), prefix: P });
      expect(actualOf(result), `at ${new Date(T).toISOString()}`).toEqual(expectedAt(holds, T));
      // Without a prefix (the store holds nothing else): the path that merges every bucket's leases.
      expect(actualOf(await fx.store.heldAt({ at: new Date(T) })), `at ${new Date(T).toISOString()}, no prefix`).toEqual(expectedAt(holds, T));
    }
    // Not vacuous: the instants cover every way a hold ends.
    const endings = new Set(instants.flatMap((T) => expectedAt(holds, T).map((h) => h.ending)));
    expect([...endings].sort()).toEqual(["expired", "force_released", "held", "released"]);
  });

  it("combines with owner, task and resource filters", async () => {
    const T = holds.find((h) => h.owner === "carol")!.endMs! - 1;
    const all = expectedAt(holds, T);
    expect(all.length).toBeGreaterThan(1);
    for (const h of all) {
      expect(actualOf(await fx.store.heldAt({ at: new Date(T), owner: h.owner }))).toEqual([h]);
      expect(actualOf(await fx.store.heldAt({ at: new Date(T), task: h.task, prefix: P }))).toEqual([h]);
      expect(actualOf(await fx.store.heldAt({ at: new Date(T), resource: h.resource }))).toEqual([h]);
    }
    const limited = await fx.store.heldAt({ at: new Date(T), prefix: P, limit: 1 });
    expect(actualOf(limited)).toEqual(all.slice(0, 1));
    expect(limited.covered && limited.hasMore).toBe(true);
  });

  it("explains an instant before the history and one after the store's clock", async () => {
    const first = Math.min(...holds.map((h) => h.startMs));
    const before = await fx.store.heldAt({ at: new Date(first - 1) });
    expect(before).toMatchObject({ covered: false, reason: "before_history", historyStartsAt: new Date(first) });
    const future = await fx.store.heldAt({ at: new Date(Date.now() + 3_600_000) });
    expect(future).toMatchObject({ covered: false, reason: "future" });
  });

  if (kind === "postgres") {
    it("answers the same from the hold-span read model (filled by the rollup refresh) as from raw events", async () => {
      const store = fx.store as PostgresLeaseStore;
      if (fx.spec.kind !== "postgres") throw new Error("postgres fixture expected");
      const s = `"${fx.spec.schema}"`;
      const db = new pg.Client({ connectionString: fx.spec.url });
      await db.connect();
      try {
        // The tests above read every ended hold from raw events: the cut of the refresh the
        // script's sweep ran lies a minute before the script.
        await store.refreshRollups();
        const terminal = await db.query(`SELECT count(*)::int AS n FROM ${s}.lease_events WHERE kind IN ('released', 'expired', 'force_released')`);
        expect((await db.query(`SELECT count(*)::int AS n FROM ${s}.lease_hold_spans`)).rows[0].n).toBe(terminal.rows[0].n);
        // As if the last refresh ran minutes from now: its cut lies past the whole script,
        // so every ended hold must now come from the read model, none from raw events.
        await db.query(`UPDATE ${s}.lease_rollup_state SET refreshed_at = clock_timestamp() + interval '3 minutes'`);
        for (const T of chosenInstants(holds)) {
          expect(actualOf(await store.heldAt({ at: new Date(T), prefix: P })), `at ${new Date(T).toISOString()}`).toEqual(expectedAt(holds, T));
        }
        const T = holds.find((h) => h.owner === "carol")!.endMs! - 1;
        for (const h of expectedAt(holds, T)) {
          expect(actualOf(await store.heldAt({ at: new Date(T), owner: h.owner }))).toEqual([h]);
          expect(actualOf(await store.heldAt({ at: new Date(T), task: h.task, prefix: P }))).toEqual([h]);
        }
      } finally {
        await db.end();
      }
    });
  }

  if (kind === "redis") {
    it("answers the same from the hold index as from the stream, and refuses what trimming removed", async () => {
      const store = fx.store as RedisLeaseStore;
      await store.projectHolds();
      for (const T of chosenInstants(holds)) {
        expect(actualOf(await store.heldAt({ at: new Date(T), prefix: P }))).toEqual(expectedAt(holds, T));
      }
      // Retention: trim every bucket's stream below carol's force-release.
      const carolEnd = holds.find((h) => h.owner === "carol")!.endMs!;
      const redis = new Redis(fx.spec.url);
      try {
        for (let b = 0; b < store.buckets; b++) {
          await redis.xtrim(buildBucketKeys(store.namespace, b).events, "MINID", String(carolEnd));
        }
      } finally {
        redis.disconnect();
      }
      await store.projectHolds();
      const trimmed = await store.heldAt({ at: new Date(carolEnd - 300) });
      expect(trimmed.covered).toBe(false);
      expect(trimmed).toMatchObject({ reason: "before_history" });
      if (!trimmed.covered) expect(trimmed.historyStartsAt!.getTime()).toBeGreaterThan(carolEnd - 300);
      // After the horizon the answer is still exact (frank's and dave's holds).
      const frank = holds.find((h) => h.owner === "frank")!;
      const after = await store.heldAt({ at: new Date(frank.startMs + 1), prefix: P });
      expect(actualOf(after)).toEqual(expectedAt(holds, frank.startMs + 1));
    });
  }
});

describe("heldAt on redis, ahead of the projection", () => {
  let fx: StoreFixture<"redis">;

  beforeEach(async () => {
    fx = await createStoreFixture("redis", { options: { buckets: 1 } });
  }, 60_000);
  afterEach(async () => {
    await fx?.cleanup();
  });

  /**
   * Acquire+release pairs outside P: more events than `reads` reads' catch-ups project, so
   * whatever is written after them stays unprojected through those reads.
   */
  async function writeBacklog(reads: number): Promise<void> {
    const pairs = (reads * READ_CATCH_UP_ROUNDS * PROJECT_BATCH) / 2 + 200;
    for (let done = 0; done < pairs; done += 100) {
      await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const r = await fx.store.acquire({ resource: `noise:${done + i}`, owner: "noise", task: "fill", ttlMs: 60_000 });
          if (!r.acquired) throw new Error("noise resource was not free");
          await fx.store.release({ resource: r.lease.resource, leaseId: r.lease.leaseId });
        }),
      );
    }
  }

  async function grant(resource: string, owner = "o", task = "t") {
    const r = await fx.store.acquire({ resource, owner, task, ttlMs: 60_000 });
    if (!r.acquired) throw new Error(`${resource} was not free`);
    return r.lease;
  }

  const heldAt = async (q: Parameters<LeaseStore["heldAt"]>[0]) => {
    const result = await fx.store.heldAt(q);
    if (!result.covered) throw new Error(`not covered: ${result.reason}`);
    return result.items.map((h) => [h.leaseId, h.ending]);
  };

  it("lists a current lease whose acquire is after what a read's catch-up projects", async () => {
    // Its acquire stays unprojected through the four reads below, so the listing zsets do not
    // have it; only the stream does.
    await writeBacklog(4);
    const late = await grant(`${P}late`, "late-owner", "late-task");
    const at = new Date(late.acquiredAt.getTime());
    await sleep(5);
    expect(await heldAt({ at }), "no filter").toContainEqual([late.leaseId, "held"]);
    expect(await heldAt({ at, prefix: P }), "by prefix").toEqual([[late.leaseId, "held"]]);
    expect(await heldAt({ at, owner: "late-owner" }), "by owner").toEqual([[late.leaseId, "held"]]);
    expect(await heldAt({ at, resource: `${P}late` }), "by resource").toEqual([[late.leaseId, "held"]]);
    // The projection had not reached it for any of these reads.
    expect((await fx.store.projectionLag()).lagMs).toBeGreaterThan(0);
    // Once ended, it is the same hold, now ending "released".
    await fx.store.release({ resource: late.resource, leaseId: late.leaseId });
    expect(await heldAt({ at, prefix: P })).toEqual([[late.leaseId, "released"]]);
  }, 120_000);

  it("reads past a resource taken again since its listing was projected", async () => {
    // a then b, both listed; after the instant, a changes hands behind a backlog, so the listing
    // still has a at its first grant while its lease hash holds a grant made after the instant.
    const first = await grant(`${P}a`);
    await sleep(2);
    const b = await grant(`${P}b`);
    await fx.store.projectHolds();
    const at = new Date(b.acquiredAt.getTime());
    await sleep(5);
    // Two catch-ups: heldAt's own, and the listing's it reads a prefix through.
    await writeBacklog(2);
    await fx.store.release({ resource: first.resource, leaseId: first.leaseId });
    const again = await grant(`${P}a`);
    expect(again.acquiredAt.getTime()).toBeGreaterThan(at.getTime());
    expect(await heldAt({ at, prefix: P })).toEqual([
      [first.leaseId, "released"],
      [b.leaseId, "held"],
    ]);
  }, 120_000);
});

describe("heldAt on redis, across buckets", () => {
  const fx = setUpStoreFixture("redis", { options: { buckets: 2 }, hookTimeoutMs: 60_000 });

  it("keeps two holds whose ends have the same stream id in different buckets", async () => {
    // Two resources in different buckets (each bucket has its own stream and its own ids).
    const names = Array.from({ length: 20 }, (_, i) => `${P}pair:${i}`);
    const first = names.find((r) => bucketOf(r, 2) === 0)!;
    const second = names.find((r) => bucketOf(r, 2) === 1)!;
    const leases = [];
    for (const resource of [first, second]) {
      const r = await fx.store.acquire({ resource, owner: "o", task: "t", ttlMs: 2_000 });
      if (!r.acquired) throw new Error(`${resource} was not free`);
      leases.push(r.lease);
    }
    const at = new Date(leases[1]!.acquiredAt.getTime());
    if (leases[0]!.expiresAt.getTime() <= at.getTime()) throw new Error("the two grants were too far apart to overlap");
    await fx.store.projectHolds();
    // Both streams' last id a minute ahead, as after a clock step back (or, by chance, two
    // buckets' events in one millisecond): the next event in each is <that ms>-1, in both.
    // An expiry's hold is placed by its lease's grant and TTL, not by its event's id.
    const redis = new Redis(fx.spec.url);
    try {
      const ahead = `${Date.now() + 60_000}-0`;
      for (let b = 0; b < 2; b++) await redis.xsetid(buildBucketKeys(fx.spec.namespace, b).events, ahead);
      await sleep(Math.max(0, ...leases.map((l) => l.expiresAt.getTime() - Date.now())) + 50);
      expect((await fx.store.sweep()).expired).toBe(2);
      const ids = [];
      for (let b = 0; b < 2; b++) ids.push((await redis.xrevrange(buildBucketKeys(fx.spec.namespace, b).events, "+", "-", "COUNT", 1))[0]![0]);
      expect(ids[0], "the two ends share a stream id").toBe(ids[1]);
    } finally {
      redis.disconnect();
    }
    for (const read of [() => fx.store.heldAt({ at, prefix: P }), () => fx.store.heldAt({ at })]) {
      const result = await read();
      if (!result.covered) throw new Error(`not covered: ${result.reason}`);
      expect(result.items.map((h) => [h.resource, h.ending, h.endedAt?.getTime()]).sort()).toEqual(
        leases.map((l) => [l.resource, "expired", l.expiresAt.getTime()]).sort(),
      );
    }
  }, 60_000);
});

describe("heldAt on redis, past its read budget", () => {
  const fx = setUpStoreFixture("redis", { options: { buckets: 2 }, hookTimeoutMs: 60_000 });

  it("says a prefix read that stopped at the budget is partial, and lists only real holders", async () => {
    // Many holders under the prefix, then the few the read asks for (by owner), listed last.
    const prefix = `${P}budget:`;
    for (let i = 0; i < 300; i++) await fx.store.acquire({ resource: `${prefix}common:${i}`, owner: "common", task: "t", ttlMs: 60_000 });
    const rare: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await fx.store.acquire({ resource: `${prefix}rare:${i}`, owner: "rare", task: "t", ttlMs: 60_000 });
      if (!r.acquired) throw new Error("a fresh resource was not free");
      rare.push(r.lease.leaseId);
    }
    await fx.store.project();
    // An instant just past (the store refuses one at or after its own clock's millisecond as "future").
    await sleep(5);
    const at = new Date(Date.now() - 2);

    const whole = await fx.store.heldAt({ at, prefix, owner: "rare" });
    if (!whole.covered) throw new Error(`not covered: ${whole.reason}`);
    expect(whole.partial).toBeUndefined();
    expect(whole.items.map((h) => h.leaseId).sort()).toEqual([...rare].sort());

    const small = fx.open({ name: "redis-small-budget", options: { buckets: 2, readKeyBudget: 100 } });
    try {
      const cut = await small.heldAt({ at, prefix, owner: "rare" });
      if (!cut.covered) throw new Error(`not covered: ${cut.reason}`);
      expect(cut.partial).toEqual({ reason: "read_budget", examined: expect.any(Number) });
      expect(cut.items.length).toBeLessThan(rare.length);
      expect(cut.items.every((h) => rare.includes(h.leaseId))).toBe(true);
      // Without the owner filter the first 50 holders are found well inside the budget: complete.
      const first = await small.heldAt({ at, prefix, limit: 50 });
      if (!first.covered) throw new Error(`not covered: ${first.reason}`);
      expect(first.partial).toBeUndefined();
      expect(first.items).toHaveLength(50);
    } finally {
      await small.close();
    }
  }, 60_000);
});
