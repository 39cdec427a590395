import { randomInt } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPgSchema, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { diffSamples, migrateObservedHistory, Observer, readObservedEvents, recordSample, type ObservedLock, type ObservedSource } from "./observer";
import { advisorySource } from "./sources";

const history = freshPgSchema();
const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 6 });
pool.on("error", () => {});
let leases: StoreFixture;

beforeAll(async () => {
  await migrateObservedHistory(pool, history.schema);
  leases = await createStoreFixture("postgres");
});

afterAll(async () => {
  await leases.cleanup();
  await history.drop();
  await pool.end();
});

/** A source whose locks the test sets: the observer's bookkeeping without a real lock system under it. */
function scriptedSource(name: string): ObservedSource & { locks: ObservedLock[] } {
  const source = {
    name,
    kind: "redis-keys" as const,
    locks: [] as ObservedLock[],
    sample: async () => ({ locks: source.locks, complete: true }),
  };
  return source;
}

const storeName = () => `observed-${randomInt(1e9)}`;

describe("diffSamples", () => {
  it("names each change once: appeared, holder changed, waiters changed, gone", () => {
    const before: ObservedLock[] = [
      { resource: "a", holder: "h1", waiters: 0 },
      { resource: "b", holder: "h2", waiters: 0 },
      { resource: "c", holder: "h3", waiters: 1 },
    ];
    const after: ObservedLock[] = [
      { resource: "b", holder: "h9", waiters: 0 },
      { resource: "c", holder: "h3", waiters: 2 },
      { resource: "d", holder: "h4", waiters: 0 },
    ];
    expect(diffSamples(before, after).map((c) => [c.resource, c.kind])).toEqual([
      ["b", "holder_changed"],
      ["c", "waiters_changed"],
      ["d", "appeared"],
      ["a", "gone"],
    ]);
    expect(diffSamples(after, after)).toEqual([]);
  });
});

describe("recordSample: fenced, diffed against what was recorded", () => {
  it("refuses a sample with an older token and records nothing for it", async () => {
    const store = storeName();
    expect(await recordSample(pool, history.schema, { store, fencingToken: "5", locks: [{ resource: "x", holder: "h", waiters: 0 }], complete: true })).toEqual({ accepted: true, events: 1 });
    expect(await recordSample(pool, history.schema, { store, fencingToken: "4", locks: [], complete: true })).toEqual({ accepted: false, events: 0 });
    expect((await readObservedEvents(pool, history.schema, { store })).map((e) => e.kind)).toEqual(["appeared"]);
  });

  it("a cut-short read never records a lock as gone", async () => {
    const store = storeName();
    await recordSample(pool, history.schema, { store, fencingToken: "1", locks: [{ resource: "x", holder: "h", waiters: 0 }, { resource: "y", holder: "h", waiters: 0 }], complete: true });
    await recordSample(pool, history.schema, { store, fencingToken: "1", locks: [{ resource: "x", holder: "h", waiters: 0 }], complete: false });
    expect((await readObservedEvents(pool, history.schema, { store })).map((e) => `${e.resource}:${e.kind}`)).toEqual(["x:appeared", "y:appeared"]);
  });
});

describe("Observer: one replica samples each store, failover neither doubles nor loses history", () => {
  it("two replicas: only the lease holder records; after it stops the other takes over and records each change once", async () => {
    const source = scriptedSource(storeName());
    const make = (owner: string) => new Observer({ source, history: pool, schema: history.schema, leases: leases.store, owner, intervalMs: 1_000 });
    const a = make("replica-a");
    const b = make("replica-b");
    source.locks = [{ resource: "job:1", holder: "w1", waiters: 0 }];
    expect(await a.tick()).toEqual({ accepted: true, events: 1 });
    expect(await b.tick()).toBeNull(); // b does not hold the observer lease
    expect(await a.tick()).toEqual({ accepted: true, events: 0 });

    await a.stop(); // releases its lease: b takes over on its next round
    source.locks = [{ resource: "job:1", holder: "w2", waiters: 0 }, { resource: "job:2", holder: "w3", waiters: 0 }];
    expect(await b.tick()).toEqual({ accepted: true, events: 2 });
    expect(await b.tick()).toEqual({ accepted: true, events: 0 });
    const events = await readObservedEvents(pool, history.schema, { store: source.name });
    expect(events.map((e) => `${e.resource}:${e.kind}:${e.holder}`)).toEqual(["job:1:appeared:w1", "job:1:holder_changed:w2", "job:2:appeared:w3"]);
    await b.stop();
  });

  it("a replica that lost its lease while paused is refused by the token when its sample lands late", async () => {
    const source = scriptedSource(storeName());
    const stale = new Observer({ source, history: pool, schema: history.schema, leases: leases.store, owner: "paused", intervalMs: 200 });
    source.locks = [{ resource: "job:1", holder: "w1", waiters: 0 }];
    await stale.tick();
    const staleToken = (await leases.store.get(stale.resource))!.fencingToken;
    // The paused replica's lease lapses (ttl 600 ms) and another takes the store over.
    await new Promise((r) => setTimeout(r, 900));
    const fresh = new Observer({ source, history: pool, schema: history.schema, leases: leases.store, owner: "fresh", intervalMs: 200 });
    source.locks = [];
    expect(await fresh.tick()).toEqual({ accepted: true, events: 1 });
    // The stale replica's sample, written with its old token, changes nothing.
    const late = await recordSample(pool, history.schema, { store: source.name, fencingToken: String(staleToken), locks: [{ resource: "job:9", holder: "ghost", waiters: 0 }], complete: true });
    expect(late.accepted).toBe(false);
    expect((await readObservedEvents(pool, history.schema, { store: source.name })).map((e) => `${e.resource}:${e.kind}`)).toEqual(["job:1:appeared", "job:1:gone"]);
    await fresh.stop();
    await stale.stop();
  });

  it("records a real advisory lock taken by hand, with its pid and application name, and its waiter", async () => {
    const key = String(randomInt(1, 2 ** 47));
    const holder = new pg.Client({ connectionString: TEST_DATABASE_URL, application_name: "psql-by-hand" });
    const waiter = new pg.Client({ connectionString: TEST_DATABASE_URL, application_name: "psql-waiting" });
    holder.on("error", () => {});
    waiter.on("error", () => {});
    await holder.connect();
    await waiter.connect();
    const name = storeName();
    const observer = new Observer({ source: advisorySource(name, pool), history: pool, schema: history.schema, leases: leases.store, owner: "replica", intervalMs: 1_000 });
    try {
      const pid = (await holder.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      await holder.query("SELECT pg_advisory_lock($1::bigint)", [key]);
      await observer.tick();
      void waiter.query("SELECT pg_advisory_lock($1::bigint)", [key]).catch(() => {});
      let events: Awaited<ReturnType<typeof readObservedEvents>> = [];
      for (let i = 0; i < 50 && !events.some((e) => e.kind === "waiters_changed"); i++) {
        await new Promise((r) => setTimeout(r, 100));
        await observer.tick();
        events = await readObservedEvents(pool, history.schema, { store: name, resource: `advisory:${key}` });
      }
      expect(events[0]).toMatchObject({ kind: "appeared", holder: `pid ${pid} · psql-by-hand`, waiters: 0 });
      expect(events.find((e) => e.kind === "waiters_changed")).toMatchObject({ waiters: 1 });
    } finally {
      await observer.stop();
      await holder.end();
      await waiter.end();
    }
  });
});
