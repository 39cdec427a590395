/**
 * Two console replicas, each in its own process, scraped at the same moment report the
 * same counters and histograms, and those are the stores' own event counts and histograms —
 * at every pause of a workload that keeps running between pauses, and after a replica restarts.
 * Hold duration and renewal slack are per store and prefix group (replicas group by 2 segments,
 * at most 5 groups); release failures and close calls are counted on both stores.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import { beforeAll, describe, expect, it } from "vitest";
import { getMetricsText, OTHER_GROUP } from "./get-metrics-text";
import {
  CLOSE_CALL_FRACTION,
  HOLD_HISTOGRAM_BOUNDS_MS,
  LEASE_EVENT_KINDS,
  type LeaseEvent,
  type LeaseStore,
  type PostgresLeaseStore,
  type RedisLeaseStore,
  resourcePrefix,
  SLACK_BUCKET_COUNT,
} from "@leasewatch/lease";
import { sleep } from "@leasewatch/lease/testing";
import { setUpStoreFixture } from "@/test/support/store-suite";

const ROOT = path.join(__dirname, "..", "..", "..");
const HOLD = "leasewatch_hold_duration_seconds";
const SLACK = "leasewatch_renewal_slack_ratio";
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
    if (!/^leasewatch_(events_total|renewals_total|hold_duration_seconds_(bucket|sum|count)|renewal_slack_ratio_(bucket|sum|count)|renewal_close_calls_total|release_failures_total|active_leases)\{/.test(line)) continue;
    const at = line.lastIndexOf(" ");
    series.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return series;
}

/** Values of one histogram family's series for a store and prefix group: `le` → cumulative count, plus _sum and _count. */
function histogramOf(series: Map<string, number>, name: string, store: string, group: string) {
  const labels = `store="${store}",prefix_group="${group}"`;
  const buckets = new Map<string, number>();
  for (const [key, value] of series) {
    const m = new RegExp(`^${name}_bucket\\{${labels},le="([^"]+)"\\}$`).exec(key);
    if (m) buckets.set(m[1]!, value);
  }
  return { buckets, sum: series.get(`${name}_sum{${labels}}`), count: series.get(`${name}_count{${labels}}`) };
}

