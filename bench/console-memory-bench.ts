/**
 * `npm run bench -- memory`: the console's memory under on-call load.
 *
 * Starts the real console (`next start`, production build) on one Postgres schema
 * and one Redis namespace seeded through the stores' own acquire/release, signs in
 * BENCH_MEMORY_USERS sessions (default 20) through the local IdP, and has each poll
 * every page and its API route, one request a second, for BENCH_MEMORY_SECONDS
 * (default 60). It samples the resident memory of the console's processes (the
 * `next start` process group, from /proc) twice a second and reports the maximum
 * against the 512 MB target, with request counts and statuses. Linux only.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { PostgresLeaseStore, RedisLeaseStore } from "@leasewatch/lease";
import { signIn } from "./console-bench";
import type { BenchOutcome } from "./run";

const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const USERS = Number(process.env.BENCH_MEMORY_USERS ?? 20);
const SECONDS = Number(process.env.BENCH_MEMORY_SECONDS ?? 60);
const LEASES_PER_STORE = 2_000;
const TARGET_RSS_MB = 512;
const PATHS = [
  "/",
  "/?window=7d",
  "/locks",
  "/events",
  "/audit",
  "/api/overview?window=1h",
  "/api/overview?window=7d",
  "/api/leases",
  "/api/events",
  "/api/health",
];

function log(line: string): void {
  console.log(`[memory-bench] ${line}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Resident memory (MB) of every process in process group `pgid`, summed. */
function groupRssMb(pgid: number): number {
  let kb = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Field 5 of /proc/<pid>/stat is the process group; the command name (field 2) may hold spaces, so split after ")".
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== pgid) continue;
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${entry}/status`, "utf8"));
      kb += match ? Number(match[1]) : 0;
    } catch {
      // the process ended between listing and reading
    }
  }
  return kb / 1024;
}

async function seed(pg: PostgresLeaseStore, redis: RedisLeaseStore): Promise<void> {
  for (const store of [pg, redis]) {
    await Promise.all(
      Array.from({ length: 20 }, async (_, worker) => {
        for (let i = worker; i < LEASES_PER_STORE; i += 20) {
          const got = await store.acquire({ resource: `tenant_${i % 50}:job:${i}`, owner: `worker-${worker}`, task: `task-${i % 30}`, ttlMs: 600_000 });
          if (got.acquired && i % 3 === 0) await store.release({ resource: `tenant_${i % 50}:job:${i}`, leaseId: got.lease.leaseId });
        }
      }),
    );
  }
}

export async function run(): Promise<BenchOutcome> {
  const suffix = randomBytes(5).toString("hex");
  const schema = `lw_bench_${suffix}`;
  const namespace = `lwb_${suffix}`;
  const pgStore = new PostgresLeaseStore({ name: "pg-bench", connectionString: DATABASE_URL, schema });
  const redisStore = new RedisLeaseStore({ name: "redis-bench", url: REDIS_URL, namespace });
  let rssMax = NaN;
  try {
    await pgStore.migrate();
    await seed(pgStore, redisStore);
    log(`seeded ${LEASES_PER_STORE} acquires per store (schema ${schema}, namespace ${namespace})`);
    const { startStack } = await import("../scripts/stack");
    const stack = await startStack({
      port: Number(process.env.BENCH_PORT ?? (await freePort())),
      oidcPort: Number(process.env.BENCH_OIDC_PORT ?? (await freePort())),
      env: {
        LEASEWATCH_STORES: JSON.stringify([
          { name: "pg-bench", kind: "postgres", url: DATABASE_URL, schema },
          { name: "redis-bench", kind: "redis", url: REDIS_URL, namespace },
        ]),
        // Every session signs in as the same demo viewer; the per-user read limit would otherwise shed the load being measured.
        LEASEWATCH_READ_RATE_PER_S: "10000",
        LEASEWATCH_READ_BURST: "10000",
      },
      workload: false,
      log: (line) => {
        if (/\[stack\]|error|fail/i.test(line)) log(line);
      },
    });
    try {
      const pgid = stack.consolePid;
      if (pgid === undefined) throw new Error("the console's process id is unknown");
      const jars = [];
      for (let u = 0; u < USERS; u++) jars.push(await signIn(stack.url, "bob"));
      const rssStart = groupRssMb(pgid);
      rssMax = rssStart;
      const statuses = new Map<number, number>();
      let slowestMs = 0;
      const deadline = Date.now() + SECONDS * 1000;
      const sampler = setInterval(() => (rssMax = Math.max(rssMax, groupRssMb(pgid))), 500);
      await Promise.all(
        jars.map(async (jar, u) => {
          for (let i = u; Date.now() < deadline; i++) {
            const started = performance.now();
            const response = await fetch(`${stack.url}${PATHS[i % PATHS.length]}`, { redirect: "manual", headers: { cookie: jar.header() } });
            await response.arrayBuffer();
            slowestMs = Math.max(slowestMs, performance.now() - started);
            statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
            await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (performance.now() - started))));
          }
        }),
      );
      clearInterval(sampler);
      rssMax = Math.max(rssMax, groupRssMb(pgid));
      const total = [...statuses.values()].reduce((a, b) => a + b, 0);
      log(`${USERS} sessions × ${SECONDS} s, one request a second each over ${PATHS.length} pages and routes: ${total} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}, slowest ${Math.round(slowestMs)} ms`);
      log(`console RSS (next start process group): ${rssStart.toFixed(0)} MB after sign-in, max ${rssMax.toFixed(0)} MB — target < ${TARGET_RSS_MB} MB: ${rssMax < TARGET_RSS_MB ? "ok" : "MISS"}`);
    } finally {
      await stack.stop();
    }
  } finally {
    await pgStore.close();
    await redisStore.close();
    const { Pool } = await import("pg");
    const pool = new Pool({ connectionString: DATABASE_URL, max: 1 });
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pool.end();
    const { Redis } = await import("ioredis");
    const { deleteRedisNamespace } = await import("../scripts/seed/redis-seed");
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
    const deleted = await deleteRedisNamespace(redis, namespace).catch(() => -1);
    redis.disconnect();
    log(`cleaned up: dropped schema ${schema}, deleted ${deleted} redis keys`);
  }
  return { isMet: rssMax < TARGET_RSS_MB };
}
