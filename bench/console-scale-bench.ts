/**
 * `npm run bench -- console --scale N`: the console at N times the base volume,
 * on four stores at once (2 Postgres schemas, 2 Redis namespaces), as the design's
 * targets ask at N = 10: per store 100k·N live leases and 1M·N events over 30 days.
 *
 * Seeding writes exactly what the stores write, in bulk:
 *   - Postgres: a schema made by the store's own migrate(), then lease and event
 *     rows generated inside Postgres (scripts/seed/pg-seed.ts, time-ordered slices),
 *     then the store's own refreshRollups() derives the rollup rows.
 *   - Redis: pipelined writes of the store's keys (scripts/seed/redis-seed.ts: lock,
 *     lease, fence and index keys; bucket and per-kind streams, per-resource id lists,
 *     stats hashes; the hold index), with the store's default stream cap, so Redis
 *     keeps only the capped tail of the events (the stats hashes count every one).
 * The two Postgres stores and the two Redis stores seed side by side (Postgres
 * works in its server, Redis seeding in this process). The seeded data is checked
 * with the stores' own reads before anything is measured.
 *
 * Everything is removed afterwards unless `--keep` is given; `--reuse <suffix>`
 * measures stores a kept run left behind (and leaves them there). Seeding stops (and cleans up) past
 * `--seed-budget-min` minutes (by default 8 per unit of scale, at least 40).
 */
import { randomBytes } from "node:crypto";
import { cpus, loadavg, totalmem } from "node:os";
import { Pool } from "pg";
import { Redis } from "ioredis";
import { LEASE_EVENT_KINDS, type LeaseEvent, type LeaseStore, PostgresLeaseStore, RedisLeaseStore } from "@leasewatch/lease";
import {
  buildBucketKeys,
  buildStatsKey,
  buildStoreWideStatsHashKey,
  buildStoreWideStatsKey,
  DEFAULT_BUCKETS,
  DEFAULT_EVENTS_MAX_LEN,
  HOUR_TTL_S,
  quoteSchema,
  RESOURCE_EVENTS_MAX_LEN,
} from "@leasewatch/lease/internal";
import { getLeaseDetailFromRoute } from "@/lib/console/leases/get-lease-detail";
import { getOverview } from "@/lib/console/overview/get-overview";
import { getPastLeases } from "@/lib/console/past/get-past-leases";
import { listEvents } from "@/lib/console/events/list-events";
import { listLeases } from "@/lib/console/leases/list-leases";
import { parseEventsParams, parseLeasesParams, parseOverviewParams, type SearchParamsInput } from "@/lib/console/shared/params";
import { generateViewerRequests, STACK_TRACE } from "@/lib/console/testing/viewer-requests";
import { generateHistory, type SyntheticEvent } from "../scripts/seed/history";
import { describeIndexes, seedPostgresBench } from "../scripts/seed/pg-seed";
import { deleteRedisNamespace, estimateStreamCutoffs, writeRedisLeases, writeRedisStreamEvents } from "../scripts/seed/redis-seed";
import { HOT_RESOURCES } from "../scripts/workload/names";
import { createRandom } from "../scripts/workload/random";
import { log, makeLiveLeases, measureOverviewHttp, mergeByTime, printTable, quantile, sample, timeIt, type Row } from "./console-bench";
import type { BenchOutcome } from "./run";

const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const DAY_MS = 86_400_000;
const DAYS = 30;
/** Live leases renew on hour-long TTLs here: a long seed must not see them lapse before they are measured. */
const LIVE_TTLS_MS = [7_200_000, 10_800_000, 14_400_000, 21_600_000];
/** The Postgres history is written in slices of about this many events. */
const EVENTS_PER_SLICE = 500_000;
const FUZZ_REQUESTS = 500;
const FUZZ_SEED = 20261126;

const TARGETS = { ttfbMs: 300, overview30dMs: 500, listMs: 100, eventsMs: 200, detailMs: 200, fuzzMs: 2_000, pastMs: 300 } as const;

export interface ScaleOptions {
  scale: number;
  keep: boolean;
  /** Suffix of a kept run's schemas and namespaces: measure them without seeding. */
  reuse?: string;
  seedBudgetMin: number;
  /** Which kind of store to seed and measure: both (the issue's four stores), or only one kind. */
  kinds: "all" | "pg" | "redis";
  /** Suffix for a fresh seed's schemas and namespaces, so a Postgres-only and a Redis-only run can be measured together with --reuse. */
  suffix?: string;
}

function readFlag(argv: readonly string[], name: string): string | undefined {
  const i = argv.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (i < 0) return undefined;
  const arg = argv[i]!;
  return arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : argv[i + 1];
}

/**
 * Minutes the seed may take unless `--seed-budget-min` says otherwise: 8 per unit of scale, at
 * least 40. At N = 10 the Redis seed took 23 minutes on one 2-core machine and 55 on another.
 */
export function defaultSeedBudgetMin(scale: number): number {
  return Math.max(40, 8 * scale);
}

/** `--scale N [--keep] [--reuse SUFFIX | --suffix SUFFIX] [--seed-budget-min M] [--stores all|pg|redis]`, or null without `--scale`. */
export function parseScaleArgs(argv: readonly string[]): ScaleOptions | null {
  const raw = readFlag(argv, "--scale");
  if (raw === undefined) return null;
  const scale = Number(raw);
  if (!Number.isFinite(scale) || scale <= 0 || scale > 10) throw new Error(`--scale takes a number above 0 and at most 10 (got "${raw}")`);
  const reuse = readFlag(argv, "--reuse");
  if (reuse !== undefined && !/^[0-9a-f]{10}$/.test(reuse)) throw new Error(`--reuse takes the 10-hex-digit suffix a --keep run printed (got "${reuse}")`);
  const budget = Number(readFlag(argv, "--seed-budget-min") ?? defaultSeedBudgetMin(scale));
  if (!Number.isFinite(budget) || budget <= 0) throw new Error("--seed-budget-min takes a positive number of minutes");
  const suffix = readFlag(argv, "--suffix");
  if (suffix !== undefined && !/^[0-9a-f]{10}$/.test(suffix)) throw new Error(`--suffix takes 10 hex digits (got "${suffix}")`);
  if (suffix !== undefined && reuse !== undefined) throw new Error("--suffix names a fresh seed; --reuse measures a kept one: give one of them");
  const kinds = readFlag(argv, "--stores") ?? "all";
  if (kinds !== "all" && kinds !== "pg" && kinds !== "redis") throw new Error(`--stores takes all, pg or redis (got "${kinds}")`);
  return { scale, keep: argv.includes("--keep"), reuse, seedBudgetMin: budget, kinds, suffix };
}