/** The prefix groups a family has series for, for one store. */
function groupsOf(series: Map<string, number>, name: string, store: string): string[] {
  const groups = new Set<string>();
  for (const key of series.keys()) {
    const m = new RegExp(`^${name}_count\\{store="${store}",prefix_group="([^"]+)"\\}$`).exec(key);
    if (m) groups.add(m[1]!);
  }
  return [...groups].sort();
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
  /** `<store> <reason>` → releases the store refused. */
  const refused = new Map<string, number>();
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
      const release = async (id: string) => {
        const r = await store.release({ resource, leaseId: id });
        if (!r.released) refused.set(`${store.name} ${r.reason}`, (refused.get(`${store.name} ${r.reason}`) ?? 0) + 1);
      };
      // A release by a stale or wrong lease id: refused, counted by the store.
      if (i % 4 === 1) await release(`${leaseId.slice(0, -4)}0000`);
      if (i % 5 === 0) await store.forceRelease({ resource, leaseId, actor: "oncall", reason: "test" });
      else await release(leaseId);
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
    refused,
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
  /** Successful renewals per store by the end of the first test's workload. */
  const workloadRenewals = new Map<string, number>();
  const pgFixture = setUpStoreFixture("postgres", { name: "pg-r" });
  const redisFixture = setUpStoreFixture("redis", { name: "redis-r" });
  let pg: PostgresLeaseStore;
  let redis: RedisLeaseStore;
  let storesJson: string;

  beforeAll(() => {
    pg = pgFixture.store;
    redis = redisFixture.store;
    storesJson = JSON.stringify([pgFixture.spec, redisFixture.spec]);
  });

  it("two replicas scraped at once report identical counters that match the stores' events, and a restart resets nothing", async () => {
    const started = new Date(Date.now() - 3_600_000);
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
          // Hold duration per prefix group: each group's buckets, sum and count are its terminal events'.
          const holds = new Map<string, LeaseEvent[]>();
          for (const e of events) {
            if (e.holdMs === undefined) continue;
            const group = resourcePrefix(e.resource, 2);
            holds.set(group, [...(holds.get(group) ?? []), e]);
          }
          expect(groupsOf(seriesA, HOLD, store.name)).toEqual([...holds.keys()].sort());
          for (const [group, ended] of holds) {
            const h = histogramOf(seriesA, HOLD, store.name, group);
            expect(h.count, `${store.name} ${group}`).toBe(ended.length);
            expect(h.buckets.get("+Inf")).toBe(ended.length);
            expect(h.sum).toBeCloseTo(ended.reduce((n, e) => n + e.holdMs!, 0) / 1000, 3);
            for (const bound of HOLD_HISTOGRAM_BOUNDS_MS) {
              expect(h.buckets.get(String(bound / 1000)), `${group} le=${bound / 1000}`).toBe(ended.filter((e) => e.holdMs! <= bound).length);
            }
          }

          // Renewal slack per prefix group: the store's own slack records (its hourly rollup over the whole test).
          const slack = new Map<string, number[]>();
          for (const row of await store.renewalSlack({ from: started, to: new Date(Date.now() + 3_600_000) })) {
            const counts = slack.get(row.group) ?? new Array<number>(SLACK_BUCKET_COUNT).fill(0);
            row.histogram.forEach((n, i) => (counts[i] = (counts[i] ?? 0) + n));
            slack.set(row.group, counts);
          }
          expect(groupsOf(seriesA, SLACK, store.name)).toEqual([...slack.keys()].sort());
          let renewalsSeen = 0;
          for (const [group, counts] of slack) {
            const h = histogramOf(seriesA, SLACK, store.name, group);
            const total = counts.reduce((a, b) => a + b, 0);
            renewalsSeen += total;
            expect(h.count, `${store.name} ${group}`).toBe(total);
            expect(h.buckets.get("+Inf")).toBe(total);
            let cumulative = 0;
            counts.forEach((n, i) => {
              cumulative += n;
              expect(h.buckets.get(String((i + 1) / SLACK_BUCKET_COUNT)), `${group} bucket ${i}`).toBe(cumulative);
            });
            const close = counts.slice(0, CLOSE_CALL_FRACTION * SLACK_BUCKET_COUNT).reduce((a, b) => a + b, 0);
            expect(seriesA.get(`leasewatch_renewal_close_calls_total{store="${store.name}",prefix_group="${group}"}`)).toBe(close);
          }
          // Every successful renewal is in the slack histograms.
          expect(renewalsSeen, store.name).toBe(workload.renewed.get(store.name) ?? 0);

          // Release failures, as the workload saw its releases refused.
          for (const reason of ["not_owner", "expired"]) {
            expect(seriesA.get(`leasewatch_release_failures_total{store="${store.name}",reason="${reason}"}`), `${store.name} ${reason}`).toBe(
              workload.refused.get(`${store.name} ${reason}`) ?? 0,
            );
          }
          expect(workload.refused.get(`${store.name} not_owner`)).toBeGreaterThan(0);
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
      for (const [name, n] of workload.renewed) workloadRenewals.set(name, n);
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("histogram buckets are cumulative, end at +Inf = _count, and the hold _sum is the hold time in seconds, per store and prefix group", async () => {
    const [body] = await Promise.all([new Replica(storesJson)].map(async (r) => {
      try {
        await r.ready;
        return await r.scrape();
      } finally {
        await r.stop();
      }
    }));
    const series = agreedSeries(body!);
    for (const store of [pg, redis]) {
      for (const name of [HOLD, SLACK]) {
        const groups = groupsOf(series, name, store.name);
        expect(groups.length, `${store.name} ${name}`).toBeGreaterThan(0);
        for (const group of groups) {
          const h = histogramOf(series, name, store.name, group);
          const buckets = [...h.buckets.entries()];
          expect(buckets.at(-1)![0]).toBe("+Inf");
          const bounds = buckets.slice(0, -1).map(([le]) => Number(le));
          expect(bounds).toEqual([...bounds].sort((x, y) => x - y));
          for (let i = 1; i < buckets.length; i++) expect(buckets[i]![1]).toBeGreaterThanOrEqual(buckets[i - 1]![1]);
          expect(buckets.at(-1)![1]).toBe(h.count);
        }
      }
      const events = (await allEvents(store)).filter((e) => e.holdMs !== undefined);
      const sums = groupsOf(series, HOLD, store.name).reduce((n, g) => n + histogramOf(series, HOLD, store.name, g).sum!, 0);
      expect(sums).toBeCloseTo(events.reduce((n, e) => n + (e.holdMs ?? 0), 0) / 1000, 3);
    }
  });

  it("past the group bound, the groups with the fewest holds or renewals share \"other\"; two scrapes agree and nothing is lost", async () => {
    const config = { prefixDepth: 2, maxGroups: 1 };
    const scrape = async () => agreedSeries((await getMetricsText({ entries: [{ store: pg }, { store: redis }], audit: null, config })).body);
    const [first, second] = await Promise.all([scrape(), scrape()]);
    expect(first).toEqual(second);
    for (const store of [pg, redis]) {
      const events = (await allEvents(store)).filter((e) => e.holdMs !== undefined);
      const holdGroups = groupsOf(first, HOLD, store.name);
      expect(holdGroups).toHaveLength(2);
      expect(holdGroups).toContain(OTHER_GROUP);
      const named = holdGroups.find((g) => g !== OTHER_GROUP)!;
      // The named group is the one with the most holds.
      const byGroup = new Map<string, number>();
      for (const e of events) byGroup.set(resourcePrefix(e.resource, 2), (byGroup.get(resourcePrefix(e.resource, 2)) ?? 0) + 1);
      expect(histogramOf(first, HOLD, store.name, named).count).toBe(Math.max(...byGroup.values()));
      expect(holdGroups.reduce((n, g) => n + histogramOf(first, HOLD, store.name, g).count!, 0)).toBe(events.length);
      const slackGroups = groupsOf(first, SLACK, store.name);
      expect(slackGroups).toContain(OTHER_GROUP);
      expect(slackGroups.reduce((n, g) => n + histogramOf(first, SLACK, store.name, g).count!, 0)).toBe(workloadRenewals.get(store.name));
    }
  });
});
