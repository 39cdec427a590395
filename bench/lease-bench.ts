/**
 * Library benchmark: the lease stores against bare baselines at the same
 * concurrency, in the same run, on loopback.
 *
 * - Redis: RedisLeaseStore acquire+release (Lua scripts by SHA, events, counters) vs
 *   bare `SET key val NX PX` + compare-and-delete Lua via EVALSHA. One connection
 *   each, both clients created with the same (default) options.
 * - Postgres: PostgresLeaseStore acquire+release (one statement each, events) vs
 *   bare `INSERT … ON CONFLICT DO NOTHING` + `DELETE … WHERE resource=$1 AND
 *   lease_id=$2` on a plain table. Same pool size each.
 *
 * CONCURRENCY loops run acquire→release back to back over distinct resources
 * (no contention: this measures the cost of an uncontended lease). Store and
 * baseline alternate in ROUNDS short rounds so drift on the machine hits both.
 * Targets from DESIGN.md: Redis ≥ 0.8× bare, Postgres ≥ 0.7× bare, Redis p99
 * acquire ≤ 2 ms. Each side also shows what a pair costs: this process's CPU,
 * and the server's (Redis: INFO cpu; Postgres: its backends' /proc CPU), which tell which end limits it.
 *
 * Knobs: LW_BENCH_BACKENDS (redis,postgres), LW_BENCH_CONCURRENCY (16),
 * LW_BENCH_SECONDS per side (5), LW_BENCH_ROUNDS (4); REDIS_URL / DATABASE_URL
 * pick the servers (a private Redis keeps others' traffic out of the CPU column).
 * The machine is usually shared: run it a few times and take the median.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { Redis } from "ioredis";
import pg from "pg";
import { PostgresLeaseStore } from "@/lib/lease/postgres/store";
import { RedisLeaseStore } from "@/lib/lease/redis/store";
import { freshPgSchema, freshRedisNamespace, TEST_DATABASE_URL, TEST_REDIS_URL } from "@/lib/lease/testing/isolation";
import type { LeaseStore } from "@/lib/lease/types";
import type { BenchOutcome } from "./run";

const CONCURRENCY = Number(process.env.LW_BENCH_CONCURRENCY ?? 16);
const SECONDS_PER_SIDE = Number(process.env.LW_BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.LW_BENCH_ROUNDS ?? 4);
/** `LW_BENCH_BACKENDS=redis` (or `postgres`) runs one side only; default both. */
const BACKENDS = (process.env.LW_BENCH_BACKENDS ?? "redis,postgres").split(",").map((b) => b.trim());
const WARMUP_MS = 500;
const PG_POOL_SIZE = 10;
const TTL_MS = 30_000;
const TARGETS = { redisRatio: 0.8, pgRatio: 0.7, redisP99Ms: 2 };

/** One acquire+release pair; returns the acquire latency in ms. */
type Pair = (loop: number, n: number) => Promise<number>;

interface Measurement {
  pairs: number;
  elapsedMs: number;
  acquireMs: number[];
  /** CPU this process spent (user + system), µs. */
  clientCpuUs: number;
  /** CPU the server spent, µs, when it can be read (Redis INFO cpu); includes other clients of a shared server. */
  serverCpuUs: number | null;
}

/** The server's CPU time so far in seconds, for the cost columns; null when not available. */
type ServerCpu = () => Promise<number | null>;

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function measure(pair: Pair, durationMs: number, record: boolean, readServerCpu: ServerCpu): Promise<Measurement> {
  const acquireMs: number[] = [];
  let pairs = 0;
  const serverBefore = await readServerCpu();
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  const until = startedAt + durationMs;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, loop) => {
      for (let n = 0; performance.now() < until; n++) {
        const ms = await pair(loop, n);
        if (record) acquireMs.push(ms);
        pairs += 1;
      }
    }),
  );
  const elapsedMs = performance.now() - startedAt;
  const cpu = process.cpuUsage(cpuBefore);
  const serverAfter = await readServerCpu();
  const serverCpuUs = serverBefore === null || serverAfter === null ? null : (serverAfter - serverBefore) * 1e6;
  return { pairs, elapsedMs, acquireMs, clientCpuUs: cpu.user + cpu.system, serverCpuUs };
}

