import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AcquireTimeoutError,
  fencedWrite,
  LeaseClient,
  LeaseError,
  LeaseLostError,
  type LeaseStore,
  readFencedHistory,
  RedisLeaseStore,
  type StoreKind,
} from "@leasewatch/lease";
import { createRandom, sleep, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { findRepeatedEnds, findStaleWrites, findTokenOrderViolations, holdsOnRecord } from "@/test/support/history-checks";
import { startPostgres, startRedis, stopAllServers, type ThrowawayServer } from "@/test/support/servers";
import { checkConservation, collectEvents, countKinds, createFencedDownstream, createStoreFixture, type FencedDownstream, type StoreFixture } from "@/test/support/stores";
import { startTcpProxy } from "@/test/support/tcp-proxy";

/**
 * Randomised interleavings: several clients in one process take short leases on
 * a couple of resources, pause at random between every step (sometimes freezing
 * the whole process, like a long GC), write to a fenced downstream, and now and
 * then ignore their abort signal; meanwhile the store itself stalls at random
 * (Redis: CLIENT PAUSE; Postgres: SIGSTOP of the whole server), and on Redis half the
 * clients talk through a proxy that now and then throws a reply away, cuts the connection and
 * holds the reconnect back, so calls are sent again after their first run. Between rounds the
 * server restarts now and then (Redis without persistence: every key is lost), and a resource
 * taken once per round must get a higher token each time. Both stores are throwaway servers, so
 * stalling and restarting them disturbs no other test.
 *
 * After every round, from the store's own events and the downstream's history:
 * tokens strictly increase per resource in acquisition order; no stale write is
 * accepted that the fence could have refused; every hold ended exactly once;
 * conservation; and no fn ran on past its local deadline with its signal not aborted.
 *
 * Seeded: LW_INTERLEAVING_SEED=<n> replays a failing run (the seed is in every
 * failure message); LW_INTERLEAVING_MS sets the time budget per store.
 */
const BASE_SEED = Number(process.env.LW_INTERLEAVING_SEED ?? Math.floor(Math.random() * 1_000_000_000));
// 30 s per store: a minute of interleavings in every `npm test`.
const BUDGET_MS = Number(process.env.LW_INTERLEAVING_MS ?? 30_000);
const CLIENTS = 8;
const RESOURCES = 4;
const ROUND_MS = 3_000;
const MAX_TTL_MS = 900;
/**
 * The signal is aborted by a timer, so code that runs on without yielding (or
 * while the whole process is frozen, or starved of CPU) can be past the deadline
 * before the abort: that is what remainingMs() is for, and why withLease never
 * reports success past the deadline. What is checked here: a fn that finds itself
 * past its deadline and then yields to the timers sees its signal aborted.
 */

/** Freezes the whole process, timers and all. */
const freeze = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

interface StoreUnderTest {
  server: ThrowawayServer;
  fixture: StoreFixture;
  /** Stalls the store for `ms` (every connection hangs, none is refused). */
  stall(ms: number): Promise<void>;
  /** Redis: a store on the same namespace whose connection goes through a proxy that drops replies. */
  dropping?: { store: LeaseStore; dropNextReply(reconnectDelayMs: number): Promise<void> };
  close(): Promise<void>;
}

async function startStoreUnderTest(kind: StoreKind): Promise<StoreUnderTest> {
  if (kind === "redis") {
    const server = await startRedis();
    const fixture = await createStoreFixture("redis", { url: server.url });
    const admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
    admin.on("error", () => undefined);
    const proxy = await startTcpProxy({ port: server.port });
    const proxied = new RedisLeaseStore({ name: fixture.store.name, url: proxy.url, namespace: (fixture.store as RedisLeaseStore).namespace });
    return {
      server,
      fixture,
      stall: async (ms) => {
        await admin.call("CLIENT", "PAUSE", String(ms), "ALL");
      },
      dropping: { store: proxied, dropNextReply: (reconnectDelayMs) => proxy.dropNextReply({ reconnectDelayMs }) },
      close: async () => {
        admin.disconnect();
        await proxied.close();
        await proxy.close();
        await fixture.cleanup();
      },
    };
  }
  const server = await startPostgres();
  const fixture = await createStoreFixture("postgres", { url: server.url });
  return {
    server,
    fixture,
    stall: async (ms) => {
      server.pause();
      try {
        await sleep(ms);
      } finally {
        server.resume();
      }
    },
    close: () => fixture.cleanup(),
  };
}

/** Waits until every store answers again after a server restart (their clients reconnect on their own). */
async function untilServing(stores: LeaseStore[]): Promise<void> {
  const giveUpAt = performance.now() + 20_000;
  for (const store of stores) {
    for (;;) {
      try {
        await store.get("carried");
        break;
      } catch (error) {
        if (performance.now() > giveUpAt) throw error;
        await sleep(100);
      }
    }
  }
}

interface RoundRecord {
  deadlineViolations: string[];
  unexpectedErrors: string[];
  /** unavailable: a call sent again after a lost reply lost its reply too (only where replies are dropped). */
  outcomes: Record<"ok" | "lost" | "timeout" | "unavailable", number>;
  writes: { accepted: number; refused: number };
  zombieWrites: number;
  pastDeadlineYields: number;
  stalls: number;
  freezes: number;
  droppedReplies: number;
}

async function runRound(options: { stores: LeaseStore[]; under: StoreUnderTest; pool: pg.Pool; table: string; prefix: string; seed: number }): Promise<RoundRecord> {
  const { stores, under, pool, table, prefix, seed } = options;
  const random = createRandom(seed);
  const between = (min: number, max: number) => min + Math.floor(random() * (max - min));
  const record: RoundRecord = { deadlineViolations: [], unexpectedErrors: [], outcomes: { ok: 0, lost: 0, timeout: 0, unavailable: 0 }, writes: { accepted: 0, refused: 0 }, zombieWrites: 0, pastDeadlineYields: 0, stalls: 0, freezes: 0, droppedReplies: 0 };
  const resources = Array.from({ length: RESOURCES }, (_, i) => `${prefix}:res${i}`);
  const endsAt = performance.now() + ROUND_MS;

  const staller = (async () => {
    while (performance.now() < endsAt) {
      await sleep(between(150, 600));
      if (performance.now() >= endsAt) break;
      record.stalls += 1;
      await under.stall(between(30, 350));
    }
  })();

  const dropping = under.dropping;
  const dropper = (async () => {
    if (!dropping) return;
    while (performance.now() < endsAt) {
      await sleep(between(100, 500));
      // Armed until a reply comes through; a round that ends first leaves it armed for the next.
      // Held back up to 600 ms: longer than the shortest TTL, so a grant can lapse before its resend.
      const dropped = dropping.dropNextReply(between(0, 600)).then(() => {
        record.droppedReplies += 1;
      });
      await Promise.race([dropped, sleep(Math.max(0, endsAt - performance.now()))]);
    }
  })();

  const clientLoop = async (n: number) => {
    const clientRandom = createRandom(seed * 31 + n);
    const pick = (min: number, max: number) => min + Math.floor(clientRandom() * (max - min));
    const store = stores[n % stores.length]!;
    const client = new LeaseClient(store, { owner: `c${n}`, random: clientRandom, backoff: { baseMs: 5, capMs: 60 } });
    while (performance.now() < endsAt) {
      await sleep(pick(0, 60));
      const resource = resources[pick(0, resources.length)]!;
      const ttlMs = pick(300, MAX_TTL_MS);
      const isZombie = clientRandom() < 0.5;
      let lastRemaining = Number.POSITIVE_INFINITY;
      try {
        await client.withLease(
          resource,
          async ({ signal, fencingToken, lease, remainingMs }) => {
            const steps = pick(1, 5);
            for (let step = 0; step < steps; step++) {
              // A stop-the-world pause (every client and timer waits), or this client alone
              // stalling past its TTL while the others carry on, or a short think time.
              // (The pause runs past the deadline: a GC pause at the worst moment.)
              const frozeMs = clientRandom() < 0.05 ? Math.max(0, Math.ceil(remainingMs())) + pick(5, Math.floor(ttlMs * 0.5)) : 0;
              if (frozeMs > 0) {
                record.freezes += 1;
                freeze(frozeMs);
              }
              const isLongPause = clientRandom() < 0.25;
              // Past the deadline already (a freeze just now)? Then once fn has yielded to the
              // timers, the deadline timer must have aborted the signal.
              const remainingBeforeYield = remainingMs();
              await sleep(isLongPause ? pick(Math.floor(ttlMs * 0.8), Math.floor(ttlMs * 1.8)) : pick(0, Math.floor(ttlMs * 0.3)));
              await new Promise((resolve) => setImmediate(resolve));
              lastRemaining = remainingMs();
              if (remainingBeforeYield < 0) record.pastDeadlineYields += 1;
              if (remainingBeforeYield < 0 && lastRemaining < 0 && !signal.aborted) {
                record.deadlineViolations.push(
                  `c${n} ${resource} token ${fencingToken}: ${Math.round(-remainingBeforeYield)} ms past its deadline before yielding, signal still not aborted after${frozeMs ? ` (froze ${frozeMs} ms)` : ""}`,
                );
              }
              if (signal.aborted) {
                if (!isZombie) throw signal.reason;
                // A zombie carries on as if nothing happened: a while later (by when someone
                // else may hold the resource and have written) it writes once more, then stops.
                await sleep(pick(Math.floor(ttlMs * 0.6), Math.floor(ttlMs * 1.5)));
                record.zombieWrites += 1;
                step = steps;
              }
              const written = await fencedWrite({
                pool,
                table,
                key: resource,
                value: { owner: `c${n}`, step },
                fencingToken,
                resource,
                store,
                by: "ledger-db",
                history: true,
                owner: `c${n}`,
                task: "t",
                leaseId: lease.leaseId,
              });
              if (written.accepted) record.writes.accepted += 1;
              else record.writes.refused += 1;
            }
            // Now and then the work ends with a stop-the-world pause no timer could see.
            if (clientRandom() < 0.1) {
              record.freezes += 1;
              freeze(pick(Math.floor(ttlMs * 0.9), Math.floor(ttlMs * 1.4)));
            }
            lastRemaining = remainingMs();
          },
          { task: "t", ttlMs, waitMs: pick(0, 800) },
        );
        record.outcomes.ok += 1;
        if (lastRemaining <= 0) record.deadlineViolations.push(`c${n} ${resource}: withLease succeeded though fn ended ${Math.round(-lastRemaining)} ms past its deadline`);
      } catch (error) {
        if (error instanceof LeaseLostError) record.outcomes.lost += 1;
        else if (error instanceof AcquireTimeoutError) record.outcomes.timeout += 1;
        else if (dropping && error instanceof LeaseError && error.code === "store_unavailable" && store === dropping.store) record.outcomes.unavailable += 1;
        else record.unexpectedErrors.push(`c${n} ${resource}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
      }
    }
  };

  await Promise.all([staller, dropper, ...Array.from({ length: CLIENTS }, (_, n) => clientLoop(n))]);
  return record;
}

let pool: pg.Pool;
beforeAll(() => {
  pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 8 });
  pool.on("error", () => undefined);
});
afterAll(async () => {
  await stopAllServers();
  await pool.end();
});

describe.each(["redis", "postgres"] as const)("randomised interleavings (%s)", (kind) => {
  let under: StoreUnderTest;
  let downstream: FencedDownstream;
  beforeAll(async () => {
    under = await startStoreUnderTest(kind);
    downstream = await createFencedDownstream(pool, "ledger");
  });
  afterAll(async () => {
    await under?.close();
    await downstream?.drop();
  });

  it("holds every invariant after every round", { timeout: BUDGET_MS + 60_000 }, async () => {
    const { fixture } = under;
    const stores = [fixture.store, under.dropping?.store ?? fixture.open()];
    const startedAt = performance.now();
    // A resource taken once after every round, across the restarts: its tokens must keep rising.
    let carriedToken = -1n;
    const totals = { rounds: 0, restarts: 0, acquired: 0, expired: 0, lost: 0, zombieWrites: 0, pastDeadlineYields: 0, refused: 0, stale: 0, stalls: 0, freezes: 0, droppedReplies: 0 };
    for (let round = 0; round === 0 || performance.now() - startedAt < BUDGET_MS - ROUND_MS - MAX_TTL_MS; round++) {
      const seed = BASE_SEED + round;
      const prefix = `r${round}`;
      const failing = `${kind} round ${round}, seed ${seed} (replay: LW_INTERLEAVING_SEED=${BASE_SEED})`;
      const record = await runRound({ stores, under, pool, table: downstream.table, prefix, seed });

      expect(record.unexpectedErrors, failing).toEqual([]);
      expect(record.deadlineViolations, failing).toEqual([]);

      // Let every lease that was not released lapse, record the expiries, then judge by the store's records.
      await sleep(MAX_TTL_MS + 50);
      await fixture.store.sweep();
      const events = await collectEvents(fixture.store, { prefix: `${prefix}:` });
      const holds = holdsOnRecord(events);
      // A call sent again never grants a second time: one acquired event per lease id.
      const granted = events.filter((e) => e.kind === "acquired").map((e) => e.leaseId);
      expect(granted.filter((id, i) => granted.indexOf(id) !== i), `${failing}: lease ids granted twice`).toEqual([]);
      expect(findTokenOrderViolations(holds), `${failing}: tokens in acquisition order`).toEqual([]);

      const history = (await readFencedHistory({ pool, table: downstream.table, store: fixture.store })).filter((h) => h.key.startsWith(`${prefix}:`));
      const { stale, unexplained } = findStaleWrites(holds, history);
      expect(unexplained, `${failing}: stale writes`).toEqual([]);
      expect(history.length, failing).toBe(record.writes.accepted);

      // Exactly-once ends (so exactly-once expiry): every hold on record ended, once.
      expect(findRepeatedEnds(events), `${failing}: repeated ends`).toEqual([]);
      const counts = countKinds(events);
      const books = await checkConservation(fixture.store, `${prefix}:`);
      expect(books.held, `${failing}: still held`).toBe(0);
      expect(books.ended, `${failing}: conservation (acquired ${books.acquired})`).toBe(books.acquired);

      totals.rounds += 1;
      totals.acquired += counts.acquired;
      totals.expired += counts.expired;
      totals.lost += record.outcomes.lost;
      totals.refused += record.writes.refused;
      totals.zombieWrites += record.zombieWrites;
      totals.pastDeadlineYields += record.pastDeadlineYields;
      totals.stale += stale.length;
      totals.stalls += record.stalls;
      totals.freezes += record.freezes;
      totals.droppedReplies += record.droppedReplies;

      const carried = await fixture.store.acquire({ resource: "carried", owner: "carrier", task: `round-${round}`, ttlMs: 5_000 });
      if (!carried.acquired) throw new Error(`${failing}: the carried resource is held by ${carried.holder.owner}`);
      expect(BigInt(carried.lease.fencingToken) > carriedToken, `${failing}: the carried resource's token after ${totals.restarts} restarts`).toBe(true);
      carriedToken = BigInt(carried.lease.fencingToken);
      await fixture.store.release({ resource: "carried", leaseId: carried.lease.leaseId });
      // After round 0 and every other round after it, so the next round's carried token is checked across it.
      if (round % 2 === 0) {
        await under.server.restart();
        totals.restarts += 1;
        await untilServing(stores);
      }
    }
    console.info(`${kind} interleavings, seed ${BASE_SEED}: ${JSON.stringify(totals)}`);
    // The run must have exercised what it claims to: takeovers after expiry, lost leases, refused stale writes, stalls.
    expect(totals.rounds).toBeGreaterThan(1);
    expect(totals.expired, `seed ${BASE_SEED}`).toBeGreaterThan(0);
    expect(totals.lost, `seed ${BASE_SEED}`).toBeGreaterThan(0);
    expect(totals.refused, `seed ${BASE_SEED}`).toBeGreaterThan(0);
    expect(totals.stalls, `seed ${BASE_SEED}`).toBeGreaterThan(0);
    if (under.dropping) expect(totals.droppedReplies, `seed ${BASE_SEED}`).toBeGreaterThan(0);
    expect(totals.restarts, `seed ${BASE_SEED}`).toBeGreaterThan(0);
  });
});
