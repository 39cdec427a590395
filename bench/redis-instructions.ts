/**
 * What the Redis store costs Redis, counted in instructions rather than seconds: a throwaway
 * redis-server runs under valgrind's callgrind, and the instructions it executes are counted
 * over a fixed number of pairs (zeroed after a warm-up, dumped after the last pair). The count is
 * the same from run to run (±0.3 %) whatever else the machine is doing, so it can compare two
 * builds of the store's functions where the timed benches cannot see a few per cent.
 *
 *   node --import tsx bench/redis-instructions.ts
 *
 * Sides: `bare` (SET NX PX, then the compare-and-delete script, as in the lease bench), `store`
 * (acquire+release, nobody projecting) and `projection` (the events of `store`'s pairs, projected
 * afterwards from a store of their own; per pair, so it adds to `store`). Redis runs some 50×
 * slower under callgrind, so only instructions are printed.
 * Knobs: LW_PROFILE_PAIRS (3000), LW_BENCH_CONCURRENCY (16), LW_INSTRUCTIONS_PORT (6390),
 * LW_INSTRUCTIONS_SIDES (`bare,store,projection`), LW_INSTRUCTIONS_OWNERS (5: how many owners the pairs
 * take turns as; each has an id stream of its own). Needs valgrind (Debian's `valgrind`).
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { RedisLeaseStore } from "@leasewatch/lease";

const PAIRS = Number(process.env.LW_PROFILE_PAIRS ?? 3000);
const CONCURRENCY = Number(process.env.LW_BENCH_CONCURRENCY ?? 16);
const PORT = Number(process.env.LW_INSTRUCTIONS_PORT ?? 6390);
/** How many owners the store's pairs take turns as (each owner has its own id stream). */
const OWNERS = Number(process.env.LW_INSTRUCTIONS_OWNERS ?? 5);
const SIDES = (process.env.LW_INSTRUCTIONS_SIDES ?? "bare,store,projection").split(",").map((s) => s.trim());
const URL = `redis://127.0.0.1:${PORT}`;
const COMPARE_AND_DELETE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/** A redis-server under callgrind; `count` runs `work` between a zero and a dump of its counters. */
async function startCountedRedis(): Promise<{ count(work: () => Promise<void>): Promise<number>; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "lw-callgrind-"));
  const valgrind = spawn(
    "valgrind",
    ["--tool=callgrind", `--callgrind-out-file=${join(dir, "out")}`, "redis-server", "--port", String(PORT), "--save", "", "--appendonly", "no"],
    { stdio: "ignore" },
  );
  const admin = new Redis(URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  admin.on("error", () => {});
  for (let tries = 0; ; tries++) {
    try {
      await admin.connect();
      await admin.ping();
      break;
    } catch {
      if (tries > 100) throw new Error(`redis-server under callgrind did not answer on port ${PORT}`);
      admin.disconnect();
      await sleep(200);
    }
  }
  // valgrind runs redis-server as the same process (its pid is the one spawn started).
  const pid = String(valgrind.pid);
  let dumps = 0;
  return {
    async count(work) {
      execFileSync("callgrind_control", ["-z", pid], { stdio: "ignore" });
      await work();
      execFileSync("callgrind_control", ["-d", pid], { stdio: "ignore" });
      dumps++;
      const file = readdirSync(dir).find((name) => name === `out.${dumps}`);
      const summary = file ? /^summary: (\d+)/m.exec(readFileSync(join(dir, file), "utf8"))?.[1] : undefined;
      if (!summary) throw new Error("callgrind wrote no summary");
      return Number(summary);
    },
    async stop() {
      await admin.shutdown("NOSAVE").catch(() => {});
      admin.disconnect();
      await new Promise((resolve) => valgrind.once("exit", resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `PAIRS` pairs over CONCURRENCY loops, each loop on a resource of its own. */
async function runPairs(pair: (loop: number) => Promise<void>, pairs = PAIRS): Promise<void> {
  let started = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, loop) => {
      while (started < pairs) {
        started++;
        await pair(loop);
      }
    }),
  );
}

function storePair(store: RedisLeaseStore, namespace: string): (loop: number) => Promise<void> {
  let n = 0;
  return async (loop) => {
    const resource = `${namespace}:${loop}`;
    const r = await store.acquire({ resource, owner: `worker-${n++ % OWNERS}.prod`, task: "billing-run", ttlMs: 30_000 });
    if (!r.acquired) throw new Error("instructions: unexpectedly held");
    const released = await store.release({ resource, leaseId: r.lease.leaseId });
    if (!released.released) throw new Error(`instructions: release refused (${released.reason})`);
  };
}

async function main(): Promise<void> {
  const redis = await startCountedRedis();
  const results: [string, number][] = [];
  try {
    if (SIDES.includes("bare")) {
      const client = new Redis(URL);
      client.defineCommand("compareAndDelete", { numberOfKeys: 1, lua: COMPARE_AND_DELETE });
      const compareAndDelete = (key: string, value: string) => (client as unknown as { compareAndDelete(k: string, v: string): Promise<number> }).compareAndDelete(key, value);
      let n = 0;
      const bare = async (loop: number) => {
        const key = `bare:${loop}`;
        const value = `v${n++}`;
        if ((await client.set(key, value, "PX", 30_000, "NX")) !== "OK") throw new Error("instructions: bare lock held");
        if ((await compareAndDelete(key, value)) !== 1) throw new Error("instructions: bare compare-and-delete refused");
      };
      await runPairs(bare, 50);
      results.push(["bare", await redis.count(() => runPairs(bare))]);
      client.disconnect();
    }
    if (SIDES.includes("store") || SIDES.includes("projection")) {
      const namespace = `instructions${Date.now()}`;
      const store = new RedisLeaseStore({ name: "instructions", url: URL, namespace });
      const projecting = new RedisLeaseStore({ name: "instructions-projector", url: URL, namespace });
      try {
        // Loads the functions and checks the namespace before anything is counted.
        await runPairs(storePair(store, namespace), 50);
        await projecting.projectionLag();
        while (!(await projecting.project()).isCaughtUp);
        const pairs = () => runPairs(storePair(store, namespace));
        if (SIDES.includes("store")) results.push(["store", await redis.count(pairs)]);
        else await pairs();
        if (SIDES.includes("projection")) {
          results.push([
            "projection",
            await redis.count(async () => {
              while (!(await projecting.project()).isCaughtUp);
            }),
          ]);
        }
      } finally {
        await store.close();
        await projecting.close();
      }
    }
  } finally {
    await redis.stop();
  }
  const bare = results.find(([side]) => side === "bare")?.[1];
  console.log(`Redis instructions per acquire+release pair (callgrind), ${PAIRS} pairs over ${CONCURRENCY} loops`);
  for (const [side, total] of results) {
    const perPair = total / PAIRS;
    const ratio = bare && side !== "bare" ? `  ${(perPair / (bare / PAIRS)).toFixed(2)}× bare` : "";
    console.log(`${side.padEnd(11)} ${Math.round(perPair).toLocaleString("en-US").padStart(9)}${ratio}`);
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
