import { randomInt } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scopeOf, SCOPE_ALL } from "@/lib/auth/scope";
import { createRandom, freshPgSchema, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { migrateObservedHistory, pruneObservedHistory, recordSample, type ObservedLock } from "@/lib/observed/observer";
import { advisorySource } from "@/lib/observed/sources";
import { findObservedLock, getObservedAt, getObservedLock, getObservedOverview, listObservedEvents, parseObservedLockRoute } from "@/lib/console/shared/observed-history";
import { observedLockHref } from "@/lib/console/shared/links";

const history = freshPgSchema();
const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 3 });
pool.on("error", () => {});
const env = {
  LEASEWATCH_OBSERVED: JSON.stringify([
    { name: "adv", kind: "pg-advisory", url: TEST_DATABASE_URL },
    { name: "keys", kind: "redis-keys", url: "redis://127.0.0.1:6379", patterns: ["locks:*"] },
  ]),
  LEASEWATCH_OBSERVE_INTERVAL_MS: "1000",
} as unknown as NodeJS.ProcessEnv;
const read = { env, pool, schema: history.schema };

/** Samples at fixed instants, so what was held when is known exactly. */
const T0 = new Date("2026-11-20T10:00:00Z");
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
let token = 0;
const sample = (store: string, seconds: number, locks: ObservedLock[]) =>
  recordSample(pool, history.schema, { store, fencingToken: String(++token), complete: true, locks, at: at(seconds) });

beforeAll(async () => {
  await migrateObservedHistory(pool, history.schema);
  await sample("adv", 0, [{ resource: "tenant_1:billing", holder: "pid 10 · billing", waiters: 0 }]);
  await sample("adv", 10, [
    { resource: "tenant_1:billing", holder: "pid 10 · billing", waiters: 2 },
    { resource: "tenant_2:reports", holder: "pid 11 · reports", waiters: 0 },
  ]);
  await sample("adv", 20, [
    { resource: "tenant_1:billing", holder: "pid 12 · billing", waiters: 0 },
    { resource: "tenant_2:reports", holder: "pid 11 · reports", waiters: 0 },
  ]);
  await sample("adv", 30, [{ resource: "tenant_1:billing", holder: "pid 12 · billing", waiters: 0 }]);
  await sample("keys", 5, [{ resource: "locks:tenant_1:export", holder: "a1b2", waiters: 0 }]);
});

afterAll(async () => {
  await history.drop();
  await pool.end();
});

describe("observed events in /events", () => {
  it("lists the recorded changes newest first, filtered by observed store, prefix and window", async () => {
    const all = await listObservedEvents({ limit: 50 }, { scope: SCOPE_ALL, ...read });
    expect(all!.storeNames).toEqual(["adv", "keys"]);
    expect(all!.items.map((e) => [e.store, e.resource, e.kind])).toEqual([
      ["adv", "tenant_2:reports", "gone"],
      ["adv", "tenant_1:billing", "holder_changed"],
      // One sample's changes share its instant; the later-written comes first.
      ["adv", "tenant_2:reports", "appeared"],
      ["adv", "tenant_1:billing", "waiters_changed"],
      ["keys", "locks:tenant_1:export", "appeared"],
      ["adv", "tenant_1:billing", "appeared"],
    ]);
    expect(all!.items[1]).toMatchObject({ holder: "pid 12 · billing", previousHolder: "pid 10 · billing", href: observedLockHref("adv", "tenant_1:billing") });

    const keys = await listObservedEvents({ store: "keys", limit: 50 }, { scope: SCOPE_ALL, ...read });
    expect(keys!.items.map((e) => e.resource)).toEqual(["locks:tenant_1:export"]);
    const windowed = await listObservedEvents({ prefix: "tenant_1:", from: at(10), to: at(25), limit: 50 }, { scope: SCOPE_ALL, ...read });
    expect(windowed!.items.map((e) => e.kind)).toEqual(["holder_changed", "waiters_changed"]);
    const leaseStore = await listObservedEvents({ store: "postgres", limit: 50 }, { scope: SCOPE_ALL, ...read });
    expect(leaseStore!.items).toEqual([]);
  });

  it("reads one page more than it shows to say there are more, and skips filters only lease events have", async () => {
    const page = await listObservedEvents({ limit: 2 }, { scope: SCOPE_ALL, ...read });
    expect(page!.items).toHaveLength(2);
    expect(page!.hasMore).toBe(true);
    const byOwner = await listObservedEvents({ limit: 50, leaseOnly: ["owner"] }, { scope: SCOPE_ALL, ...read });
    expect(byOwner).toMatchObject({ items: [], skipped: "observed events have no owner" });
  });

  it("a scoped viewer reads only names under their prefixes", async () => {
    const scoped = await listObservedEvents({ limit: 50 }, { scope: scopeOf(["tenant_2:"]), ...read });
    expect(scoped!.items.map((e) => e.resource)).toEqual(["tenant_2:reports", "tenant_2:reports"]);
  });

  it("says nothing at all when no observed store is configured", async () => {
    expect(await listObservedEvents({ limit: 50 }, { scope: SCOPE_ALL, env: {} as NodeJS.ProcessEnv, pool, schema: history.schema })).toBeNull();
  });
});

