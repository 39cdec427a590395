/**
 * Lock API benchmark: acquire+release pairs through `npm run api` (a child process,
 * as in production) over HTTP keep-alive, CONCURRENCY loops each, in alternating rounds:
 * - library: RedisLeaseStore called directly on the same Redis server;
 * - api: the API on that Redis store;
 * - library-pg: PostgresLeaseStore called directly (pool of 10, as the API's);
 * - api-pg: the same API process on a Postgres store;
 * - api-pg-keyed: api-pg with a new Idempotency-Key on every acquire (a lease id the store is
 *   given rather than one it chooses);
 * - etcd: a peer's lock API, etcd 3.4's own (/v3/lock/lock and /v3/lock/unlock over its HTTP
 *   gateway) on a throwaway single-member etcd started here on loopback (temp data dir, stopped
 *   at the end), with one etcd lease per loop granted up front, so a pair is lock + unlock; the
 *   same undici client.
 *
 * Targets (DESIGN.md): API ≥ 0.5× the library's pairs/s on Redis; API acquire p99 ≤ 3 ms;
 * API on Postgres ≥ 1.0× etcd's lock API.
 * "Where the time goes": CPU per pair of this process (the HTTP client, or the library),
 * of the API process (read from /proc), and of the server behind it (Redis: INFO cpu, a shared
 * server, so noisy; Postgres: the /proc CPU of the side's own backends; etcd: its /proc CPU).
 *
 * Knobs: LW_BENCH_CONCURRENCY (16), LW_BENCH_SECONDS per side (6), LW_BENCH_ROUNDS (4),
 * LW_BENCH_API_SIDES (a comma list of the sides above; default all),
 * LW_BENCH_API_LOG_LEVEL (info, as deployed; "warn" shows what request logging costs),
 * LW_BENCH_API_CPU_PROF (a directory: the API process writes a V8 CPU profile there, and the
 * bench prints where the API process spent its CPU during the measured rounds of each API side),
 * LW_BENCH_API_BASELINE (another checkout, e.g. of main, with node_modules: its API runs as
 * api-baseline and api-pg-baseline in the same rounds, on a Postgres schema that checkout's own
 * migrations made, so a change, of the schema too, can be compared on a loaded machine),
 * LW_BENCH_ETCD (the etcd binary, default /usr/bin/etcd).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Redis } from "ioredis";
import pg from "pg";
import { Pool, type Dispatcher } from "undici";
import { TokenStore } from "@/lib/api/tokens";
import { PostgresLeaseStore, RedisLeaseStore } from "@leasewatch/lease";
import { findFreePort } from "@/scripts/throwaway-servers";
import { freshPgSchema, freshRedisNamespace, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { median } from "./lease-bench";
import type { BenchOutcome } from "./run";

const CONCURRENCY = Number(process.env.LW_BENCH_CONCURRENCY ?? 16);
const SECONDS_PER_SIDE = Number(process.env.LW_BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.LW_BENCH_ROUNDS ?? 4);
const LOG_LEVEL = process.env.LW_BENCH_API_LOG_LEVEL ?? "info";
const CPU_PROF_DIR = process.env.LW_BENCH_API_CPU_PROF;
const BASELINE_DIR = process.env.LW_BENCH_API_BASELINE;
const ETCD_BIN = process.env.LW_BENCH_ETCD ?? "/usr/bin/etcd";
const ALL_SIDES = ["library", "api", "library-pg", "api-pg", "api-pg-keyed", "etcd"] as const;
const SIDES = (process.env.LW_BENCH_API_SIDES ?? ALL_SIDES.join(",")).split(",").map((s) => s.trim());
const TTL_MS = 30_000;
/** etcd leases outlive any run of this bench (it revokes nothing: the server and its data go at the end). */
const ETCD_LEASE_TTL_S = 3_600;
const WARMUP_MS = 1_000;
const TARGETS = { ratio: 0.5, p99Ms: 3, pgVsEtcd: 1.0 };
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CLK_TCK = 100;
const PG_POOL_SIZE = 10;