// ------------------------------------------------------------------ machine and load

class LoadSampler {
  private readonly samples: Array<{ phase: string; load1: number }> = [];
  private timer: NodeJS.Timeout | undefined;
  phase = "seeding";
  start(): void {
    this.timer = setInterval(() => this.samples.push({ phase: this.phase, load1: loadavg()[0]! }), 5_000);
    this.timer.unref();
  }
  stop(): void {
    clearInterval(this.timer);
  }
  summary(phase: string): string {
    const xs = this.samples.filter((s) => s.phase === phase).map((s) => s.load1);
    if (xs.length === 0) return `${phase}: no samples`;
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    return `${phase}: 1-min load average min ${Math.min(...xs).toFixed(2)}, mean ${mean.toFixed(2)}, max ${Math.max(...xs).toFixed(2)} (${xs.length} samples, every 5 s)`;
  }
}

async function redisUsedMemory(redis: Redis): Promise<number> {
  const info = await redis.info("memory");
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
}

const mib = (bytes: number) => `${(bytes / 1_048_576).toFixed(0)} MiB`;

// ------------------------------------------------------------------ seeding

interface Budget {
  deadline: number;
  check(where: string): void;
}

function makeBudget(minutes: number, stopIfInterrupted: () => void): Budget {
  const deadline = Date.now() + minutes * 60_000;
  return {
    deadline,
    check(where) {
      stopIfInterrupted();
      if (Date.now() > deadline) throw new Error(`seeding went past its ${minutes}-minute budget (${where}); try a smaller --scale`);
    },
  };
}

interface SeededPg {
  leases: number;
  events: number;
  seedMs: number;
  rollupMs: number;
}

async function seedPostgresStore(pool: Pool, store: PostgresLeaseStore, schema: string, scale: number, budget: Budget): Promise<SeededPg> {
  await store.migrate();
  const indexesBefore = await describeIndexes(pool, schema);
  const now = new Date();
  const events = Math.round(1_000_000 * scale);
  const seeded = await timeIt(() =>
    seedPostgresBench(pool, {
      schema,
      leases: Math.round(100_000 * scale),
      events,
      from: new Date(now.getTime() - DAYS * DAY_MS),
      to: now,
      slices: Math.max(1, Math.round(events / EVENTS_PER_SLICE)),
      liveTtlsMs: LIVE_TTLS_MS,
      onIndex: (name) => log(`${store.name}: ${name} built again`),
      onSlice: ({ slice, slices, events: written }) => {
        if ((slice + 1) % 4 === 0 || slice + 1 === slices) log(`${store.name}: slice ${slice + 1}/${slices}, ${written.toLocaleString("en")} events`);
        budget.check(`${store.name}, slice ${slice + 1} of ${slices}`);
      },
    }),
  );
  log(`${store.name}: ${seeded.value.leases.toLocaleString("en")} leases, ${seeded.value.events.toLocaleString("en")} events in ${(seeded.ms / 1000).toFixed(1)} s`);
  const indexesAfter = await describeIndexes(pool, schema);
  if (indexesAfter.definitions.join("\n") !== indexesBefore.definitions.join("\n") || indexesAfter.partitionsMissingIndexes > 0) {
    throw new Error(
      `${store.name}: the seeded schema's indexes differ from migrate()'s (${indexesAfter.definitions.length} definitions against ${indexesBefore.definitions.length}; ` +
        `${indexesAfter.partitionsMissingIndexes} event partitions missing an index)`,
    );
  }
  log(`${store.name}: indexes equal migrate()'s (${indexesAfter.definitions.length} definitions in pg_indexes; every event partition has its parent's)`);
  budget.check(`${store.name}, before its rollups`);
  const rollups = await timeIt(() => store.refreshRollups({ since: new Date(now.getTime() - DAYS * DAY_MS - 3_600_000) }));
  log(`${store.name}: rollups rebuilt by the store's refreshRollups in ${(rollups.ms / 1000).toFixed(1)} s`);
  // A live store's tables gain planner statistics from autovacuum as they grow; bulk-loaded ones have
  // none yet, and without them the planner scanned a day's partition for a one-row kind filter (> 2 s).
  const analyzed = await timeIt(() => analyzeSchema(pool, schema));
  log(`${store.name}: ANALYZE of its ${analyzed.value} tables in ${(analyzed.ms / 1000).toFixed(1)} s`);
  return { ...seeded.value, seedMs: seeded.ms, rollupMs: rollups.ms };
}

