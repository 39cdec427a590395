/**
 * What projecting costs per event: writes a backlog of uncontended acquire+release pairs with no
 * projector running, then projects it all from a fresh store in this process and prints, per
 * event, this process's CPU, the server's CPU (INFO cpu), the time the `project` function held
 * the server and, per call, how long each call held it (INFO commandstats), and the server's time
 * per command. Repeated on fresh namespaces; the median of the repeats is printed last. Steadier
 * than the lease bench for comparing two builds of the projector, since nothing else runs.
 *
 *   node --import tsx bench/redis-projector-profile.ts
 *   LW_PROFILE_CPU=/tmp/projector.cpuprofile node --import tsx bench/redis-projector-profile.ts
 *
 * Knobs: LW_PROFILE_PAIRS (20 000 per repeat), LW_PROFILE_REPEATS (3), LW_BENCH_CONCURRENCY (16);
 * LW_PROFILE_CPU, a file for the CPU profile of the last repeat's projection (the backlog's
 * writing left out); LW_PROFILE_FOLD=1 also folds the same backlog with redis-fold-prototype.ts
 * and prints its cost; REDIS_URL: use a private Redis, a shared one's CPU includes everyone's.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { Redis } from "ioredis";
import { RedisLeaseStore } from "@leasewatch/lease";
import { freshRedisNamespace, TEST_REDIS_URL } from "@leasewatch/lease/testing";
import { foldNamespace } from "./redis-fold-prototype";
import { type CommandStat, readCommandStats, readServerCpuSeconds } from "./redis-info";

const PAIRS = Number(process.env.LW_PROFILE_PAIRS ?? 20_000);
const REPEATS = Number(process.env.LW_PROFILE_REPEATS ?? 3);
const CONCURRENCY = Number(process.env.LW_BENCH_CONCURRENCY ?? 16);
const PROFILE_FILE = process.env.LW_PROFILE_CPU;
const WITH_FOLD = process.env.LW_PROFILE_FOLD === "1";
/** The projector's own batch and id-stream cap, so the fold's calls are the same size. */
const FOLD_BATCH = 250;
const FOLD_ID_STREAM_CAP = 100_000;

interface Sample {
  events: number;
  clientUs: number;
  serverUs: number;
  projectUs: number;
  projectCalls: number;
  wallMs: number;
  /** Per command: calls and µs, over the projection. */
  commands: Map<string, CommandStat>;
  /** The fold prototype over the same backlog (LW_PROFILE_FOLD=1). */
  fold?: { events: number; clientUs: number; serverUs: number; scriptUs: number; calls: number };
}

async function serverCpuUs(admin: Redis): Promise<number> {
  return ((await readServerCpuSeconds(admin)) ?? 0) * 1e6;
}

async function writeBacklog(store: RedisLeaseStore, namespace: string): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, loop) => {
      while (next < PAIRS) {
        next++;
        const resource = `${namespace}-profile:${loop}`;
        const r = await store.acquire({ resource, owner: "profile", task: "profile", ttlMs: 30_000 });
        if (!r.acquired) throw new Error("profile: unexpectedly held");
        const released = await store.release({ resource, leaseId: r.lease.leaseId });
        if (!released.released) throw new Error(`profile: release refused (${released.reason})`);
      }
    }),
  );
}

