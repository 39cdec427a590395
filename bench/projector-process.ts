/**
 * The lease bench's projector, in a process of its own as in a deployment: the read models are
 * projected by the sweeper or the console, never inside a worker that takes leases. It projects
 * one namespace every PROJECTION_INTERVAL_MS until its stdin closes (the bench ends it, or the bench
 * died), then prints one JSON line: events
 * projected, the largest projection lag seen just before a projection, and the CPU (µs) it spent
 * projecting (from its first projection on: starting node and loading the library are left out).
 *
 * Env: LW_PROJECT_NAMESPACE; LW_PROJECT_REDIS_URL (a standalone server) or
 * LW_PROJECT_CLUSTER_SEEDS (a JSON list of { host, port } seeds of a Redis Cluster).
 */
import { Cluster, Redis } from "ioredis";
import { RedisLeaseStore, type RedisClient } from "@leasewatch/lease";
import { PROJECTION_INTERVAL_MS } from "@leasewatch/lease/internal";

export interface ProjectorSummary {
  projected: number;
  maxLagMs: number;
  cpuUs: number;
}

function connect(): RedisClient {
  const seeds = process.env.LW_PROJECT_CLUSTER_SEEDS;
  if (seeds) return new Cluster(JSON.parse(seeds) as Array<{ host: string; port: number }>);
  return new Redis(process.env.LW_PROJECT_REDIS_URL ?? "redis://127.0.0.1:6379");
}

async function main(): Promise<void> {
  const namespace = process.env.LW_PROJECT_NAMESPACE;
  if (!namespace) throw new Error("LW_PROJECT_NAMESPACE is required");
  const client = connect();
  const store = new RedisLeaseStore({ name: "bench-projector", client, namespace });
  const summary: ProjectorSummary = { projected: 0, maxLagMs: 0, cpuUs: 0 };
  // Connects and loads the store's functions before the CPU clock starts.
  await store.projectionLag();
  const cpuAtStart = process.cpuUsage();
  let running: Promise<void> = Promise.resolve();
  let isProjecting = false;
  const timer = setInterval(() => {
    if (isProjecting) return;
    isProjecting = true;
    running = store
      .projectionLag()
      .then(({ lagMs }) => {
        summary.maxLagMs = Math.max(summary.maxLagMs, lagMs);
        return store.project();
      })
      .then((r) => void (summary.projected += r.applied))
      .catch(() => undefined)
      .finally(() => (isProjecting = false));
  }, PROJECTION_INTERVAL_MS);
  process.stdin.resume();
  process.stdin.once("close", () => {
    clearInterval(timer);
    void running.then(async () => {
      const cpu = process.cpuUsage(cpuAtStart);
      summary.cpuUs = cpu.user + cpu.system;
      process.stdout.write(`${JSON.stringify(summary)}\n`);
      await store.close();
      client.disconnect();
      process.exit(0);
    });
  });
  process.stdout.write("projecting\n");
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
