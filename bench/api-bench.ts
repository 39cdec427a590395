/**
 * Lock API benchmark: acquire+release pairs through `npm run api` (a child process,
 * as in production) over HTTP keep-alive, against the library called directly on
 * the same Redis server, CONCURRENCY loops each, in alternating rounds.
 *
 * Targets (DESIGN.md): API ≥ 0.5× the library's pairs/s on Redis; API acquire p99 ≤ 3 ms.
 * "Where the time goes": CPU per pair of this process (the HTTP client, or the library),
 * of the API process (read from /proc), and of Redis (INFO cpu; shared server, so noisy).
 *
 * Knobs: LW_BENCH_CONCURRENCY (16), LW_BENCH_SECONDS per side (6), LW_BENCH_ROUNDS (4),
 * LW_BENCH_API_LOG_LEVEL (info, as deployed; "warn" shows what request logging costs),
 * LW_BENCH_API_CPU_PROF (a directory: the API process writes a V8 CPU profile there, and the
 * bench prints where the API process spent its CPU during the measured API rounds),
 * LW_BENCH_API_BASELINE (another checkout, e.g. of main, with node_modules: its API runs as a
 * third side in the same rounds, so a change can be compared on a loaded machine).
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { Pool, type Dispatcher } from "undici";
import { TokenStore } from "@/lib/api/tokens";
import { RedisLeaseStore } from "@/lib/lease/redis/store";
import { freshPgSchema, freshRedisNamespace, TEST_DATABASE_URL } from "@/lib/lease/testing/isolation";
import type { BenchOutcome } from "./run";

const CONCURRENCY = Number(process.env.LW_BENCH_CONCURRENCY ?? 16);
const SECONDS_PER_SIDE = Number(process.env.LW_BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.LW_BENCH_ROUNDS ?? 4);
const LOG_LEVEL = process.env.LW_BENCH_API_LOG_LEVEL ?? "info";
const CPU_PROF_DIR = process.env.LW_BENCH_API_CPU_PROF;
const BASELINE_DIR = process.env.LW_BENCH_API_BASELINE;
const TTL_MS = 30_000;
const WARMUP_MS = 1_000;
const TARGETS = { ratio: 0.5, p99Ms: 3 };
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CLK_TCK = 100;

type Pair = (loop: number) => Promise<number>;
interface Measurement {
  pairs: number;
  elapsedMs: number;
  acquireMs: number[];
  clientCpuUs: number;
  apiCpuUs: number;
  redisCpuUs: number;
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
async function request(pool: Pool, method: string, urlPath: string, token: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const data = body === undefined ? undefined : JSON.stringify(body);
  const res = await pool.request({
    method: method as Dispatcher.HttpMethod,
    path: urlPath,
    headers: data === undefined ? { authorization: `Bearer ${token}` } : { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: data,
  });
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
  return {
    pid: child.pid!,
    port,
    stop: async () => {
      const exited = new Promise((resolve) => child.on("exit", resolve));
      process.kill(-child.pid!, "SIGTERM");
      await exited;
    },
  };
}

type Side = "library" | "api" | "api-baseline";

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
    ["token lookup", (u) => u.includes("lib/api/tokens.ts") || u.includes("node_modules/pg")],
    ["lease library + ioredis", (u) => u.includes("node_modules/ioredis") || u.includes("lib/lease/")],
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
  const redisNs = freshRedisNamespace();
  const baseNs = freshRedisNamespace();
  const libNs = freshRedisNamespace();
  const tokenSchema = freshPgSchema(TEST_DATABASE_URL);
  const tokens = new TokenStore({ url: TEST_DATABASE_URL, schema: tokenSchema.schema });
  const libClient = new Redis(libNs.url);
  const info = new Redis(libNs.url);
  const library = new RedisLeaseStore({ name: "bench-redis", client: libClient, namespace: libNs.namespace });
  const pools: Pool[] = [];
  const apis: Array<Awaited<ReturnType<typeof startApiProcess>>> = [];
  try {
    const { token } = await tokens.create({
      name: "bench",
      prefixes: ["bench:"],
      stores: ["bench-redis"],
      actions: ["acquire", "release"],
      expiresAt: new Date(Date.now() + 3_600_000),
      ratePerSec: 100_000,
      maxConcurrent: 10_000,
      createdBy: "bench",
    });
    const apiEnv = (ns: ReturnType<typeof freshRedisNamespace>) => ({
      LEASEWATCH_STORES: JSON.stringify([{ name: "bench-redis", kind: "redis", url: ns.url, namespace: ns.namespace }]),
      LEASEWATCH_AUDIT_URL: TEST_DATABASE_URL,
      LEASEWATCH_CONSOLE_SCHEMA: tokenSchema.schema,
      LEASEWATCH_API_PORT: "0",
      LEASEWATCH_API_LOG_LEVEL: LOG_LEVEL,
      NODE_ENV: "development",
    });
    const api = await startApiProcess(ROOT, apiEnv(redisNs), CPU_PROF_DIR);
    apis.push(api);
    const baseline = BASELINE_DIR ? await startApiProcess(path.resolve(BASELINE_DIR), apiEnv(baseNs)) : undefined;
    if (baseline) apis.push(baseline);

    const apiPair = (port: number): Pair => {
      const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONCURRENCY, pipelining: 1 });
      pools.push(pool);
      return async (loop) => {
        const t0 = performance.now();
        const acquired = await request(pool, "POST", "/v1/locks/acquire", token, { resource: `bench:${loop}`, ownerId: "bench", task: "bench", ttlMs: TTL_MS });
        const ms = performance.now() - t0;
        if (acquired.json.acquired !== true) throw new Error(`bench: api acquire failed: ${acquired.status} ${JSON.stringify(acquired.json)}`);
        const released = await request(pool, "DELETE", `/v1/locks/${String(acquired.json.leaseId)}`, token);
        if (released.status !== 200) throw new Error(`bench: api release failed: ${released.status}`);
        return ms;
      };
    };
    const sides: Partial<Record<Side, { pair: Pair; pid: number | null }>> = {
      library: {
        pid: null,
        pair: async (loop) => {
          const resource = `bench:${loop}`;
          const t0 = performance.now();
          const r = await library.acquire({ resource, owner: "token:bench/bench", task: "bench", ttlMs: TTL_MS });
          const ms = performance.now() - t0;
          if (!r.acquired) throw new Error("bench: library acquire failed");
          const released = await library.release({ resource, leaseId: r.lease.leaseId });
          if (!released.released) throw new Error("bench: library release failed");
          return ms;
        },
      },
      api: { pid: api.pid, pair: apiPair(api.port) },
      ...(baseline ? { "api-baseline": { pid: baseline.pid, pair: apiPair(baseline.port) } } : {}),
    };
    const sideNames = Object.keys(sides) as Side[];

    const redisCpuUs = async () => {
      const text = await info.info("cpu");
      return (Number(/used_cpu_user:([\d.]+)/.exec(text)?.[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(text)?.[1])) * 1e6;
    };
    // Monotonic µs, the clock V8 stamps profile samples with.
    const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
    const apiWindows: Array<[number, number]> = [];
    const measure = async (side: Side, ms: number): Promise<Measurement> => {
      const { pair, pid } = sides[side]!;
      const acquireMs: number[] = [];
      let pairs = 0;
      const [cpu0, api0, redis0] = [process.cpuUsage(), pid === null ? 0 : processCpuUs(pid), await redisCpuUs()];
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
      if (side === "api") apiWindows.push([monoStart, monotonicUs()]);
      const cpu = process.cpuUsage(cpu0);
      return { pairs, elapsedMs, acquireMs, clientCpuUs: cpu.user + cpu.system, apiCpuUs: pid === null ? 0 : processCpuUs(pid) - api0, redisCpuUs: (await redisCpuUs()) - redis0 };
    };

    for (const side of sideNames) await measure(side, WARMUP_MS);
    apiWindows.length = 0;
    const empty = (): Measurement => ({ pairs: 0, elapsedMs: 0, acquireMs: [], clientCpuUs: 0, apiCpuUs: 0, redisCpuUs: 0 });
    const total = Object.fromEntries(sideNames.map((s) => [s, empty()])) as Record<Side, Measurement>;
    const ratios: Partial<Record<Side, number[]>> = {};
    const roundMs = (SECONDS_PER_SIDE * 1000) / ROUNDS;
    for (let round = 0; round < ROUNDS; round++) {
      const perRound: Partial<Record<Side, number>> = {};
      // Rotate the order each round so no side always runs first (or right after another).
      const order = sideNames.map((_, i) => sideNames[(i + round) % sideNames.length]!);
      for (const side of order) {
        const m = await measure(side, roundMs);
        perRound[side] = (m.pairs / m.elapsedMs) * 1000;
        const t = total[side];
        t.pairs += m.pairs;
        t.elapsedMs += m.elapsedMs;
        t.acquireMs.push(...m.acquireMs);
        t.clientCpuUs += m.clientCpuUs;
        t.apiCpuUs += m.apiCpuUs;
        t.redisCpuUs += m.redisCpuUs;
      }
      for (const side of sideNames) (ratios[side] ??= []).push((perRound[side] ?? 0) / (perRound.library ?? 1));
    }
    const median = (values: number[]) => {
      const v = [...values].sort((a, b) => a - b);
      return v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
    };
    const ratio = median(ratios.api ?? []);

    console.log(`concurrency ${CONCURRENCY}, ${SECONDS_PER_SIDE} s per side in ${ROUNDS} rotating rounds, API log level ${LOG_LEVEL}, load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
    if (baseline) console.log(`api-baseline: the API of ${path.resolve(BASELINE_DIR!)}, in the same rounds`);
    console.log("side          pairs/s   ratio  acq p50 ms  acq p99 ms  client µs/pair  api µs/pair  redis µs/pair");
    for (const side of sideNames) {
      const t = total[side];
      t.acquireMs.sort((a, b) => a - b);
      const per = (us: number) => (us / t.pairs).toFixed(0);
      console.log(
        `${side.padEnd(12)} ${((t.pairs / t.elapsedMs) * 1000).toFixed(0).padStart(8)}  ${`${median(ratios[side] ?? []).toFixed(2)}×`.padStart(6)}  ${quantile(t.acquireMs, 0.5).toFixed(2).padStart(10)}  ${quantile(t.acquireMs, 0.99).toFixed(2).padStart(10)}  ${per(t.clientCpuUs).padStart(14)}  ${(side === "library" ? "-" : per(t.apiCpuUs)).padStart(11)}  ${per(t.redisCpuUs).padStart(13)}`,
      );
    }
    const p99 = quantile(total.api.acquireMs, 0.99);
    const isRatioMet = ratio >= TARGETS.ratio;
    const isP99Met = p99 <= TARGETS.p99Ms;
    console.log(`${isRatioMet ? "ok  " : "MISS"} API/library pairs/s (median of rounds) ${ratio.toFixed(2)}× (target ≥ ${TARGETS.ratio}×)`);
    console.log(`${isP99Met ? "ok  " : "MISS"} API acquire p99 ${p99.toFixed(2)} ms (target ≤ ${TARGETS.p99Ms} ms)`);
    const t = total.api;
    const perPair = (us: number) => us / t.pairs;
    const lib = total.library;
    console.log(
      `where the time goes, CPU per pair: the library alone costs ${(lib.clientCpuUs / lib.pairs).toFixed(0)} µs in its caller and ${(lib.redisCpuUs / lib.pairs).toFixed(0)} µs in Redis; ` +
        `through the API the client pays ${perPair(t.clientCpuUs).toFixed(0)} µs (two HTTP exchanges), the API process ${perPair(t.apiCpuUs).toFixed(0)} µs and Redis ${perPair(t.redisCpuUs).toFixed(0)} µs. ` +
        `All three share ${cpus().length} cores here, so pairs/s is bounded by their sum (${(perPair(t.clientCpuUs + t.apiCpuUs + t.redisCpuUs)).toFixed(0)} µs through the API, ` +
        `${((lib.clientCpuUs + lib.redisCpuUs) / lib.pairs).toFixed(0)} µs for the library).`,
    );
    if (CPU_PROF_DIR) {
      // The profile is written when the process exits.
      await api.stop();
      apis.splice(apis.indexOf(api), 1);
      const file = readdirSync(CPU_PROF_DIR)
        .filter((f) => f.endsWith(".cpuprofile") && f.includes(`.${api.pid}.`))
        .map((f) => path.join(CPU_PROF_DIR, f))
        .sort((a, b) => statSync(b).size - statSync(a).size)[0];
      if (file) {
        const parts = profileBreakdown(file, apiWindows);
        const sampled = [...parts.values()].reduce((a, b) => a + b, 0);
        console.log(`API process CPU in the measured API rounds, by component (V8 profile ${file}; µs per pair scaled to the /proc figure):`);
        for (const [name, us] of [...parts].sort((a, b) => b[1] - a[1])) {
          console.log(`  ${name.padEnd(52)} ${((us / sampled) * 100).toFixed(1).padStart(5)}%  ${((us / sampled) * perPair(t.apiCpuUs)).toFixed(0).padStart(5)} µs`);
        }
      }
    }
    return { isMet: isRatioMet && isP99Met };
  } finally {
    await Promise.allSettled(apis.map((a) => a.stop()));
    await Promise.allSettled(pools.map((p) => p.close()));
    await library.close();
    libClient.disconnect();
    info.disconnect();
    await tokens.close();
    await Promise.allSettled([redisNs.drop(), baseNs.drop(), libNs.drop(), tokenSchema.drop()]);
  }
}