/** Runs both sides, alternating, after a warm-up of each. */
async function compare(
  sides: Record<"store" | "bare", Pair>,
  serverCpu: ServerCpu | Record<"store" | "bare", ServerCpu> = async () => null,
): Promise<Record<"store" | "bare", Measurement>> {
  // One reader for both sides (a whole server) or one per side (each side's own backends).
  const readServerCpu = typeof serverCpu === "function" ? { store: serverCpu, bare: serverCpu } : serverCpu;
  await measure(sides.bare, WARMUP_MS, false, readServerCpu.bare);
  await measure(sides.store, WARMUP_MS, false, readServerCpu.store);
  const empty = (): Measurement => ({ pairs: 0, elapsedMs: 0, acquireMs: [], clientCpuUs: 0, serverCpuUs: 0 });
  const total = { store: empty(), bare: empty() };
  const roundMs = (SECONDS_PER_SIDE * 1000) / ROUNDS;
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? (["bare", "store"] as const) : (["store", "bare"] as const)) {
      const m = await measure(sides[side], roundMs, true, readServerCpu[side]);
      total[side].pairs += m.pairs;
      total[side].elapsedMs += m.elapsedMs;
      total[side].acquireMs.push(...m.acquireMs);
      total[side].clientCpuUs += m.clientCpuUs;
      total[side].serverCpuUs = total[side].serverCpuUs === null || m.serverCpuUs === null ? null : total[side].serverCpuUs + m.serverCpuUs;
    }
  }
  total.store.acquireMs.sort((a, b) => a - b);
  total.bare.acquireMs.sort((a, b) => a - b);
  return total;
}

function storePair(store: LeaseStore, owner: string): Pair {
  return async (loop) => {
    const resource = `bench:${loop}`;
    const t0 = performance.now();
    const r = await store.acquire({ resource, owner, task: "bench", ttlMs: TTL_MS });
    const ms = performance.now() - t0;
    if (!r.acquired) throw new Error(`bench: ${resource} unexpectedly held by ${r.holder.owner}`);
    const released = await store.release({ resource, leaseId: r.lease.leaseId });
    if (!released.released) throw new Error(`bench: release of ${resource} refused (${released.reason})`);
    return ms;
  };
}

// The classic single-instance Redis lock: delete only if the value is still ours.
const COMPARE_AND_DELETE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

async function benchRedis(): Promise<Row[]> {
  const fresh = freshRedisNamespace();
  const storeClient = new Redis(fresh.url);
  const bareClient = new Redis(fresh.url);
  const store = new RedisLeaseStore({ name: "bench-redis", client: storeClient, namespace: fresh.namespace });
  try {
    const sha = String(await bareClient.script("LOAD", COMPARE_AND_DELETE));
    const bare: Pair = async (loop) => {
      const key = `${fresh.namespace}:bare:${loop}`;
      const value = randomUUID();
      const t0 = performance.now();
      const ok = await bareClient.set(key, value, "PX", TTL_MS, "NX");
      const ms = performance.now() - t0;
      if (ok !== "OK") throw new Error(`bench: ${key} unexpectedly held`);
      const deleted = await bareClient.evalsha(sha, 1, key, value);
      if (deleted !== 1) throw new Error(`bench: compare-and-delete of ${key} refused`);
      return ms;
    };
    const readServerCpu = async () => {
      const info = await bareClient.info("cpu");
      const user = /used_cpu_user:([\d.]+)/.exec(info)?.[1];
      const system = /used_cpu_sys:([\d.]+)/.exec(info)?.[1];
      return user === undefined || system === undefined ? null : Number(user) + Number(system);
    };
    const m = await compare({ store: storePair(store, "bench"), bare }, readServerCpu);
    return rows("redis", m, TARGETS.redisRatio, TARGETS.redisP99Ms);
  } finally {
    await store.close();
    storeClient.disconnect();
    bareClient.disconnect();
    await fresh.drop();
  }
}

async function benchPostgres(): Promise<Row[]> {
  const fresh = freshPgSchema();
  // Each pool names itself so the server CPU of its own backends can be told apart.
  const storePool = new pg.Pool({ connectionString: fresh.connectionString, max: PG_POOL_SIZE, application_name: `${fresh.schema}_store` });
  const barePool = new pg.Pool({ connectionString: fresh.connectionString, max: PG_POOL_SIZE, application_name: `${fresh.schema}_bare` });
  storePool.on("error", () => undefined);
  barePool.on("error", () => undefined);
  const store = new PostgresLeaseStore({ name: "bench-pg", pool: storePool, schema: fresh.schema });
  try {
    await store.migrate();
    // The bare baseline: a plain lock table, no events, no fencing.
    const table = `"${fresh.schema}".bare_locks`;
    await barePool.query(
      `CREATE TABLE ${table} (resource text PRIMARY KEY, lease_id uuid NOT NULL, owner text NOT NULL, expires_at timestamptz NOT NULL)`,
    );
    const insert = `INSERT INTO ${table} (resource, lease_id, owner, expires_at) VALUES ($1, $2, $3, clock_timestamp() + $4 * interval '1 millisecond') ON CONFLICT DO NOTHING`;
    const remove = `DELETE FROM ${table} WHERE resource = $1 AND lease_id = $2`;
    const bare: Pair = async (loop) => {
      const resource = `bench:${loop}`;
      const leaseId = randomUUID();
      const t0 = performance.now();
      const inserted = await barePool.query(insert, [resource, leaseId, "bench", TTL_MS]);
      const ms = performance.now() - t0;
      if (inserted.rowCount !== 1) throw new Error(`bench: ${resource} unexpectedly held`);
      const deleted = await barePool.query(remove, [resource, leaseId]);
      if (deleted.rowCount !== 1) throw new Error(`bench: delete of ${resource} refused`);
      return ms;
    };
    const m = await compare({ store: storePair(store, "bench"), bare }, {
      store: () => readBackendCpu(barePool, `${fresh.schema}_store`),
      bare: () => readBackendCpu(barePool, `${fresh.schema}_bare`),
    });
    return rows("postgres", m, TARGETS.pgRatio, null);
  } finally {
    await store.close();
    await storePool.end();
    await barePool.end();
    await fresh.drop();
  }
}

