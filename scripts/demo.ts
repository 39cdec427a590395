/**
 * `npm run demo`: everything on one machine, from a fresh clone.
 *
 *   1. PostgreSQL and Redis: DATABASE_URL / REDIS_URL when set, otherwise the local
 *      servers, started (or installed) by scripts/ensure-services.sh when absent.
 *   2. Migrations for every configured Postgres store.
 *   3. The stack (scripts/stack.ts): the local OIDC provider with the demo users,
 *      the workload generator with a few hours of backfilled history, and the
 *      console as a production build (built first when missing or stale).
 *   4. Runs until Ctrl-C, then stops everything — child processes by process group.
 *
 * DEMO_REDIS_CLUSTER=1 runs the Redis store on a local 3-master Redis Cluster instead (throwaway
 * redis-servers on free ports, stopped with the demo), unless LEASEWATCH_STORES names the stores.
 *
 * Ports: PORT (console, default 3000) and OIDC_PORT (identity provider, default 4400).
 * DEMO_BACKFILL_HOURS (default 6) and DEMO_INTENSITY (default 1) shape the workload; it
 * only loads stores on this machine unless DEMO_ALLOW_REMOTE=1.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { PostgresLeaseStore } from "@/lib/lease/postgres/store";
import { ConfigError, parseStoresConfig, type TStoreConfig } from "@/lib/console/config";
import { EnvError } from "@/lib/env";
import { AuditConfigError } from "@/lib/audit/config";
import { startRedisCluster, stopAllServers } from "@/test/support/servers";
import { DEMO_USERS } from "./oidc-provider";
import { setWorkloadStarter, startStack, type RunningStack } from "./stack";
import { startWorkload, type Workload } from "./workload";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** A second stop signal sooner than this after the first is the same Ctrl-C delivered twice. */
const DUPLICATE_SIGNAL_MS = 1_000;

const ZDemoEnv = z.object({
  PORT: z.coerce.number().int().min(1).max(65_535).default(3000),
  OIDC_PORT: z.coerce.number().int().min(1).max(65_535).default(4400),
  DEMO_BACKFILL_HOURS: z.coerce.number().min(0).max(48).default(6),
  DEMO_INTENSITY: z.coerce.number().min(0.25).max(4).default(1),
  /** The workload refuses stores that are not on this machine unless this is "1". */
  DEMO_ALLOW_REMOTE: z.enum(["0", "1"]).default("0"),
  /** "1": the Redis store runs on a local 3-master Redis Cluster. */
  DEMO_REDIS_CLUSTER: z.enum(["0", "1"]).default("0"),
});

function say(line: string): void {
  console.log(line);
}

function ensureServices(): void {
  say("[demo] checking PostgreSQL and Redis…");
  const result = spawnSync("bash", [path.join(ROOT, "scripts", "ensure-services.sh")], {
    cwd: ROOT,
    stdio: "inherit",
    env: { ...process.env, NEED_CHROMIUM: "0" },
  });
  if (result.status !== 0) throw new Error(`scripts/ensure-services.sh failed (exit ${result.status ?? result.signal})`);
}

async function migrateStores(stores: TStoreConfig[]): Promise<void> {
  for (const config of stores) {
    if (config.kind !== "postgres") continue;
    const store = new PostgresLeaseStore({ name: config.name, connectionString: config.url, schema: config.schema });
    try {
      const { applied, version } = await store.migrate();
      say(`[demo] ${config.name}: schema at version ${version}${applied.length ? ` (applied ${applied.join(", ")})` : ""}`);
    } finally {
      await store.close();
    }
  }
}

function printWelcome(stack: RunningStack): void {
  const users = Object.entries(DEMO_USERS)
    .map(([login, user]) => {
      const role = user.groups.includes("leasewatch-operators") ? "operator" : user.groups.includes("leasewatch-viewers") ? "viewer" : "no access";
      return `    ${login.padEnd(8)} ${role}`;
    })
    .join("\n");
  say(`
  ┌───────────────────────────────────────────────────────────────
  │ Leasewatch console:  ${stack.url}
  │ Stores:              ${stack.stores.map((s) => `${s.name} (${s.kind})`).join(", ")}
  │ Identity provider:   ${stack.issuer}
  │
  │ Sign in with any password as:
${users.replace(/^/gm, "  │")}
  │
  │ A workload is running: healthy holders, slow renewers, crashing
  │ holders, hot-spot contention, stale writers hitting fencing.
  │ Press Ctrl-C to stop everything.
  └───────────────────────────────────────────────────────────────
`);
}

async function main(): Promise<void> {
  const env = ZDemoEnv.parse(process.env);
  ensureServices();
  if (env.DEMO_REDIS_CLUSTER === "1" && !process.env.LEASEWATCH_STORES) {
    // The same throwaway cluster the tests use: redis-servers in their own process groups, gone with the demo.
    const cluster = await startRedisCluster(3);
    say(`[demo] Redis Cluster: ${cluster.url}`);
    process.env.LEASEWATCH_STORES = JSON.stringify([
      { name: "pg-main", kind: "postgres", url: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres" },
      { name: "redis-cluster", kind: "redis", url: cluster.url },
    ]);
  }
  const stores = parseStoresConfig();
  await migrateStores(stores);

  let workload: Workload | undefined;
  setWorkloadStarter(async (options) => {
    workload = await startWorkload({
      stores: options.stores,
      backfillHours: env.DEMO_BACKFILL_HOURS,
      intensity: env.DEMO_INTENSITY,
      allowRemote: env.DEMO_ALLOW_REMOTE === "1",
      log: say,
    });
    return workload;
  });

  const stack = await startStack({ port: env.PORT, oidcPort: env.OIDC_PORT, workload: true, log: say });
  printWelcome(stack);

  let stoppingSince: number | undefined;
  const shutdown = (signal: string) => {
    if (stoppingSince !== undefined) {
      // Under `npm run demo` one Ctrl-C arrives twice: the terminal signals the whole
      // process group and npm forwards it to us as well. Only a later one means "hurry".
      if (Date.now() - stoppingSince < DUPLICATE_SIGNAL_MS) return;
      // Second Ctrl-C: don't wait. The stack's exit hook still SIGKILLs its process groups.
      say("[demo] forced exit");
      process.exit(130);
    }
    stoppingSince = Date.now();
    say(`\n[demo] ${signal}: stopping the console, workload and identity provider…`);
    const stats = workload?.stats();
    stack
      .stop()
      .then(() => stopAllServers())
      .then(() => {
        if (stats) {
          for (const [name, c] of Object.entries(stats.stores)) {
            say(`[demo] ${name}: ${c.acquired} acquired, ${c.released} released, ${c.contended} contended, ${c.crashed} crashed, ${c.lost} lost, ${c.fencedRejected} fenced writes rejected`);
          }
        }
        say("[demo] stopped.");
        process.exit(0);
      })
      .catch((error: unknown) => {
        console.error("[demo] stop failed:", error);
        process.exit(1);
      });
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
}

main().catch((error: unknown) => {
  const isConfig = error instanceof ConfigError || error instanceof EnvError || error instanceof AuditConfigError || error instanceof z.ZodError;
  console.error(isConfig ? `[demo] configuration problem: ${error instanceof z.ZodError ? z.prettifyError(error) : error.message}` : error);
  process.exit(1);
});