/** ANALYZE every table of the schema (a partitioned parent recurses into its partitions). Returns how many. */
async function analyzeSchema(pool: Pool, schema: string): Promise<number> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition`,
    [schema],
  );
  for (const { name } of rows) await pool.query(`ANALYZE ${quoteSchema(schema)}.${quoteSchema(name)}`);
  return rows.length;
}

interface SeededRedis {
  leases: number;
  events: number;
  /** Events per hour (epoch hours): the store keeps an hour's stats hash HOUR_TTL_S after the hour ends. */
  eventsPerHour: Map<number, number>;
  /** Per hot resource: its events. */
  perHotResource: Map<string, number>;
  seedMs: number;
  projectMs: number;
  /** Buckets whose oldest events were counted rather than streamed (the cap trimmed them anyway). */
  countedBuckets: number;
}

async function seedRedisStore(redis: Redis, store: RedisLeaseStore, namespace: string, scale: number, seed: number, budget: Budget): Promise<SeededRedis> {
  const started = performance.now();
  const nowMs = Date.now();
  const target = { client: redis, namespace, buckets: DEFAULT_BUCKETS, eventsMaxLen: DEFAULT_EVENTS_MAX_LEN, evidsMaxLen: Math.min(DEFAULT_EVENTS_MAX_LEN, RESOURCE_EVENTS_MAX_LEN) };
  const leases = [...makeLiveLeases(Math.round(100_000 * scale), nowMs, seed, LIVE_TTLS_MS)];
  const written = await writeRedisLeases(target, leases, nowMs, { readModels: false });
  const acquiredEvents: SyntheticEvent[] = leases
    .map((l) => ({ at: l.acquiredAt, kind: "acquired" as const, resource: l.resource, leaseId: l.leaseId, owner: l.owner, task: l.task, fencingToken: l.fencingToken }))
    .sort((x, y) => x.at - y.at);
  leases.length = 0;
  // generateHistory follows a daily rhythm around this mean; aim a little high so ≥ the target lands.
  const targetEvents = Math.round((1_000_000 * scale - acquiredEvents.length) * 1.08);
  const history = generateHistory({
    from: nowMs - DAYS * DAY_MS,
    to: nowMs,
    targetEvents,
    random: createRandom(seed + 4),
    tokenFor: (n, at) => String(BigInt(Math.round(at)) * 1000n + BigInt(n % 1000)),
  });
  // Where each bucket's capped stream will begin, from a smaller history of the same shape.
  const streamFrom = estimateStreamCutoffs(
    generateHistory({ from: nowMs - DAYS * DAY_MS, to: nowMs, targetEvents: Math.min(targetEvents, 200_000), random: createRandom(seed + 9) }),
    target,
    targetEvents,
  );
  const countedBuckets = streamFrom.filter(Number.isFinite).length;
  log(`${store.name}: ${countedBuckets} of ${DEFAULT_BUCKETS} buckets will trim; their events older than the last ~${DEFAULT_EVENTS_MAX_LEN.toLocaleString("en")} are counted, not streamed`);
  const hot = new Set<string>(HOT_RESOURCES);
  const perHotResource = new Map<string, number>();
  const eventsPerHour = new Map<number, number>();
  let seen = 0;
  const counted = function* (events: Iterable<SyntheticEvent>) {
    for (const e of events) {
      const hour = Math.floor(e.at / 3_600_000);
      eventsPerHour.set(hour, (eventsPerHour.get(hour) ?? 0) + 1);
      if (hot.has(e.resource)) perHotResource.set(e.resource, (perHotResource.get(e.resource) ?? 0) + 1);
      if (++seen % 10_000 === 0) budget.check(`${store.name}, ${seen.toLocaleString("en")} events`);
      yield e;
    }
  };
  // The store's own projector derives every read model from the streams, in rounds, until caught up;
  // projectHolds() then drops the holds that ended before the streams' trimmed part, as sweep() does.
  let projectMs = 0;
  let nextLog = 1_000_000;
  const project = async () => {
    const t0 = performance.now();
    while (!(await store.project()).isCaughtUp) budget.check(`${store.name}, projecting`);
    await store.projectHolds();
    projectMs += performance.now() - t0;
  };
  const { written: events } = await writeRedisStreamEvents(target, counted(mergeByTime(history, acquiredEvents)), {
    nowMs,
    project,
    streamFrom,
    onProjected: (n) => {
      if (n < nextLog) return;
      nextLog += 1_000_000;
      log(`${store.name}: ${n.toLocaleString("en")} events written and projected (${((performance.now() - started) / 1000).toFixed(0)} s, of which projecting ${(projectMs / 1000).toFixed(0)} s)`);
    },
  });
  const seedMs = performance.now() - started;
  log(
    `${store.name}: ${written.toLocaleString("en")} leases, ${events.toLocaleString("en")} events in ${(seedMs / 1000).toFixed(1)} s ` +
      `(${Math.round(events / (seedMs / 1000)).toLocaleString("en")} events/s; the store's projector took ${(projectMs / 1000).toFixed(1)} s of it)`,
  );
  // A bucket whose oldest events were not streamed must have a full stream: then those are exactly the ones the cap trimmed.
  const lengths = (await redis.pipeline(Array.from({ length: DEFAULT_BUCKETS }, (_, b) => ["xlen", buildBucketKeys(namespace, b).events])).exec()) ?? [];
  const short = streamFrom.flatMap((from, b) => (Number.isFinite(from) && Number(lengths[b]?.[1] ?? 0) < DEFAULT_EVENTS_MAX_LEN ? [`bucket ${b}: ${String(lengths[b]?.[1])}`] : []));
  if (short.length > 0) throw new Error(`${store.name}: streams shorter than the cap where older events were counted, not streamed (${short.join(", ")})`);
  return { leases: written, events, eventsPerHour, perHotResource, seedMs, projectMs, countedBuckets };
}

// ------------------------------------------------------------------ checking the seed with the stores' own reads

function shapeOf(e: LeaseEvent): string {
  const fields = Object.entries(e)
    .filter(([k, v]) => v !== undefined && !["id", "store", "at", "resource", "leaseId", "owner", "task", "fencingToken", "holdMs"].includes(k))
    .map(([k, v]) => (k === "detail" && v && typeof v === "object" ? `detail{${Object.keys(v).sort().join(",")}}` : k))
    .sort();
  return [typeof e.fencingToken, e.holdMs === undefined ? "" : "holdMs", ...fields].join(" ");
}

/**
 * An acquire and a release made by the store itself, next to a seeded acquire and
 * release: the same fields, the same detail keys, the same token type.
 */
async function compareEventShapes(store: LeaseStore): Promise<string> {
  const resource = `bench-verify:${store.name}`;
  const got = await store.acquire({ resource, owner: "bench-verify", task: "verify", ttlMs: 60_000 });
  if (!got.acquired) throw new Error(`${store.name}: could not acquire ${resource} to compare event shapes`);
  await store.release({ resource, leaseId: got.lease.leaseId });
  const own = (await store.events({ resource, limit: 10 })).items;
  const problems: string[] = [];
  for (const kind of ["acquired", "released"] as const) {
    const mine = own.find((e) => e.kind === kind);
    const to = new Date(Date.now() - 120_000);
    const seeded = (await store.events({ kinds: [kind], from: new Date(to.getTime() - DAY_MS), to, limit: 1 })).items[0];
    if (!mine || !seeded) problems.push(`${kind}: ${mine ? "no seeded event" : "no event of the store's own"}`);
    else if (shapeOf(mine) !== shapeOf(seeded)) problems.push(`${kind}: store writes [${shapeOf(mine)}], seed wrote [${shapeOf(seeded)}]`);
  }
  if (problems.length > 0) throw new Error(`${store.name}: seeded events differ from the store's: ${problems.join("; ")}`);
  return "acquired and released events have the store's own fields and detail keys";
}