async function once(admin: Redis): Promise<Sample> {
  const fresh = freshRedisNamespace();
  const writer = new RedisLeaseStore({ name: "profile", client: new Redis(TEST_REDIS_URL), namespace: fresh.namespace });
  const projecting = new RedisLeaseStore({ name: "profile-projector", client: new Redis(TEST_REDIS_URL), namespace: fresh.namespace });
  try {
    await writeBacklog(writer, fresh.namespace);
    // Loads the store's functions and checks the namespace, so neither is counted below.
    await projecting.projectionLag();
    const inspector = PROFILE_FILE ? new Session() : null;
    if (inspector) {
      inspector.connect();
      await inspector.post("Profiler.enable");
      await inspector.post("Profiler.start");
    }
    const serverBefore = await serverCpuUs(admin);
    const statsBefore = await readCommandStats(admin);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    let events = 0;
    for (;;) {
      const r = await projecting.project();
      events += r.applied;
      if (r.isCaughtUp) break;
    }
    const wallMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const statsAfter = await readCommandStats(admin);
    if (inspector && PROFILE_FILE) {
      const { profile } = await inspector.post("Profiler.stop");
      writeFileSync(PROFILE_FILE, JSON.stringify(profile));
      inspector.disconnect();
    }
    const commands = new Map<string, CommandStat>();
    for (const [command, after] of statsAfter) {
      const before = statsBefore.get(command) ?? { calls: 0, usec: 0 };
      if (after.calls > before.calls) commands.set(command, { calls: after.calls - before.calls, usec: after.usec - before.usec });
    }
    const fcall = commands.get("fcall") ?? { calls: 0, usec: 0 };
    const serverUs = (await serverCpuUs(admin)) - serverBefore;
    return {
      events,
      clientUs: cpu.user + cpu.system,
      serverUs,
      projectUs: fcall.usec,
      projectCalls: fcall.calls,
      wallMs,
      commands,
      ...(WITH_FOLD ? { fold: await measureFold(admin, fresh.namespace) } : {}),
    };
  } finally {
    await writer.close();
    await projecting.close();
    writer.client.disconnect();
    projecting.client.disconnect();
    await fresh.drop();
  }
}

/** The fold prototype over the backlog the projector just projected (its own cursor and keys). */
async function measureFold(admin: Redis, namespace: string): Promise<NonNullable<Sample["fold"]>> {
  const serverBefore = await serverCpuUs(admin);
  const statsBefore = await readCommandStats(admin);
  const cpuBefore = process.cpuUsage();
  const events = await foldNamespace(admin, namespace, FOLD_BATCH, FOLD_ID_STREAM_CAP);
  const cpu = process.cpuUsage(cpuBefore);
  const statsAfter = await readCommandStats(admin);
  const serverUs = (await serverCpuUs(admin)) - serverBefore;
  const evalsha = statsAfter.get("evalsha") ?? { calls: 0, usec: 0 };
  const before = statsBefore.get("evalsha") ?? { calls: 0, usec: 0 };
  return { events, clientUs: cpu.user + cpu.system, serverUs, scriptUs: evalsha.usec - before.usec, calls: evalsha.calls - before.calls };
}

function describe(s: Sample): string {
  return (
    `${s.events} events in ${s.wallMs.toFixed(0)} ms (${((s.events / s.wallMs) * 1000).toFixed(0)} events/s): ` +
    `client ${(s.clientUs / s.events).toFixed(1)} µs/event, server ${(s.serverUs / s.events).toFixed(1)} µs/event, ` +
    `project function ${(s.projectUs / s.events).toFixed(1)} µs/event over ${s.projectCalls} calls (${(s.projectUs / Math.max(1, s.projectCalls)).toFixed(0)} µs/call)` +
    (s.fold
      ? `; fold prototype: ${s.fold.events} events, client ${(s.fold.clientUs / s.fold.events).toFixed(1)} µs/event, ` +
        `server ${(s.fold.serverUs / s.fold.events).toFixed(1)} µs/event, script ${(s.fold.scriptUs / s.fold.events).toFixed(1)} µs/event ` +
        `(${(s.fold.scriptUs / Math.max(1, s.fold.calls)).toFixed(0)} µs/call)`
      : "")
  );
}

async function main(): Promise<void> {
  const admin = new Redis(TEST_REDIS_URL);
  const samples: Sample[] = [];
  try {
    for (let i = 0; i < REPEATS; i++) {
      const s = await once(admin);
      samples.push(s);
      console.log(`run ${i + 1}: ${describe(s)}`);
    }
  } finally {
    admin.disconnect();
  }
  const median = (pick: (s: Sample) => number) => [...samples].sort((a, b) => pick(a) - pick(b))[Math.floor(samples.length / 2)]!;
  const typical = median((s) => s.clientUs / s.events);
  console.log(`median by client CPU: ${describe(typical)}`);
  console.log("command         calls/event  µs/call  µs/event");
  for (const [command, { calls, usec }] of [...typical.commands].sort((a, b) => b[1].usec - a[1].usec)) {
    if (calls / typical.events < 0.005) continue;
    const perEvent = (n: number) => (n / typical.events).toFixed(2);
    console.log(`${command.padEnd(15)} ${perEvent(calls).padStart(11)}  ${(usec / calls).toFixed(2).padStart(7)}  ${perEvent(usec).padStart(8)}`);
  }
}

void main();