type Pair = (loop: number) => Promise<number>;
type Side = (typeof ALL_SIDES)[number] | "api-baseline" | "api-pg-baseline";
interface Measurement {
  pairs: number;
  elapsedMs: number;
  acquireMs: number[];
  clientCpuUs: number;
  apiCpuUs: number;
  serverCpuUs: number;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function processCpuUs(pid: number): number {
  // /proc/<pid>/stat fields 14 and 15: utime and stime in clock ticks.
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) / CLK_TCK) * 1e6;
}

/**
 * One exchange as a lean worker client makes it: undici (Node's own HTTP/1.1 client, under fetch) on
 * a keep-alive pool of CONCURRENCY connections, the real headers and body, the whole reply read and parsed.
 * node:http's client costs about twice the CPU per request, which would count against the API here.
 */
async function request(
  pool: Pool,
  method: string,
  urlPath: string,
  token: string | null,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  const data = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = { ...extraHeaders };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (data !== undefined) headers["content-type"] = "application/json";
  const res = await pool.request({ method: method as Dispatcher.HttpMethod, path: urlPath, headers, body: data });
  const text = await res.body.text();
  return { status: res.statusCode, json: JSON.parse(text || "{}") as Record<string, unknown> };
}

async function startApiProcess(root: string, env: Record<string, string>, profileDir?: string): Promise<{ pid: number; port: number; stop: () => Promise<void> }> {
  // node itself (tsx as a loader) rather than the tsx wrapper: one process to measure, and node flags apply.
  const profile = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(process.execPath, ["--import", "tsx", ...profile, path.join(root, "scripts/api.ts")], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      const match = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => reject(new Error(`api exited (${code}):\n${output.slice(-2000)}`)));
  });
  // Drain logs so a full pipe never blocks the server.
  child.stdout.removeAllListeners("data");
  child.stdout.resume();
  return { pid: child.pid!, port, stop: () => stopGroup(child) };
}

async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  process.kill(-child.pid!, "SIGTERM");
  await exited;
}