async function sumStats(store: LeaseStore, fromMs: number, toMs: number): Promise<number> {
  const buckets = await store.stats({ from: new Date(fromMs), to: new Date(toMs), bucketMs: 3_600_000, prefixDepth: 1 });
  // Events only: `renewed` counts renewals, which are not stored as events.
  return buckets.reduce((n, b) => n + LEASE_EVENT_KINDS.reduce((m, kind) => m + (b.counts[kind] ?? 0), 0), 0);
}

// ------------------------------------------------------------------ measuring

type Entries = Array<{ store: LeaseStore }>;

function parsedOrThrow<T>(parsed: { ok: true; params: T } | { ok: false; problem: { message: string; param: string } }): T {
  if (!parsed.ok) throw new Error(`bench parameters refused: ${parsed.problem.param} ${parsed.problem.message}`);
  return parsed.params;
}

function pushRow(rows: Row[], what: string, store: string, samples: number[], target?: number, note?: string): void {
  rows.push({ what, store, p50: quantile(samples, 0.5), p95: quantile(samples, 0.95), target, on: target === undefined ? undefined : "p95", note });
}

async function measureLists(store: LeaseStore, rows: Row[], leases: number): Promise<void> {
  const random = createRandom(3);
  const kinds = ["invoice-sync", "billing-close", "report-export", "webhook-retry", "ledger-export"];
  let found = 0;
  const samples = await sample(40, async () => {
    // The prefix of a seeded live lease: a different tenant each time (makeLiveLeases / seedPostgresBench).
    const g = random.int(0, leases - 1);
    const params = parsedOrThrow(parseLeasesParams({ store: store.name, prefix: `tenant_${g % 2000}:${kinds[Math.floor(g / 2000) % 5]}` }));
    const result = await listLeases(params, { entries: [{ store }] });
    if (!result.ok) throw new Error(result.problem.message);
    if (!result.view.stores.every((s) => s.ok)) throw new Error(`leases list on ${store.name} failed`);
    found += result.view.items.length;
  });
  if (found === 0) throw new Error(`leases list by prefix on ${store.name} returned nothing`);
  pushRow(rows, "leases list by prefix", store.name, samples, TARGETS.listMs);
}

/** Owners and tasks that occur in the last 7 days, read from the store. */
async function sampleFilterValues(store: LeaseStore): Promise<{ owners: string[]; tasks: string[] }> {
  const to = new Date();
  const owners = new Set<string>();
  const tasks = new Set<string>();
  for (const daysAgo of [0.5, 2, 4, 6]) {
    const at = new Date(to.getTime() - daysAgo * DAY_MS);
    const page = await store.events({ from: new Date(at.getTime() - 3_600_000), to: at, limit: 50 });
    for (const e of page.items) {
      if (e.owner) owners.add(e.owner);
      if (e.task) tasks.add(e.task);
    }
  }
  return { owners: [...owners].slice(0, 40), tasks: [...tasks].slice(0, 40) };
}

async function measureEventFilters(store: LeaseStore, rows: Row[]): Promise<{ owners: string[]; tasks: string[] }> {
  const random = createRandom(17);
  const values = await sampleFilterValues(store);
  const filters: Array<[string, () => SearchParamsInput]> = [
    ["owner", () => ({ owner: random.pick(values.owners) })],
    ["kind", () => ({ kind: random.pick(["expired", "contended", "force_released", "released,expired", "fencing_rejected"]) })],
    ["task", () => ({ task: random.pick(values.tasks) })],
  ];
  for (const [name, make] of filters) {
    let refused: string | undefined;
    let failed: string | undefined;
    let items = 0;
    const samples = await sample(20, async () => {
      const parsed = parseEventsParams({ store: store.name, window: "7d", ...make() });
      if (!parsed.ok) {
        refused = `refused (400): ${parsed.problem.message}`;
        return;
      }
      const result = await listEvents(parsed.params, { entries: [{ store }] });
      if (!result.ok) refused = `refused (400): ${result.problem.message}`;
      else if (!result.view.stores[0]?.ok) failed = `store read failed: ${JSON.stringify(result.view.stores[0]).slice(0, 160)}`;
      else items += result.view.items.length;
    });
    const note = refused ?? failed ?? `${(items / 20).toFixed(0)} events per page on average`;
    pushRow(rows, `events by ${name}, 7-day window`, store.name, refused || failed ? [NaN] : samples, TARGETS.eventsMs, note);
  }
  return values;
}

async function measureLeasePage(store: LeaseStore, rows: Row[], resource: string, events: string): Promise<void> {
  let failed: string | undefined;
  const samples = await sample(20, async () => {
    const result = await getLeaseDetailFromRoute({ store: store.name, resource: [resource] }, { entries: [{ store }] });
    if (!result.ok) failed = `refused (400): ${result.problem.message}`;
    else if (!result.view.ok) failed = `store read failed: ${result.view.error}`;
  });
  pushRow(rows, "lease page, resource with the most events", store.name, failed ? [NaN] : samples, TARGETS.detailMs, failed ?? `${resource}: ${events}`);
}

/** Deletes a namespace's day hashes and store-wide sums of the days and hours the stats keep; returns how many existed. */
async function dropStatsSums(redis: Redis, namespace: string): Promise<number> {
  const nowS = Math.floor(Date.now() / 1000);
  const keys: string[] = [];
  for (let day = Math.floor(nowS / 86_400) - 70; day <= Math.floor(nowS / 86_400); day++) {
    keys.push(buildStoreWideStatsKey(namespace, "d", day), buildStoreWideStatsHashKey(namespace, "d", day));
    for (let b = 0; b < DEFAULT_BUCKETS; b++) keys.push(buildStatsKey(buildBucketKeys(namespace, b), "d", day));
  }
  for (let hour = Math.floor((nowS - HOUR_TTL_S) / 3_600); hour <= Math.floor(nowS / 3_600); hour++) keys.push(buildStoreWideStatsKey(namespace, "h", hour), buildStoreWideStatsHashKey(namespace, "h", hour));
  // One key per UNLINK: on a cluster the keys live in many slots.
  const replies = (await redis.pipeline(keys.map((key) => ["unlink", key])).exec()) ?? [];
  return replies.reduce((n, [, removed]) => n + Number(removed ?? 0), 0);
}