describe("the jump box finds an observed lock by its exact name", () => {
  it("goes to the store holding it, or to its recorded history, and not outside the scope", async () => {
    expect(await findObservedLock("tenant_1:billing", { scope: SCOPE_ALL, ...read })).toEqual({
      store: "adv",
      resource: "tenant_1:billing",
      isHeld: true,
      href: "/observed/adv/tenant_1%3Abilling",
    });
    expect(await findObservedLock("tenant_2:reports", { scope: SCOPE_ALL, ...read })).toMatchObject({ store: "adv", isHeld: false });
    expect(await findObservedLock("tenant_1:billing", { scope: scopeOf(["tenant_2:"]), ...read })).toBeNull();
    expect(await findObservedLock("tenant_1:nothing", { scope: SCOPE_ALL, ...read })).toBeNull();
  });

  it("its page path decodes back to the same store and name", () => {
    for (const name of ["tenant_1:billing", "a/b/c", "../x", "advisory:1,2", "a//b"]) {
      const [, , store, ...resource] = observedLockHref("adv", name).split("/");
      expect(parseObservedLockRoute({ store: store!, resource })).toEqual({ store: "adv", resource: name });
    }
  });
});

describe("?at=: observed locks held at an instant, rebuilt from the recorded changes", () => {
  it("answers for instants between samples, and says when the record cannot", async () => {
    const names = async (seconds: number) => (await getObservedAt(at(seconds), { scope: SCOPE_ALL, ...read, nowMs: at(60).getTime() })).stores.find((s) => s.name === "adv")!;
    expect((await names(15)).locks.map((l) => [l.resource, l.holder, l.waiters, l.since])).toEqual([
      ["tenant_1:billing", "pid 10 · billing", 2, at(0).toISOString()],
      ["tenant_2:reports", "pid 11 · reports", 0, at(10).toISOString()],
    ]);
    expect((await names(25)).locks.map((l) => [l.resource, l.holder, l.since])).toEqual([
      ["tenant_1:billing", "pid 12 · billing", at(20).toISOString()],
      ["tenant_2:reports", "pid 11 · reports", at(10).toISOString()],
    ]);
    expect((await names(35)).locks.map((l) => l.resource)).toEqual(["tenant_1:billing"]);
    expect(await names(-5)).toMatchObject({ locks: [], gap: `the observer's record of this store starts at ${T0.toISOString()}` });
    expect((await getObservedAt(at(120), { scope: SCOPE_ALL, ...read, nowMs: at(60).getTime() })).stores[0]!.gap).toBe("this instant is in the future");
  });

  it("a scoped viewer sees only their names at the instant", async () => {
    const view = await getObservedAt(at(15), { scope: scopeOf(["tenant_2:"]), ...read, nowMs: at(60).getTime() });
    expect(view.stores.find((s) => s.name === "adv")!.locks.map((l) => l.resource)).toEqual(["tenant_2:reports"]);
    expect(view.stores.find((s) => s.name === "keys")!.locks).toEqual([]);
  });

  it("the overview's observed section counts what was held at the instant", async () => {
    const overview = await getObservedOverview({ scope: SCOPE_ALL, ...read, at: at(15), nowMs: at(60).getTime() });
    expect(overview!.at).toBe(at(15).toISOString());
    expect(overview!.stores.find((s) => s.name === "adv")).toMatchObject({ held: 2, waiters: 2, oldestHoldSeconds: 15, oldestBlockingHoldSeconds: 15, partial: false });
    const now = await getObservedOverview({ scope: SCOPE_ALL, ...read });
    expect(now!.stores.map((s) => [s.name, s.held, s.href])).toEqual([
      ["adv", 1, "/observed#observed-adv"],
      ["keys", 1, "/observed#observed-keys"],
    ]);
  });
});