/**
 * CPU seconds (user + system) spent so far by the Postgres backends serving one pool,
 * read from /proc: works when the server runs on this machine and /proc/<pid> is
 * readable (as here); null otherwise. Backends only, so WAL writer and checkpointer
 * are not counted. Tick resolution (10 ms) is plenty over a round of thousands of pairs.
 */
async function readBackendCpu(pool: pg.Pool, applicationName: string): Promise<number | null> {
  const { rows } = await pool.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [applicationName]);
  let ticks = 0;
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ");
      if (!fields) return null;
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      return null;
    }
  }
  return rows.length === 0 ? null : ticks / CLOCK_TICKS_PER_SECOND;
}
const CLOCK_TICKS_PER_SECOND = 100;

interface Row {
  backend: string;
  side: "store" | "bare";
  pairsPerSec: number;
  clientUsPerPair: number;
  serverUsPerPair: number | null;
  p50Ms: number;
  p99Ms: number;
  ratio: number | null;
  target: string;
  isMet: boolean | null;
}

function rows(backend: string, m: Record<"store" | "bare", Measurement>, ratioTarget: number, p99TargetMs: number | null): Row[] {
  const rate = (x: Measurement) => (x.pairs / x.elapsedMs) * 1000;
  const ratio = rate(m.store) / rate(m.bare);
  const p99 = quantile(m.store.acquireMs, 0.99);
  const targets = [`≥ ${ratioTarget}× bare`];
  let isMet = ratio >= ratioTarget;
  if (p99TargetMs !== null) {
    targets.push(`p99 ≤ ${p99TargetMs} ms`);
    isMet &&= p99 <= p99TargetMs;
  }
  const costs = (x: Measurement) => ({
    clientUsPerPair: x.clientCpuUs / x.pairs,
    serverUsPerPair: x.serverCpuUs === null ? null : x.serverCpuUs / x.pairs,
  });
  return [
    { backend, side: "bare", pairsPerSec: rate(m.bare), ...costs(m.bare), p50Ms: quantile(m.bare.acquireMs, 0.5), p99Ms: quantile(m.bare.acquireMs, 0.99), ratio: null, target: "", isMet: null },
    { backend, side: "store", pairsPerSec: rate(m.store), ...costs(m.store), p50Ms: quantile(m.store.acquireMs, 0.5), p99Ms: p99, ratio, target: targets.join(", "), isMet },
  ];
}

function printTable(all: Row[]): void {
  const header = ["backend", "side", "pairs/s", "client CPU µs/pair", "server CPU µs/pair", "acquire p50 ms", "acquire p99 ms", "ratio", "target", ""];
  const body = all.map((r) => [
    r.backend,
    r.side,
    r.pairsPerSec.toFixed(0),
    r.clientUsPerPair.toFixed(1),
    r.serverUsPerPair === null ? "" : r.serverUsPerPair.toFixed(1),
    r.p50Ms.toFixed(3),
    r.p99Ms.toFixed(3),
    r.ratio === null ? "" : `${r.ratio.toFixed(2)}×`,
    r.target,
    r.isMet === null ? "" : r.isMet ? "ok" : "MISS",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const b of body) console.log(line(b));
}

export async function run(): Promise<BenchOutcome> {
  console.log(
    `lease stores vs bare baselines: ${CONCURRENCY} loops over distinct resources, ${SECONDS_PER_SIDE} s per side in ${ROUNDS} alternating rounds, ` +
      `redis ${TEST_REDIS_URL}, postgres ${TEST_DATABASE_URL.replace(/:[^:@/]*@/, ":***@")} (pool ${PG_POOL_SIZE})`,
  );
  const all = [
    ...(BACKENDS.includes("redis") ? await benchRedis() : []),
    ...(BACKENDS.includes("postgres") ? await benchPostgres() : []),
  ];
  printTable(all);
  console.log(
    "(server CPU: Redis' own INFO cpu, which on a shared server includes everyone else's commands too; " +
      "Postgres: the /proc CPU of each side's own backends, when the server runs on this machine)",
  );
  return { isMet: all.every((r) => r.isMet !== false) };
}