/**
 * The overview's read model over long windows: window=30d and a 14-day custom range (both day
 * buckets; the custom range, not on midnights, is widened to the 15 whole UTC days it touches),
 * and window=7d, the longest read in hour buckets.
 */
async function measureLongOverviews(stores: LeaseStore[], rows: Row[], label: string): Promise<void> {
  const entries: Entries = stores.map((store) => ({ store }));
  const to = new Date();
  const parsed30 = parseOverviewParams({ window: "30d" });
  if (!parsed30.ok) {
    rows.push({ what: "overview, 30 days", store: label, p50: NaN, p95: NaN, target: TARGETS.overview30dMs, on: "p95", note: `not offered: ${parsed30.problem.param} ${parsed30.problem.message}` });
  } else {
    const samples = await sample(10, async () => {
      const result = await getOverview(parsed30.params, { entries, reuseClosedBuckets: false });
      if (!result.ok) throw new Error(result.problem.message);
    });
    pushRow(rows, "overview read model, window=30d (day buckets), every bucket read", label, samples, TARGETS.overview30dMs);
  }
  const params14 = parsedOrThrow(parseOverviewParams({ window: "custom", from: new Date(to.getTime() - 14 * DAY_MS).toISOString(), to: to.toISOString() }));
  const cold = await sample(10, async () => {
    const result = await getOverview(params14, { entries, reuseClosedBuckets: false });
    if (!result.ok) throw new Error(result.problem.message);
  });
  if (params14.range.bucketMs !== DAY_MS) throw new Error(`a 14-day custom overview reads ${params14.range.bucketMs} ms buckets, not days`);
  pushRow(rows, "overview read model, 14 days custom (day buckets, whole UTC days), every bucket read", label, cold, TARGETS.overview30dMs);
  const params7 = parsedOrThrow(parseOverviewParams({ window: "7d" }));
  const week = await sample(10, async () => {
    const result = await getOverview(params7, { entries, reuseClosedBuckets: false });
    if (!result.ok) throw new Error(result.problem.message);
  });
  pushRow(rows, "overview read model, window=7d (hour buckets), every bucket read", label, week, TARGETS.ttfbMs);
  for (const store of stores) {
    await guarded(rows, "chart data, 30 days of days (store.stats)", store.name, TARGETS.overview30dMs, async () => {
      const samples = await sample(10, async () => {
        const now = Date.now();
        const buckets = await store.stats({ from: new Date(now - DAYS * DAY_MS), to: new Date(now), bucketMs: DAY_MS, prefixDepth: 3 });
        if (buckets.length === 0) throw new Error(`30-day stats on ${store.name} are empty`);
      });
      pushRow(rows, "chart data, 30 days of days (store.stats)", store.name, samples, TARGETS.overview30dMs);
    });
  }
  // The longest hour read the console makes: window=7d, at the depth its tables rank (longer
  // windows read days). Measured against the 7-day overview's target.
  for (const store of stores) {
    await guarded(rows, "chart data, 7 days of hours at depth 3 (store.stats)", store.name, TARGETS.ttfbMs, async () => {
      const samples = await sample(10, async () => {
        const now = Date.now();
        const buckets = await store.stats({ from: new Date(now - 7 * DAY_MS), to: new Date(now), bucketMs: 3_600_000, prefixDepth: 3 });
        if (buckets.length === 0) throw new Error(`7-day stats on ${store.name} are empty`);
      });
      pushRow(rows, "chart data, 7 days of hours at depth 3 (store.stats)", store.name, samples, TARGETS.ttfbMs);
    });
  }
}

async function measurePast(store: LeaseStore, rows: Row[], owners: string[]): Promise<void> {
  const random = createRandom(11);
  const entries: Entries = [{ store }];
  const at = async (spanMs: number, owner?: string) => {
    const result = await getPastLeases({ at: new Date(Date.now() - 60_000 - random.next() * spanMs), store: store.name, owner, limit: 50 }, { entries });
    if (!result.ok) throw new Error(result.problem.message);
    const outcome = result.view.stores[0];
    if (!outcome?.ok) throw new Error(`?at= on ${store.name} failed: ${outcome ? outcome.error : "no answer"}`);
    return result.view.gaps.length;
  };
  let gaps = 0;
  const month = await sample(30, async () => (gaps += await at((DAYS - 0.1) * DAY_MS)));
  pushRow(rows, "?at= past state, instant in the last 30 days", store.name, month, TARGETS.pastMs, gaps > 0 ? `${gaps} answers said part of the history is gone` : undefined);
  const recent = await sample(30, () => at(7_200_000));
  pushRow(rows, "?at= past state, instant in the last 2 hours", store.name, recent, TARGETS.pastMs);
  const withOwner = await sample(20, () => at(7 * DAY_MS, random.pick(owners)));
  pushRow(rows, "?at= past state + owner filter, 7 days", store.name, withOwner, TARGETS.pastMs);
}