describe("?at= from checkpoints: a full copy of the locks now and then, and the changes since", () => {
  it("rebuilds every instant exactly as sampled, and still does after history before a checkpoint is dropped", async () => {
    const own = freshPgSchema();
    const ownRead = { env: { ...env, LEASEWATCH_OBSERVED: JSON.stringify([{ name: "adv", kind: "pg-advisory", url: TEST_DATABASE_URL }]) }, pool, schema: own.schema };
    const seed = randomInt(2 ** 31);
    const random = createRandom(seed);
    try {
      await migrateObservedHistory(pool, own.schema);
      // 60 samples a second apart over 8 names; a checkpoint every 15 s.
      const sampled: ObservedLock[][] = [];
      for (let second = 0; second < 60; second++) {
        const locks = Array.from({ length: 8 }, (_, i) => ({ resource: `job:${i}`, holder: `pid ${Math.floor(random() * 3)}`, waiters: Math.floor(random() * 2) })).filter(() => random() < 0.6);
        sampled.push(locks);
        await recordSample(pool, own.schema, { store: "adv", fencingToken: String(second + 1), complete: true, locks, at: at(second), checkpointEveryMs: 15_000 });
      }
      const heldAt = async (seconds: number) => {
        const store = (await getObservedAt(at(seconds), { scope: SCOPE_ALL, ...ownRead, nowMs: at(120).getTime() })).stores[0]!;
        return { gap: store.gap, locks: store.locks.map((l) => [l.resource, l.holder, l.waiters]) };
      };
      const expected = (seconds: number) => sampled[Math.min(59, Math.floor(seconds))]!.map((l) => [l.resource, l.holder, l.waiters]);
      const instants = [0, 0.5, 7, 14.9, 15, 15.2, 29, 30, 44.5, 45, 59, 90];
      for (const t of instants) expect(await heldAt(t), `seed ${seed}, t=${t}`).toEqual({ gap: null, locks: expected(t) });

      const dropped = await pruneObservedHistory(pool, own.schema, { store: "adv", before: at(40) });
      expect(dropped.events).toBeGreaterThan(0);
      expect(dropped.checkpoints).toBe(2);
      for (const t of instants.filter((i) => i >= 30)) expect(await heldAt(t), `seed ${seed}, t=${t} after pruning`).toEqual({ gap: null, locks: expected(t) });
      expect((await heldAt(29)).gap).toBe(`the observer's record of this store starts at ${at(30).toISOString()}`);
    } finally {
      await own.drop();
    }
  });
});

describe("one observed lock's page", () => {
  it("shows the holder, since when it was first seen, and the timeline newest first", async () => {
    const page = await getObservedLock({ store: "adv", resource: "tenant_1:billing" }, { scope: SCOPE_ALL, ...read });
    expect(page!.current).toMatchObject({ holder: "pid 12 · billing", waiters: 0, since: at(20).toISOString() });
    expect(page!.timeline.map((e) => e.kind)).toEqual(["holder_changed", "waiters_changed", "appeared"]);
    const gone = await getObservedLock({ store: "adv", resource: "tenant_2:reports" }, { scope: SCOPE_ALL, ...read });
    expect(gone!.current).toBeNull();
    expect(gone!.timeline.map((e) => e.kind)).toEqual(["gone", "appeared"]);
    expect(await getObservedLock({ store: "adv", resource: "tenant_2:reports" }, { scope: scopeOf(["tenant_1:"]), ...read })).toBeNull();
    expect(await getObservedLock({ store: "nope", resource: "tenant_2:reports" }, { scope: SCOPE_ALL, ...read })).toBeNull();
  });

  it("follows a wait chain of real sessions: C waits for B's key, whose holder waits for A's", async () => {
    const sessions: pg.Client[] = [];
    const session = async (name: string) => {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL, application_name: name });
      client.on("error", () => {});
      await client.connect();
      sessions.push(client);
      return { client, pid: (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid };
    };
    try {
      const [ka, kb] = [String(randomInt(1, 2 ** 47)), String(randomInt(1, 2 ** 47))];
      const [a, b, c] = [await session("chain-a"), await session("chain-b"), await session("chain-c")];
      await a.client.query("SELECT pg_advisory_lock($1::bigint)", [ka]);
      await b.client.query("SELECT pg_advisory_lock($1::bigint)", [kb]);
      void b.client.query("SELECT pg_advisory_lock($1::bigint)", [ka]).catch(() => {});
      void c.client.query("SELECT pg_advisory_lock($1::bigint)", [kb]).catch(() => {});
      const source = advisorySource("adv", pool);
      const mine = (l: ObservedLock) => l.resource === `advisory:${ka}` || l.resource === `advisory:${kb}`;
      let locks: ObservedLock[] = [];
      // Lock requests reach pg_locks asynchronously: sample until both waits show.
      for (let i = 0; i < 100 && locks.filter((l) => l.waiters === 1).length < 2; i++) {
        locks = (await source.sample()).locks.filter(mine);
        if (locks.filter((l) => l.waiters === 1).length < 2) await new Promise((r) => setTimeout(r, 50));
      }
      await recordSample(pool, history.schema, { store: "adv", fencingToken: String(++token), complete: true, locks: [...locks, { resource: "tenant_1:billing", holder: "pid 12 · billing", waiters: 0 }] });

      const page = await getObservedLock({ store: "adv", resource: `advisory:${kb}` }, { scope: SCOPE_ALL, ...read });
      expect(page!.current).toMatchObject({ holder: `pid ${b.pid} · chain-b`, waiters: 1 });
      expect(page!.waitChain).toEqual({
        holderWaitsFor: [{ resource: `advisory:${ka}`, holder: `pid ${a.pid} · chain-a`, waiters: 1, href: observedLockHref("adv", `advisory:${ka}`) }],
        waitersHold: [],
        waiterPids: [c.pid],
      });
      const top = await getObservedLock({ store: "adv", resource: `advisory:${ka}` }, { scope: SCOPE_ALL, ...read });
      expect(top!.waitChain).toMatchObject({ holderWaitsFor: [], waiterPids: [b.pid], waitersHold: [{ pid: b.pid, resource: `advisory:${kb}`, waiters: 1 }] });
    } finally {
      await Promise.all(sessions.map((s) => s.end().catch(() => {})));
    }
  });
});