/** A single-member etcd on loopback ports, its data in a temp dir removed by stop(). */
async function startEtcd(): Promise<{ pid: number; url: string; stop: () => Promise<void> }> {
  if (!existsSync(ETCD_BIN)) {
    throw new Error(`no etcd at ${ETCD_BIN}: install it (apt-get install etcd-server), point LW_BENCH_ETCD at one, or leave etcd out of LW_BENCH_API_SIDES`);
  }
  const [clientPort, peerPort] = [await findFreePort(), await findFreePort()];
  const dataDir = mkdtempSync(path.join(tmpdir(), "lw-bench-etcd-"));
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const child = spawn(
    ETCD_BIN,
    [
      "--name", "bench", "--data-dir", dataDir,
      "--listen-client-urls", client, "--advertise-client-urls", client,
      "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
      "--initial-cluster", `bench=${peer}`, "--log-level", "warn",
    ],
    { stdio: ["ignore", "ignore", "pipe"], detached: true },
  );
  let output = "";
  child.stderr.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  // A bench that dies without reaching its finally still takes etcd and its data with it.
  const killOnExit = () => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // Already gone.
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  process.once("exit", killOnExit);
  const stop = async () => {
    process.off("exit", killOnExit);
    await stopGroup(child);
    rmSync(dataDir, { recursive: true, force: true });
  };
  const deadline = performance.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`etcd exited (${child.exitCode}):\n${output}`);
    const ok = await fetch(`${client}/health`).then((r) => r.ok, () => false);
    if (ok) return { pid: child.pid!, url: client, stop };
    if (performance.now() > deadline) {
      await stop();
      throw new Error(`etcd did not become healthy within 20 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * CPU µs so far of the Postgres backends serving one application_name, per backend pid (/proc;
 * the server runs on this machine). Summed as deltas per pid, so a backend that connects between
 * two reads counts from zero.
 */
async function backendCpuUs(admin: pg.Pool, applicationName: string): Promise<Map<number, number>> {
  const { rows } = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [applicationName]);
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      out.set(pid, processCpuUs(pid));
    } catch {
      // The backend ended meanwhile.
    }
  }
  return out;
}
function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let us = 0;
  for (const [pid, now] of after) us += now - (before.get(pid) ?? 0);
  return us;
}

/** CPU of the API process by where it went, from a V8 CPU profile, over the given monotonic windows (µs). */
function profileBreakdown(file: string, windows: ReadonlyArray<[number, number]>): Map<string, number> {
  interface Node { id: number; callFrame: { functionName: string; url: string }; children?: number[] }
  const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number };
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // The first matching frame from the leaf up names the component; order matters (a zod call inside the library counts as validation).
  const rules: Array<[string, (url: string, fn: string) => boolean]> = [
    ["logging (pino)", (u) => /node_modules\/(pino|sonic-boom|thread-stream)/.test(u)],
    ["metrics (prom-client)", (u) => u.includes("node_modules/prom-client")],
    ["validation (zod)", (u) => u.includes("node_modules/zod")],
    ["lease handles (HMAC)", (u) => u.includes("lib/api/handle.ts")],
    ["token lookup", (u) => u.includes("lib/api/tokens.ts")],
    ["pg driver (pg, pg-protocol, pg-pool)", (u) => /node_modules\/(pg|pg-protocol|pg-pool|pg-types|postgres-[a-z]+)\//.test(u)],
    ["ioredis", (u) => u.includes("node_modules/ioredis")],
    ["lease library", (u) => u.includes("lib/lease/")],
    ["fastify (routing, hooks, reply)", (u) => /node_modules\/(fastify|@fastify|find-my-way|avvio|light-my-request|fast-json-stringify|secure-json-parse)/.test(u)],
    ["API handlers (server.ts, scope, limits)", (u) => u.includes("lib/api/")],
    ["garbage collection", (_u, fn) => fn === "(garbage collector)"],
  ];
  const out = new Map<string, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    const delta = profile.timeDeltas[i + 1] ?? 0;
    if (!windows.some(([a, b]) => at >= a && at < b)) return;
    const leaf = nodes.get(id);
    if (!leaf || leaf.callFrame.functionName === "(idle)") return;
    let label = "node core (http parse, sockets, timers, promises)";
    outer: for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) {
      const frame = nodes.get(x)!.callFrame;
      for (const [name, match] of rules) {
        if (match(frame.url, frame.functionName)) {
          label = name;
          break outer;
        }
      }
    }
    out.set(label, (out.get(label) ?? 0) + delta);
  });
  return out;
}

export async function run(): Promise<BenchOutcome> {
  const unknown = SIDES.filter((s) => !(ALL_SIDES as readonly string[]).includes(s));
  if (unknown.length > 0) throw new Error(`LW_BENCH_API_SIDES: unknown side(s) ${unknown.join(", ")}; known: ${ALL_SIDES.join(", ")}`);
  const wants = (side: Side) => SIDES.includes(side);
  const redisNs = freshRedisNamespace();
  const baseNs = freshRedisNamespace();
  const libNs = freshRedisNamespace();
  const tokenSchema = freshPgSchema(TEST_DATABASE_URL);
  const apiPg = freshPgSchema(TEST_DATABASE_URL);
  const basePg = freshPgSchema(TEST_DATABASE_URL);
  const libPg = freshPgSchema(TEST_DATABASE_URL);
  const tokens = new TokenStore({ url: TEST_DATABASE_URL, schema: tokenSchema.schema });
  const libClient = new Redis(libNs.url);
  const info = new Redis(libNs.url);
  const library = new RedisLeaseStore({ name: "bench-redis", client: libClient, namespace: libNs.namespace });
  // Each Postgres side's backends name themselves, so their CPU can be read apart.
  const appName = (schema: string) => `${schema}_bench`;
  const libPgPool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: PG_POOL_SIZE, application_name: appName(libPg.schema) });
  libPgPool.on("error", () => undefined);
  const libraryPg = new PostgresLeaseStore({ name: "bench-pg", pool: libPgPool, schema: libPg.schema });
  const admin = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
  admin.on("error", () => undefined);
  const pools: Pool[] = [];
  const apis: Array<{ stop: () => Promise<void> }> = [];
  let etcd: Awaited<ReturnType<typeof startEtcd>> | undefined;
  try {
    const { token } = await tokens.create({
      name: "bench",
      prefixes: ["bench:"],
      stores: ["bench-redis", "bench-pg"],
      actions: ["acquire", "release"],
      expiresAt: new Date(Date.now() + 3_600_000),
      ratePerSec: 100_000,
      maxConcurrent: 10_000,
      createdBy: "bench",
    });
    // The API does not migrate its stores (LEASEWATCH_MIGRATE is off in production too): the bench does.
    // The baseline's schema is migrated by the baseline's own library: a change of schema is part of what it compares.
    const Baseline = BASELINE_DIR
      ? ((await import(pathToFileURL(path.resolve(BASELINE_DIR, "lib/lease/index.ts")).href)) as { PostgresLeaseStore: typeof PostgresLeaseStore }).PostgresLeaseStore
      : PostgresLeaseStore;
    for (const [fresh, Store] of [[apiPg, PostgresLeaseStore], [basePg, Baseline], [libPg, PostgresLeaseStore]] as const) {
      const migrator = new Store({ name: "bench-pg", connectionString: TEST_DATABASE_URL, schema: fresh.schema });
      await migrator.migrate();
      await migrator.close();
    }
    const apiEnv = (ns: ReturnType<typeof freshRedisNamespace>, pgSchema: string) => ({
      LEASEWATCH_STORES: JSON.stringify([
        { name: "bench-redis", kind: "redis", url: ns.url, namespace: ns.namespace },
        { name: "bench-pg", kind: "postgres", url: `${TEST_DATABASE_URL}${TEST_DATABASE_URL.includes("?") ? "&" : "?"}application_name=${appName(pgSchema)}`, schema: pgSchema },
      ]),
      LEASEWATCH_AUDIT_URL: TEST_DATABASE_URL,
      LEASEWATCH_CONSOLE_SCHEMA: tokenSchema.schema,
      LEASEWATCH_API_PORT: "0",
      LEASEWATCH_API_LOG_LEVEL: LOG_LEVEL,
      NODE_ENV: "development",
    });
    const needsApi = wants("api") || wants("api-pg") || wants("api-pg-keyed");
    const api = needsApi ? await startApiProcess(ROOT, apiEnv(redisNs, apiPg.schema), CPU_PROF_DIR) : undefined;
    if (api) apis.push(api);
    const baseline = needsApi && BASELINE_DIR ? await startApiProcess(path.resolve(BASELINE_DIR), apiEnv(baseNs, basePg.schema)) : undefined;
    if (baseline) apis.push(baseline);
    if (wants("etcd")) {
      etcd = await startEtcd();
      apis.push(etcd);
    }

    const httpPool = (origin: string) => {
      const pool = new Pool(origin, { connections: CONCURRENCY, pipelining: 1 });
      pools.push(pool);
      return pool;
    };
    /** `keyed`: every acquire carries a new Idempotency-Key, as a client that may retry it sends. */
    const apiPair = (port: number, store: string, keyed = false): Pair => {
      const pool = httpPool(`http://127.0.0.1:${port}`);
      return async (loop) => {
        const t0 = performance.now();
        const body = { store, resource: `bench:${loop}`, ownerId: "bench", task: "bench", ttlMs: TTL_MS };
        const acquired = await request(pool, "POST", "/v1/locks/acquire", token, body, keyed ? { "idempotency-key": randomUUID() } : {});
        const ms = performance.now() - t0;
        if (acquired.json.acquired !== true) throw new Error(`bench: api acquire failed: ${acquired.status} ${JSON.stringify(acquired.json)}`);
        const released = await request(pool, "DELETE", `/v1/locks/${String(acquired.json.leaseId)}`, token);
        if (released.status !== 200) throw new Error(`bench: api release failed: ${released.status}`);
        return ms;
      };
    };
    const libraryPair = (store: RedisLeaseStore | PostgresLeaseStore): Pair => async (loop) => {
      const resource = `bench:${loop}`;
      const t0 = performance.now();
      const r = await store.acquire({ resource, owner: "token:bench/bench", task: "bench", ttlMs: TTL_MS });
      const ms = performance.now() - t0;
      if (!r.acquired) throw new Error("bench: library acquire failed");
      const released = await store.release({ resource, leaseId: r.lease.leaseId });
      if (!released.released) throw new Error("bench: library release failed");
      return ms;
    };
    const etcdPair = async (url: string): Promise<Pair> => {
      const pool = httpPool(url);
      // One etcd lease per loop, granted up front: a pair is then lock + unlock, as a client holding a session does it.
      const leases = await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          const granted = await request(pool, "POST", "/v3/lease/grant", null, { TTL: ETCD_LEASE_TTL_S });
          if (granted.status !== 200 || typeof granted.json.ID !== "string") throw new Error(`bench: etcd lease grant failed: ${granted.status} ${JSON.stringify(granted.json)}`);
          return granted.json.ID;
        }),
      );
      return async (loop) => {
        const name = Buffer.from(`bench:${loop}`).toString("base64");
        const t0 = performance.now();
        const locked = await request(pool, "POST", "/v3/lock/lock", null, { name, lease: leases[loop] });
        const ms = performance.now() - t0;
        if (locked.status !== 200 || typeof locked.json.key !== "string") throw new Error(`bench: etcd lock failed: ${locked.status} ${JSON.stringify(locked.json)}`);
        const unlocked = await request(pool, "POST", "/v3/lock/unlock", null, { key: locked.json.key });
        if (unlocked.status !== 200) throw new Error(`bench: etcd unlock failed: ${unlocked.status} ${JSON.stringify(unlocked.json)}`);
        return ms;
      };
    };

    const redisCpuUs = async () => {
      const text = await info.info("cpu");
      return (Number(/used_cpu_user:([\d.]+)/.exec(text)?.[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(text)?.[1])) * 1e6;
    };
    /** A side's server CPU, as a function returning the µs spent since it was called. */
    type ServerMeter = () => Promise<() => Promise<number>>;
    const redisMeter: ServerMeter = async () => {
      const before = await redisCpuUs();
      return async () => (await redisCpuUs()) - before;
    };
    const pgMeter = (schema: string): ServerMeter => async () => {
      const before = await backendCpuUs(admin, appName(schema));
      return async () => cpuDelta(before, await backendCpuUs(admin, appName(schema)));
    };
    const pidMeter = (pid: number): ServerMeter => async () => {
      const before = processCpuUs(pid);
      return async () => processCpuUs(pid) - before;
    };

    const sides: Partial<Record<Side, { pair: Pair; apiPid: number | null; server: ServerMeter; serverName: string }>> = {};
    if (wants("library")) sides.library = { pair: libraryPair(library), apiPid: null, server: redisMeter, serverName: "redis" };
    if (api && wants("api")) sides.api = { pair: apiPair(api.port, "bench-redis"), apiPid: api.pid, server: redisMeter, serverName: "redis" };
    if (baseline && wants("api")) sides["api-baseline"] = { pair: apiPair(baseline.port, "bench-redis"), apiPid: baseline.pid, server: redisMeter, serverName: "redis" };
    if (wants("library-pg")) sides["library-pg"] = { pair: libraryPair(libraryPg), apiPid: null, server: pgMeter(libPg.schema), serverName: "postgres" };
    if (api && wants("api-pg")) sides["api-pg"] = { pair: apiPair(api.port, "bench-pg"), apiPid: api.pid, server: pgMeter(apiPg.schema), serverName: "postgres" };
    if (api && wants("api-pg-keyed")) {
      sides["api-pg-keyed"] = { pair: apiPair(api.port, "bench-pg", true), apiPid: api.pid, server: pgMeter(apiPg.schema), serverName: "postgres" };
    }
    if (baseline && wants("api-pg")) sides["api-pg-baseline"] = { pair: apiPair(baseline.port, "bench-pg"), apiPid: baseline.pid, server: pgMeter(basePg.schema), serverName: "postgres" };
    if (etcd) sides.etcd = { pair: await etcdPair(etcd.url), apiPid: null, server: pidMeter(etcd.pid), serverName: "etcd" };
    const sideNames = Object.keys(sides) as Side[];

    // Monotonic µs, the clock V8 stamps profile samples with.
    const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
    const apiWindows = new Map<Side, Array<[number, number]>>();
    const measure = async (side: Side, ms: number): Promise<Measurement> => {
      const { pair, apiPid, server } = sides[side]!;
      const acquireMs: number[] = [];
      let pairs = 0;
      const serverSince = await server();
      const [cpu0, api0] = [process.cpuUsage(), apiPid === null ? 0 : processCpuUs(apiPid)];
      const start = performance.now();
      const monoStart = monotonicUs();
      const until = start + ms;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async (_, loop) => {
          while (performance.now() < until) {
            acquireMs.push(await pair(loop));
            pairs += 1;
          }
        }),
      );
      const elapsedMs = performance.now() - start;
      if (apiPid !== null) apiWindows.set(side, [...(apiWindows.get(side) ?? []), [monoStart, monotonicUs()]]);
      const cpu = process.cpuUsage(cpu0);
      const apiCpuUs = apiPid === null ? 0 : processCpuUs(apiPid) - api0;
      return { pairs, elapsedMs, acquireMs, clientCpuUs: cpu.user + cpu.system, apiCpuUs, serverCpuUs: await serverSince() };
    };

    for (const side of sideNames) await measure(side, WARMUP_MS);
    apiWindows.clear();
    const empty = (): Measurement => ({ pairs: 0, elapsedMs: 0, acquireMs: [], clientCpuUs: 0, apiCpuUs: 0, serverCpuUs: 0 });
    const total = Object.fromEntries(sideNames.map((s) => [s, empty()])) as Record<Side, Measurement>;
    const rates: Partial<Record<Side, number[]>> = {};
    const roundMs = (SECONDS_PER_SIDE * 1000) / ROUNDS;
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate the order each round so no side always runs first (or right after another).
      const order = sideNames.map((_, i) => sideNames[(i + round) % sideNames.length]!);
      for (const side of order) {
        const m = await measure(side, roundMs);
        (rates[side] ??= []).push((m.pairs / m.elapsedMs) * 1000);
        const t = total[side];
        t.pairs += m.pairs;
        t.elapsedMs += m.elapsedMs;
        t.acquireMs.push(...m.acquireMs);
        t.clientCpuUs += m.clientCpuUs;
        t.apiCpuUs += m.apiCpuUs;
        t.serverCpuUs += m.serverCpuUs;
      }
    }
    /** Median over rounds of a's rate / b's rate in the same round; null when either side did not run. */
    const ratioOf = (a: Side, b: Side): number | null => {
      const [ra, rb] = [rates[a], rates[b]];
      return ra && rb ? median(ra.map((r, i) => r / rb[i]!)) : null;
    };
    const vsOf = (side: Side): Side | null =>
      side === "api" || side === "api-baseline" ? "library" : side === "api-pg" || side === "api-pg-keyed" || side === "api-pg-baseline" || side === "library-pg" ? "etcd" : null;

    console.log(`concurrency ${CONCURRENCY}, ${SECONDS_PER_SIDE} s per side in ${ROUNDS} rotating rounds, API log level ${LOG_LEVEL}, load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
    if (baseline) console.log(`api-baseline, api-pg-baseline: the API of ${path.resolve(BASELINE_DIR!)}, in the same rounds`);
    console.log("side              pairs/s  ratio (median of rounds)  acq p50 ms  acq p99 ms  client µs/pair  api µs/pair  server µs/pair");
    for (const side of sideNames) {
      const t = total[side];
      t.acquireMs.sort((a, b) => a - b);
      const per = (us: number) => (us / t.pairs).toFixed(0);
      const vs = vsOf(side);
      const ratio = vs ? ratioOf(side, vs) : null;
      console.log(
        `${side.padEnd(16)} ${((t.pairs / t.elapsedMs) * 1000).toFixed(0).padStart(8)}  ${(ratio === null ? "" : `${ratio.toFixed(2)}× ${vs}`).padStart(24)}  ${quantile(t.acquireMs, 0.5).toFixed(2).padStart(10)}  ${quantile(t.acquireMs, 0.99).toFixed(2).padStart(10)}  ${per(t.clientCpuUs).padStart(14)}  ${(sides[side]!.apiPid === null ? "-" : per(t.apiCpuUs)).padStart(11)}  ${`${per(t.serverCpuUs)} ${sides[side]!.serverName}`.padStart(14)}`,
      );
    }
    let isMet = true;
    const report = (isOk: boolean, text: string) => {
      isMet &&= isOk;
      console.log(`${isOk ? "ok  " : "MISS"} ${text}`);
    };
    const apiRatio = ratioOf("api", "library");
    if (apiRatio !== null) {
      report(apiRatio >= TARGETS.ratio, `API/library pairs/s on Redis (median of rounds) ${apiRatio.toFixed(2)}× (target ≥ ${TARGETS.ratio}×)`);
      const p99 = quantile(total.api.acquireMs, 0.99);
      report(p99 <= TARGETS.p99Ms, `API acquire p99 on Redis ${p99.toFixed(2)} ms (target ≤ ${TARGETS.p99Ms} ms)`);
    }
    const pgRatio = ratioOf("api-pg", "etcd");
    if (pgRatio !== null) report(pgRatio >= TARGETS.pgVsEtcd, `API on Postgres / etcd lock API pairs/s (median of rounds) ${pgRatio.toFixed(2)}× (target ≥ ${TARGETS.pgVsEtcd}×)`);
    const apiVsLibPg = ratioOf("api-pg", "library-pg");
    if (apiVsLibPg !== null) console.log(`     API on Postgres / library on Postgres ${apiVsLibPg.toFixed(2)}×`);
    const redisVsEtcd = ratioOf("api", "etcd");
    if (redisVsEtcd !== null) console.log(`     API on Redis / etcd lock API ${redisVsEtcd.toFixed(2)}×`);
    console.log(
      `where the time goes, CPU per pair (µs): ${sideNames
        .map((side) => {
          const t = total[side];
          const sum = (t.clientCpuUs + t.apiCpuUs + t.serverCpuUs) / t.pairs;
          return `${side} ${sum.toFixed(0)}`;
        })
        .join(", ")} (client + API process + server; all share ${cpus().length} cores here, so pairs/s is bounded by their sum)`,
    );
    if (CPU_PROF_DIR && api) {
      // The profile is written when the process exits.
      await api.stop();
      const file = readdirSync(CPU_PROF_DIR)
        .filter((f) => f.endsWith(".cpuprofile") && f.includes(`.${api.pid}.`))
        .map((f) => path.join(CPU_PROF_DIR, f))
        .sort((a, b) => statSync(b).size - statSync(a).size)[0];
      for (const side of ["api", "api-pg"] as const) {
        const windows = apiWindows.get(side);
        if (!file || !windows) continue;
        const parts = profileBreakdown(file, windows);
        const sampled = [...parts.values()].reduce((a, b) => a + b, 0);
        const perPair = total[side].apiCpuUs / total[side].pairs;
        console.log(`API process CPU in the measured ${side} rounds, by component (V8 profile ${file}; µs per pair scaled to the /proc figure):`);
        for (const [name, us] of [...parts].sort((a, b) => b[1] - a[1])) {
          console.log(`  ${name.padEnd(52)} ${((us / sampled) * 100).toFixed(1).padStart(5)}%  ${((us / sampled) * perPair).toFixed(0).padStart(5)} µs`);
        }
      }
    }
    return { isMet };
  } finally {
    await Promise.allSettled(apis.map((a) => a.stop()));
    await Promise.allSettled(pools.map((p) => p.close()));
    await library.close();
    await libraryPg.close();
    await libPgPool.end();
    await admin.end();
    libClient.disconnect();
    info.disconnect();
    await tokens.close();
    await Promise.allSettled([redisNs.drop(), baseNs.drop(), libNs.drop(), tokenSchema.drop(), apiPg.drop(), basePg.drop(), libPg.drop()]);
  }
}
