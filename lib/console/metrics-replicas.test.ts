/**
 * Two console replicas, each in its own process, scraped at the same moment report the
 * same counters and hold histogram, and those are the stores' own event counts — at every
 * pause of a workload that keeps running between pauses, and after a replica restarts.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresLeaseStore } from "@/lib/lease/postgres/store";
import { RedisLeaseStore } from "@/lib/lease/redis/store";
import { freshPgSchema, freshRedisNamespace, sleep, type FreshPgSchema, type FreshRedisNamespace } from "@/lib/lease/testing/isolation";
import { LEASE_EVENT_KINDS, type LeaseEvent, type LeaseStore } from "@/lib/lease/types";

const ROOT = path.join(__dirname, "..", "..");
const REPLICA = path.join(ROOT, "test", "support", "metrics-replica.ts");

/** A replica process; `scrape()` asks for /api/metrics' text. */
class Replica {
  private readonly child: ChildProcess;
  private readonly pending = new Map<string, (line: { body?: string; error?: string }) => void>();
  private next = 0;
  readonly ready: Promise<void>;
  private stderr = "";

  constructor(storesJson: string) {
    this.child = spawn(path.join(ROOT, "node_modules", ".bin", "tsx"), [REPLICA], {
      cwd: ROOT,
      env: { ...process.env, LEASEWATCH_STORES: storesJson },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    this.child.stderr!.on("data", (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    let markReady: () => void = () => {};
    this.ready = new Promise((resolve) => (markReady = resolve));
    readline.createInterface({ input: this.child.stdout! }).on("line", (text) => {
      const line = JSON.parse(text) as { id: string; body?: string; error?: string };
      if (line.id === "ready") markReady();
      this.pending.get(line.id)?.(line);
      this.pending.delete(line.id);
    });
  }

  scrape(): Promise<string> {
    const id = String(this.next++);
    return new Promise((resolve, reject) => {
      this.pending.set(id, (line) => (line.body !== undefined ? resolve(line.body) : reject(new Error(`${line.error} ${this.stderr}`))));
      this.child.stdin!.write(`${id}\n`);
    });
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    if (this.child.exitCode === null) process.kill(-this.child.pid!, "SIGKILL");
    await exited;
  }
}

/** `name{labels}` → value, for the series that must agree (counters, the histogram, active leases). */
function agreedSeries(body: string): Map<string, number> {
  const series = new Map<string, number>();
  for (const line of body.split("\n")) {
    if (!/^leasewatch_(events_total|renewals_total|hold_duration_seconds_(bucket|sum|count)|active_leases)\{/.test(line)) continue;
    const at = line.lastIndexOf(" ");
    series.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return series;
}

async function allEvents(store: LeaseStore): Promise<LeaseEvent[]> {
  const items: LeaseEvent[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await store.events({ limit: 1000, ...(cursor ? { cursor } : {}) });
    items.push(...page.items);
    cursor = page.nextCursor;
    if (!cursor) return items;
  }
}

/** Workers on both stores: contended acquires, renewals, releases, expiries, lost and fencing reports. */
function startWorkload(stores: readonly LeaseStore[]) {
  let isPaused = false;
  let isStopped = false;
  let resume: () => void = () => {};
  let resumed = Promise.resolve();
  const idle = new Set<number>();
  const renewed = new Map<string, number>();
  let sweeps = 0;

  const worker = async (id: number, store: LeaseStore) => {
    for (let i = 0; !isStopped; i++) {
      if (isPaused) {
        idle.add(id);
        await resumed;
        idle.delete(id);
        continue;
      }
      const resource = `team_${id % 3}:jobs:${i % 4}`;
      const ttlMs = i % 7 === 0 ? 150 : 5_000;
      const r = await store.acquire({ resource, owner: `w${id}`, task: `t${i}`, ttlMs });
      if (!r.acquired) continue;
      const { leaseId } = r.lease;
      if (i % 3 === 0) {
        const n = await store.renew({ resource, leaseId, ttlMs });
        if (n.renewed) renewed.set(store.name, (renewed.get(store.name) ?? 0) + 1);
      }
      if (i % 11 === 0) await store.reportLost({ resource, leaseId, owner: `w${id}`, task: `t${i}`, fencingToken: String(r.lease.fencingToken), reason: "not_owner" });
      if (i % 13 === 0) await store.reportFencingRejection({ resource, fencingToken: "1", seenToken: String(r.lease.fencingToken), by: "ledger" });
      if (ttlMs === 150) continue; // left to expire: recorded by a sweep or the next acquire
      if (i % 5 === 0) await store.forceRelease({ resource, leaseId, actor: "oncall", reason: "test" });
      else await store.release({ resource, leaseId });
    }
    idle.add(id);
  };
  // The sweeper pauses like a worker: a sweep records expiries, so none may run during a comparison.
  const SWEEPER_ID = -1;
  const sweeper = async () => {
    while (!isStopped) {
      if (isPaused) {
        idle.add(SWEEPER_ID);
        await resumed;
        idle.delete(SWEEPER_ID);
        continue;
      }
      await Promise.all(stores.map((s) => s.sweep()));
      sweeps += 1;
      await sleep(200);
    }
    idle.add(SWEEPER_ID);
  };
  const workers = stores.flatMap((store, s) => Array.from({ length: 4 }, (_, w) => worker(s * 10 + w, store)));
  const all = Promise.all([...workers, sweeper()]);
  const count = workers.length + 1;
  return {
    renewed,
    get sweeps() {
      return sweeps;
    },
    /** Resolves once every worker has finished its current operation and waits. */
    async pause() {
      resumed = new Promise((resolve) => (resume = resolve));
      isPaused = true;
      while (idle.size < count) await sleep(10);
    },
    resume() {
      isPaused = false;
      resume();
    },
    async stop() {
      isStopped = true;
      resume();
      await all;
    },
  };
}

describe("metrics across console replicas", () => {
  let schema: FreshPgSchema;
  let namespace: FreshRedisNamespace;
  let pg: PostgresLeaseStore;
  let redis: RedisLeaseStore;
  let storesJson: string;

  beforeAll(async () => {
    schema = freshPgSchema();
    namespace = freshRedisNamespace();
    pg = new PostgresLeaseStore({ name: "pg-r", connectionString: schema.connectionString, schema: schema.schema });
    await pg.migrate();
    redis = new RedisLeaseStore({ name: "redis-r", url: namespace.url, namespace: namespace.namespace });
    storesJson = JSON.stringify([
      { name: "pg-r", kind: "postgres", url: schema.connectionString, schema: schema.schema },
      { name: "redis-r", kind: "redis", url: namespace.url, namespace: namespace.namespace },
    ]);
  });

  afterAll(async () => {
    await pg?.close();
    await redis?.close();
    await schema?.drop();
    await namespace?.drop();
  });

  it("two replicas scraped at once report identical counters that match the stores' events, and a restart resets nothing", async () => {
    let a = new Replica(storesJson);
    const b = new Replica(storesJson);
    const workload = startWorkload([pg, redis]);
    try {
      await Promise.all([a.ready, b.ready]);
      let previous = new Map<string, number>();
      for (let round = 0; round < 3; round++) {
        await sleep(700);
        // While the workload runs: both answer, and no counter ever goes down.
        const [during] = await Promise.all([a.scrape(), b.scrape()]);
        for (const [key, value] of agreedSeries(during)) {
          if (!key.startsWith("leasewatch_active_leases")) expect(value, key).toBeGreaterThanOrEqual(previous.get(key) ?? 0);
        }

        await workload.pause();
        const [bodyA, bodyB] = await Promise.all([a.scrape(), b.scrape()]);
        const seriesA = agreedSeries(bodyA);
        expect(seriesA.size).toBeGreaterThan(0);
        expect(seriesA).toEqual(agreedSeries(bodyB));

        for (const store of [pg, redis]) {
          const counts: Record<string, number> = {};
          const events = await allEvents(store);
          for (const e of events) counts[e.kind] = (counts[e.kind] ?? 0) + 1;
          for (const kind of LEASE_EVENT_KINDS) {
            expect(seriesA.get(`leasewatch_events_total{store="${store.name}",kind="${kind}"}`), `${store.name} ${kind}`).toBe(counts[kind] ?? 0);
          }
          const terminal = events.filter((e) => e.holdMs !== undefined).length;
          expect(seriesA.get(`leasewatch_hold_duration_seconds_count{store="${store.name}"}`)).toBe(terminal);
          expect(seriesA.get(`leasewatch_hold_duration_seconds_bucket{store="${store.name}",le="+Inf"}`)).toBe(terminal);
          expect(seriesA.get(`leasewatch_active_leases{store="${store.name}"}`)).toBe(await store.countActive());
        }
        // Redis counts a renewal when it happens.
        expect(seriesA.get(`leasewatch_renewals_total{store="redis-r"}`)).toBe(workload.renewed.get("redis-r") ?? 0);
        expect(seriesA.get(`leasewatch_events_total{store="pg-r",kind="contended"}`)).toBeGreaterThan(0);
        expect(seriesA.get(`leasewatch_events_total{store="redis-r",kind="expired"}`)).toBeGreaterThan(0);
        previous = seriesA;

        if (round === 1) {
          // A restarted replica starts from the stores' records, not from zero.
          await a.stop();
          a = new Replica(storesJson);
          await a.ready;
          expect(agreedSeries(await a.scrape())).toEqual(seriesA);
        }
        workload.resume();
      }
      expect(workload.sweeps).toBeGreaterThan(0);
    } finally {
      await workload.stop();
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("histogram buckets are cumulative, end at +Inf = _count, and _sum is the hold time in seconds", async () => {
    const [body] = await Promise.all([new Replica(storesJson)].map(async (r) => {
      try {
        await r.ready;
        return await r.scrape();
      } finally {
        await r.stop();
      }
    }));
    for (const store of [pg, redis]) {
      const lines = body!.split("\n").filter((l) => l.startsWith(`leasewatch_hold_duration_seconds_bucket{store="${store.name}",`));
      const buckets = lines.map((l) => ({ le: /le="([^"]+)"/.exec(l)![1]!, value: Number(l.slice(l.lastIndexOf(" ") + 1)) }));
      expect(buckets.at(-1)!.le).toBe("+Inf");
      const bounds = buckets.slice(0, -1).map((b) => Number(b.le));
      expect(bounds).toEqual([...bounds].sort((x, y) => x - y));
      for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
      const count = Number(/_count\{[^}]*\} (\S+)/.exec(body!.split("\n").find((l) => l.startsWith(`leasewatch_hold_duration_seconds_count{store="${store.name}"`))!)![1]);
      expect(buckets.at(-1)!.value).toBe(count);
      const events = (await allEvents(store)).filter((e) => e.holdMs !== undefined);
      const sumLine = body!.split("\n").find((l) => l.startsWith(`leasewatch_hold_duration_seconds_sum{store="${store.name}"`))!;
      expect(Number(sumLine.slice(sumLine.lastIndexOf(" ") + 1))).toBeCloseTo(events.reduce((n, e) => n + (e.holdMs ?? 0), 0) / 1000, 3);
      // Each bucket holds exactly the events at or under its bound.
      for (const b of buckets.slice(0, -1)) expect(b.value, `le=${b.le}`).toBe(events.filter((e) => e.holdMs! <= Number(b.le) * 1000).length);
    }
  });
});