async function measureFuzz(stores: LeaseStore[], rows: Row[], label: string, seeded: { prefix: string[]; owner: string[]; task: string[]; resource: string[] }): Promise<boolean> {
  const entries: Entries = stores.map((store) => ({ store }));
  const random = createRandom(FUZZ_SEED);
  const statuses = new Map<number, number>();
  const samples: number[] = [];
  const timed: Array<{ ms: number; what: string }> = [];
  let bad = 0;
  const names = stores.map((s) => s.name) as [string, ...string[]];
  const requests = generateViewerRequests(() => random.next(), FUZZ_REQUESTS, { entries }, {
    storeNames: names,
    seeded,
    detailSegments: [[seeded.resource[0] ?? "jobs:1:1"], (seeded.resource[1] ?? "jobs:1").split(":")],
  });
  for (const request of requests) {
    const started = performance.now();
    const response = await request.read();
    const body = await response.text();
    const ms = performance.now() - started;
    samples.push(ms);
    timed.push({ ms, what: request.what.slice(0, 160) });
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    if (response.status >= 500 || STACK_TRACE.test(body)) {
      bad += 1;
      log(`fuzz: ${request.what.slice(0, 200)} → ${response.status} ${body.slice(0, 200)}`);
    }
  }
  const over = samples.filter((ms) => ms > TARGETS.fuzzMs).length;
  const slowest = timed.sort((a, b) => b.ms - a.ms).slice(0, 5);
  log(`fuzz: statuses ${JSON.stringify(Object.fromEntries(statuses))}; slowest: ${slowest.map((t) => `${t.ms.toFixed(0)} ms (${t.what})`).join(", ")}`);
  const note = `${over} over ${TARGETS.fuzzMs} ms, ${bad} 5xx or stack traces; statuses ${JSON.stringify(Object.fromEntries(statuses))}`;
  pushRow(rows, `${FUZZ_REQUESTS} fuzzed viewer requests`, label, samples, undefined, note);
  // Each request must finish within the target, so the slowest one is what is judged.
  const max = Math.max(...samples);
  rows.push({ what: `${FUZZ_REQUESTS} fuzzed viewer requests, the slowest`, store: label, p50: max, p95: max, target: TARGETS.fuzzMs, on: "p95" });
  return over === 0 && bad === 0;
}

/** A measurement that fails (a statement timeout, a refused read) becomes a missed row with its reason; the rest still run. */
async function guarded(rows: Row[], what: string, store: string, target: number | undefined, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 160);
    log(`${what} on ${store} failed: ${reason}`);
    rows.push({ what, store, p50: NaN, p95: NaN, target, on: target === undefined ? undefined : "p95", note: `failed: ${reason}` });
  }
}

// ------------------------------------------------------------------ the run

