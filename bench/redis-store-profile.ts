/**
 * Where an uncontended Redis acquire+release costs: a store-only loop (the lease bench's store
 * side, alone) that prints, per pair, this process's CPU and the server's, and per command the
 * calls and server µs per call (INFO commandstats deltas; commands run inside scripts are listed
 * under their own names, the script call itself under evalsha/fcall).
 *
 *   REDIS_URL=redis://127.0.0.1:6379 node --import tsx bench/redis-store-profile.ts
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/redis-store-profile.ts   (client CPU profile)
 *
 * Knobs: LW_PROFILE_SECONDS (5), LW_BENCH_CONCURRENCY (16), LW_PROFILE_PROJECT=1 also projects
 * every second from this process, to see its share of this process's CPU (the lease bench projects
 * from a process of its own).
 * Use a private Redis: a shared server's commandstats include everyone else's commands.
 */
import { Redis } from "ioredis";
import { PROJECTION_INTERVAL_MS } from "@leasewatch/lease/internal";
import { RedisLeaseStore } from "@leasewatch/lease";
import { freshRedisNamespace, TEST_REDIS_URL } from "@leasewatch/lease/testing";
import { readCommandStats, readServerCpuSeconds } from "./redis-info";

const SECONDS = Number(process.env.LW_PROFILE_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.LW_BENCH_CONCURRENCY ?? 16);
const WITH_PROJECTOR = process.env.LW_PROFILE_PROJECT === "1";

/** The server's CPU so far, in seconds (0 when INFO does not say). */
async function serverCpuSeconds(admin: Redis): Promise<number> {
  return (await readServerCpuSeconds(admin)) ?? 0;
}

async function main(): Promise<void> {
  const fresh = freshRedisNamespace();
  const admin = new Redis(TEST_REDIS_URL);
  const store = new RedisLeaseStore({ name: "profile", client: new Redis(TEST_REDIS_URL), namespace: fresh.namespace });
  const projecting = new RedisLeaseStore({ name: "profile-projector", client: new Redis(TEST_REDIS_URL), namespace: fresh.namespace });
  const loop = async (i: number, until: number): Promise<number> => {
    let pairs = 0;
    while (performance.now() < until) {
      const r = await store.acquire({ resource: `profile:${i}`, owner: "profile", task: "profile", ttlMs: 30_000 });
      if (!r.acquired) throw new Error("profile: unexpectedly held");
      const released = await store.release({ resource: `profile:${i}`, leaseId: r.lease.leaseId });
      if (!released.released) throw new Error(`profile: release refused (${released.reason})`);
      pairs++;
    }
    return pairs;
  };
  let projectorCpuUs = 0;
  let projected = 0;
  const timer = WITH_PROJECTOR
    ? setInterval(() => {
        const before = process.cpuUsage();
        void projecting.project().then((r) => {
          projected += r.applied;
          const used = process.cpuUsage(before);
          // Wall-clock interleaving with the loops makes this an upper bound, not an exact share.
          projectorCpuUs += used.user + used.system;
        });
      }, PROJECTION_INTERVAL_MS)
    : null;
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => loop(i, performance.now() + 500)));
    const statsBefore = await readCommandStats(admin);
    const serverBefore = await serverCpuSeconds(admin);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const pairs = (await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => loop(i, started + SECONDS * 1000)))).reduce((a, b) => a + b, 0);
    const elapsed = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const serverUs = ((await serverCpuSeconds(admin)) - serverBefore) * 1e6;
    const statsAfter = await readCommandStats(admin);
    console.log(
      `${pairs} pairs in ${(elapsed / 1000).toFixed(1)} s = ${((pairs / elapsed) * 1000).toFixed(0)} pairs/s; ` +
        `client ${((cpu.user + cpu.system) / pairs).toFixed(1)} µs/pair, server ${(serverUs / pairs).toFixed(1)} µs/pair`,
    );
    if (WITH_PROJECTOR) console.log(`projector: ${projected} events, ≤ ${(projectorCpuUs / pairs).toFixed(1)} µs/pair of client CPU (upper bound)`);
    const rows: [string, number, number, number][] = [];
    for (const [command, after] of statsAfter) {
      const before = statsBefore.get(command) ?? { calls: 0, usec: 0 };
      const calls = after.calls - before.calls;
      if (calls <= 0) continue;
      const usec = after.usec - before.usec;
      rows.push([command, calls / pairs, usec / calls, usec / pairs]);
    }
    rows.sort((a, b) => b[3] - a[3]);
    console.log("command         calls/pair  µs/call  µs/pair");
    for (const [command, perPair, perCall, usPerPair] of rows) {
      if (perPair < 0.01) continue;
      console.log(`${command.padEnd(15)} ${perPair.toFixed(2).padStart(10)}  ${perCall.toFixed(2).padStart(7)}  ${usPerPair.toFixed(2).padStart(7)}`);
    }
  } finally {
    if (timer) clearInterval(timer);
    await store.close();
    store.client.disconnect();
    projecting.client.disconnect();
    await fresh.drop();
    admin.disconnect();
  }
}

void main();