export async function runScale(options: ScaleOptions): Promise<BenchOutcome> {
  const suffix = options.reuse ?? options.suffix ?? randomBytes(5).toString("hex");
  const schemas = [`lw_bench_${suffix}_a`, `lw_bench_${suffix}_b`];
  const namespaces = [`lwb_${suffix}_a`, `lwb_${suffix}_b`];
  // Stores of a kind left out (--stores) are neither seeded, measured nor removed.
  const ownSchemas = options.kinds === "redis" ? [] : schemas;
  const ownNamespaces = options.kinds === "pg" ? [] : namespaces;
  const pool = new Pool({ connectionString: DATABASE_URL, max: 6 });
  pool.on("error", () => {});
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  redis.on("error", () => {});
  const pgStores = ownSchemas.map((schema, i) => new PostgresLeaseStore({ name: `pg-${"ab"[i]}`, pool, schema }));
  // The bench's own Redis stores seed (their projector folds millions of events) on a machine
  // where this process may get a fraction of a core: the store's 10 s command timeout, meant to
  // catch a Redis that stopped answering, would fire on a late timer instead. The console's
  // 4 s per-store deadline still bounds every measured read.
  const benchRedisClients = ownNamespaces.map(() => {
    const client = new Redis(REDIS_URL, { commandTimeout: 120_000, maxRetriesPerRequest: 1, autoResendUnfulfilledCommands: false });
    client.on("error", () => {});
    return client;
  });
  const redisStores = benchRedisClients.map((client, i) => new RedisLeaseStore({ name: `redis-${"ab"[i]}`, client, namespace: namespaces[i]! }));
  let stores: LeaseStore[] = [...pgStores, ...redisStores];
  const load = new LoadSampler();
  const rows: Row[] = [];
  let isMet = true;
  const leases = Math.round(100_000 * options.scale);
  // Interrupted (Ctrl-C, a CI timeout): the running seed statement is cancelled and the next
  // budget check throws, so `finally` removes what was written; a second signal exits at once.
  let interrupted: NodeJS.Signals | undefined;
  /** Why seeding must stop: a signal, or the other side's seeding failed. */
  let stopReason: string | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(130);
    interrupted = signal;
    stopReason = `interrupted by ${signal}`;
    log(`${signal}: stopping${options.keep || options.reuse ? "" : "; the seeded stores are removed"} (again to exit at once)`);
    void pool
      .query("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND strpos(query, $1) > 0", [`lw_bench_${suffix}_`])
      .catch(() => {});
  };
  const stopIfInterrupted = () => {
    if (stopReason) throw new Error(stopReason);
  };
  process.on("SIGINT", onSignal).on("SIGTERM", onSignal);
  log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM; load average now ${loadavg().map((l) => l.toFixed(2)).join(", ")}`);
  load.start();
  try {
    const hotPerStore = new Map<string, { resource: string; events: string }>();
    // A running console's sweeper compacts each Redis day and hour as it closes. Seeding writes
    // history into the past, into days and hours the stores' project() may already have summed
    // while the seed was still on its way through time: those sums are dropped and made again
    // from the seeded hours, by a store object that has summed nothing yet, before the seed is
    // checked against the stores' own reads or measured.
    const resumRedisStats = async () => {
      for (const [i, store] of redisStores.entries()) {
        if (!stores.includes(store)) continue;
        const before = Number((await redis.info("memory")).match(/used_memory:(\d+)/)?.[1] ?? 0);
        const started = performance.now();
        const dropped = await dropStatsSums(redis, namespaces[i]!);
        const compacting = new RedisLeaseStore({ name: store.name, client: benchRedisClients[i]!, namespace: namespaces[i]! });
        let written = 0;
        for (let result = { compacted: 0, pending: 1 }; result.pending > 0; ) {
          result = await compacting.compactDayStats();
          written += result.compacted;
          if (result.compacted === 0) break;
        }
        const after = Number((await redis.info("memory")).match(/used_memory:(\d+)/)?.[1] ?? 0);
        log(`${store.name}: ${dropped} stats sums dropped, ${written} day and store-wide stats hashes summed from the seeded hours in ${((performance.now() - started) / 1000).toFixed(1)} s; Redis memory ${after >= before ? "+" : "-"}${mib(Math.abs(after - before))}`);
      }
    };
    if (options.reuse) {
      // A kept run may be missing a store (an interrupted seed whose leftovers were removed): measure those present.
      const present: LeaseStore[] = [];
      for (const [i, store] of pgStores.entries()) {
        const { rowCount } = await pool.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schemas[i]]);
        if (rowCount) present.push(store);
      }
      for (const [i, store] of redisStores.entries()) if ((await redis.xlen(buildBucketKeys(namespaces[i]!, 0).events)) > 0) present.push(store);
      stores = present;
      if (stores.length === 0) throw new Error(`nothing kept under suffix ${suffix}`);
      // A kept schema may predate a migration (day rollups): bring it to the current version.
      for (const store of stores) if (store instanceof PostgresLeaseStore) await store.migrate();
      // A kept namespace may predate a read model (the live owner / task zsets): the store's own
      // projector builds it, as the console's interval projection would, before anything is measured.
      for (const store of stores) {
        if (!(store instanceof RedisLeaseStore)) continue;
        const caughtUp = await timeIt(async () => {
          while (!(await store.project()).isCaughtUp) stopIfInterrupted();
        });
        log(`${store.name}: projection caught up, read models built, in ${(caughtUp.ms / 1000).toFixed(1)} s`);
      }
      log(`measuring kept stores ${stores.map((st) => st.name).join(", ")} (suffix ${suffix}); nothing seeded`);
      await resumRedisStats();
      for (const store of stores) {
        const active = await store.countActive();
        const total = await sumStats(store, Date.now() - (DAYS + 1) * DAY_MS, Date.now() + 60_000);
        log(`${store.name} checked: ${active.toLocaleString("en")} live leases (countActive), ${total.toLocaleString("en")} events in its stats over 31 days; ${await compareEventShapes(store)}`);
        const index = pgStores.indexOf(store as PostgresLeaseStore);
        if (index >= 0) {
          const { rows: hot } = await pool.query<{ resource: string; n: string }>(
            `SELECT resource, count(*) AS n FROM ${quoteSchema(schemas[index]!)}.lease_events WHERE resource = ANY($1) GROUP BY resource ORDER BY count(*) DESC LIMIT 1`,
            [HOT_RESOURCES],
          );
          if (hot[0]) hotPerStore.set(store.name, { resource: hot[0].resource, events: `${Number(hot[0].n).toLocaleString("en")} events in the store` });
        } else {
          const page = await store.events({ resource: HOT_RESOURCES[0]!, from: new Date(Date.now() - DAYS * DAY_MS), to: new Date(), limit: 1 });
          hotPerStore.set(store.name, { resource: HOT_RESOURCES[0]!, events: page.items.length > 0 ? `a hot resource; its id list keeps ${RESOURCE_EVENTS_MAX_LEN}` : "no events found" });
        }
      }
    } else {
      log(
        `--scale ${options.scale}: per store ${leases.toLocaleString("en")} live leases and ≥ ${(1_000_000 * options.scale).toLocaleString("en")} events over ${DAYS} days, ` +
          `on ${[...ownSchemas, ...ownNamespaces].join(", ")}; seeding budget ${options.seedBudgetMin} min`,
      );
      const budget = makeBudget(options.seedBudgetMin, stopIfInterrupted);
      const seedStarted = performance.now();
      const redisMemoryBefore = await redisUsedMemory(redis);
      // Settled, not all: when one side fails the other must stop writing before `finally` cleans up.
      const [pgSettled, redisSettled] = await Promise.allSettled([
        // Side by side: each store's load is one server session, so two use both cores.
        Promise.all(pgStores.map((store, i) => seedPostgresStore(pool, store, schemas[i]!, options.scale, budget))).catch((error: unknown) => {
          stopReason ??= `stopped: the other stores' seeding failed (${error instanceof Error ? error.message : String(error)})`;
          throw error;
        }),
        // Side by side too: while one store's batch is in Redis, the other's events are generated here.
        Promise.all(redisStores.map((store, i) => seedRedisStore(redis, store, namespaces[i]!, options.scale, 5 + i * 100, budget))).catch((error: unknown) => {
          stopReason ??= `stopped: the other stores' seeding failed (${error instanceof Error ? error.message : String(error)})`;
          throw error;
        }),
      ]);
      if (pgSettled.status === "rejected") throw pgSettled.reason;
      if (redisSettled.status === "rejected") throw redisSettled.reason;
      const [pgSeeds, redisSeeds] = [pgSettled.value, redisSettled.value];
      log(`seeding took ${((performance.now() - seedStarted) / 60_000).toFixed(1)} min in all (Postgres and Redis side by side); ${load.summary("seeding")}`);
      log(`Redis memory: +${mib((await redisUsedMemory(redis)) - redisMemoryBefore)} for both namespaces (used_memory, which other users of this Redis move too)`);
      load.phase = "checking";
      await resumRedisStats();

      // The stores' own reads: live leases, event totals from the rollups / stats hashes, event shapes.
      for (const [i, store] of pgStores.entries()) {
        const seed = pgSeeds[i]!;
        const active = await store.countActive();
        const total = await sumStats(store, Date.now() - (DAYS + 1) * DAY_MS, Date.now() + 60_000);
        if (active !== seed.leases || total !== seed.events) throw new Error(`${store.name}: the store counts ${active} live leases and ${total} events; seeded ${seed.leases} and ${seed.events}`);
        const { rows: hot } = await pool.query<{ resource: string; n: string }>(
          `SELECT resource, count(*) AS n FROM ${quoteSchema(schemas[i]!)}.lease_events WHERE resource = ANY($1) GROUP BY resource ORDER BY count(*) DESC LIMIT 1`,
          [HOT_RESOURCES.concat(["queue:emails:shard-0", "cron:nightly-report"])],
        );
        hotPerStore.set(store.name, { resource: hot[0]?.resource ?? "queue:emails:shard-0", events: `${Number(hot[0]?.n ?? 0).toLocaleString("en")} events in the store` });
        log(
          `${store.name} checked: ${active.toLocaleString("en")} live leases (countActive), ${total.toLocaleString("en")} events in the rollups (stats over 31 days) = seeded; ` +
            `${await compareEventShapes(store)}; seeded in ${(seed.seedMs / 1000).toFixed(0)} s + rollups ${(seed.rollupMs / 1000).toFixed(0)} s`,
        );
      }
      for (const [i, store] of redisStores.entries()) {
        const seed = redisSeeds[i]!;
        const active = await store.countActive();
        const nowS = Date.now() / 1000;
        const total = await sumStats(store, Date.now() - (DAYS + 1) * DAY_MS, Date.now() + 60_000);
        // Hours whose stats hash is still alive: the store lets each expire HOUR_TTL_S after its hour.
        const expected = [...seed.eventsPerHour].reduce((n, [hour, count]) => ((hour + 1) * 3_600 + HOUR_TTL_S > nowS ? n + count : n), 0);
        if (active !== seed.leases || total !== expected) {
          throw new Error(`${store.name}: the store counts ${active} live leases and ${total} events in its stats; seeded ${seed.leases} and ${expected} in the hours it keeps`);
        }
        const streamed = (await redis.pipeline(Array.from({ length: DEFAULT_BUCKETS }, (_, b) => ["xlen", buildBucketKeys(namespaces[i]!, b).events])).exec()) ?? [];
        const kept = streamed.reduce((n, [, len]) => n + Number(len ?? 0), 0);
        const [top] = [...seed.perHotResource].sort((a, b) => b[1] - a[1]);
        hotPerStore.set(store.name, { resource: top?.[0] ?? HOT_RESOURCES[0]!, events: `${(top?.[1] ?? 0).toLocaleString("en")} events seeded, its id list keeps ${RESOURCE_EVENTS_MAX_LEN}` });
        log(
          `${store.name} checked: ${active.toLocaleString("en")} live leases (countActive), ${total.toLocaleString("en")} events in the stats hashes of the last ${HOUR_TTL_S / 86_400} days = seeded (of ${seed.events.toLocaleString("en")}); ` +
            `bucket streams keep ${kept.toLocaleString("en")} (cap ${DEFAULT_EVENTS_MAX_LEN.toLocaleString("en")} per bucket × ${DEFAULT_BUCKETS}); ${await compareEventShapes(store)}; ` +
            `every stream of the ${seed.countedBuckets} buckets that trimmed is full; seeded in ${(seed.seedMs / 1000).toFixed(0)} s (projecting ${(seed.projectMs / 1000).toFixed(0)} s of it)`,
        );
      }
    }
    for (const store of stores) if (!hotPerStore.has(store.name)) hotPerStore.set(store.name, { resource: HOT_RESOURCES[0]!, events: "kept run" });
    load.phase = "measuring";
    const storesLabel = `all ${stores.length}`;
    const filterValues = { owners: new Set<string>(), tasks: new Set<string>() };
    for (const store of stores) {
      stopIfInterrupted();
      await guarded(rows, "leases list by prefix", store.name, TARGETS.listMs, () => measureLists(store, rows, leases));
      let values: { owners: string[]; tasks: string[] } = { owners: [], tasks: [] };
      await guarded(rows, "events by owner, kind, task, 7-day window", store.name, TARGETS.eventsMs, async () => {
        values = await measureEventFilters(store, rows);
      });
      values.owners.slice(0, 5).forEach((o) => filterValues.owners.add(o));
      values.tasks.slice(0, 5).forEach((t) => filterValues.tasks.add(t));
      const hot = hotPerStore.get(store.name)!;
      await guarded(rows, "lease page, resource with the most events", store.name, TARGETS.detailMs, () => measureLeasePage(store, rows, hot.resource, hot.events));
      await guarded(rows, "?at= past state", store.name, TARGETS.pastMs, () => measurePast(store, rows, values.owners.length > 0 ? values.owners : ["nobody"]));
    }
    stopIfInterrupted();
    await guarded(rows, "overview, 30, 14 and 7 days", storesLabel, TARGETS.overview30dMs, () => measureLongOverviews(stores, rows, storesLabel));
    isMet = (await measureFuzz(stores, rows, storesLabel, {
      prefix: ["tenant_1:invoice-sync", "tenant_7:", "queue:emails"],
      owner: [...filterValues.owners].slice(0, 4),
      task: [...filterValues.tasks].slice(0, 4),
      resource: [hotPerStore.get(stores[0]!.name)!.resource, "tenant_1:invoice-sync:batch-0"],
    })) && isMet;

    stopIfInterrupted();
    if (process.env.BENCH_CONSOLE_SKIP_HTTP !== "1") {
      const storesEnv = JSON.stringify([
        ...pgStores.map((store, i) => ({ name: store.name, kind: "postgres", url: DATABASE_URL, schema: schemas[i]! })),
        ...redisStores.map((store, i) => ({ name: store.name, kind: "redis", url: REDIS_URL, namespace: namespaces[i]! })),
      ].filter((config) => stores.some((store) => store.name === config.name)));
      try {
        await measureOverviewHttp(storesEnv, rows, storesLabel);
      } catch (error) {
        log(`overview over HTTP not measured: ${error instanceof Error ? error.message : String(error)}`);
        rows.push({ what: "overview TTFB (next start) — NOT MEASURED, see above", store: storesLabel, p50: NaN, p95: NaN, target: TARGETS.ttfbMs, on: "p95" });
      }
    }
    log(load.summary("measuring"));
  } catch (error) {
    // What was measured before the failure is still worth reading.
    if (rows.length > 0) printTable(rows);
    throw error;
  } finally {
    process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
    load.stop();
    for (const store of stores) await store.close().catch(() => {});
    // A --reuse run measures stores an earlier run kept: they stay for the next measurement.
    if (options.keep || options.reuse) {
      log(`kept: schemas ${ownSchemas.join(", ") || "none"}, namespaces ${ownNamespaces.join(", ") || "none"}; measure again with --scale ${options.scale} --reuse ${suffix}`);
    } else {
      for (const schema of ownSchemas) await pool.query(`DROP SCHEMA IF EXISTS ${quoteSchema(schema)} CASCADE`).catch((e: unknown) => log(`could not drop ${schema}: ${String(e)}`));
      let deleted = 0;
      for (const namespace of ownNamespaces) deleted += await deleteRedisNamespace(redis, namespace).catch(() => 0);
      log(`cleaned up: dropped ${ownSchemas.join(", ") || "no schema"}, deleted ${deleted.toLocaleString("en")} redis keys`);
    }
    await pool.end();
    redis.disconnect();
    for (const client of benchRedisClients) client.disconnect();
  }
  return { isMet: printTable(rows) && isMet };
}
