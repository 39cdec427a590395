/**
 * `npm run demo`: everything on one machine, from a fresh clone.
 *
 *   1. PostgreSQL and Redis: DATABASE_URL / REDIS_URL when set, otherwise the local
 *      servers, started (or installed) by scripts/ensure-services.sh when absent.
 *   2. Migrations for every configured Postgres store.
 *   3. The stack (scripts/stack.ts): the local OIDC provider with the demo users,
 *      the workload generator with a few hours of backfilled history, and the
 *      console as a production build (built first when missing or stale).
 *   4. The lock API (`npm run api`) on API_PORT (default 8787), with a fresh token for
 *      the tenant prefix `demo:` printed once (the lock API docs' curl flow uses it).
 *   5. Runs until Ctrl-C, then stops everything — child processes by process group.
 *      It runs under `node --import tsx` (package.json), not the tsx CLI: the CLI relays a
 *      Ctrl-C to its child and SIGKILLs it unless the child acknowledges within 30 ms, which a
 *      busy demo misses — it then died before stopping the console and the cluster's
 *      redis-servers, which run in process groups of their own and so outlived it.
 *
 * DEMO_REDIS_CLUSTER=1 runs the Redis store on a local 3-master Redis Cluster instead (throwaway
 * redis-servers on free ports, stopped with the demo), unless LEASEWATCH_STORES names the stores.
 *
 * Ports: PORT (console, default 3000), OIDC_PORT (identity provider, default 4400), API_PORT (lock API, default 8787).
 * METRICS_TOKEN: the bearer token for the console's /api/metrics and the lock API's /metrics
 * (a random one when unset); the demo writes it and a Prometheus config that scrapes both
 * (with ops/alerts.yml) to
 * <tmpdir>/leasewatch-demo/ and prints how to start Prometheus with them.
 * The workload's workers export their OpenTelemetry metrics with the Prometheus exporter on
 * 127.0.0.1:DEMO_WORKER_METRICS_PORT (default 9464), scraped by that Prometheus config too.
 * DEMO_BACKFILL_HOURS (default 6) and DEMO_INTENSITY (default 1) shape the workload; it
 * only loads stores on this machine unless DEMO_ALLOW_REMOTE=1.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { PostgresLeaseStore } from "@leasewatch/lease";
import { ConfigError, parseStoresConfig, type TStoreConfig } from "@/lib/server/store-config";
import { DEMO_ROLE_MAP, EnvError } from "@/lib/auth/env";
import { getPrimaryRole, mapGroupsToAccess, parseRoleMap, scopeForPermission } from "@/lib/auth/roles";
import { describeScope } from "@/lib/auth/scope";
import { AuditConfigError } from "@/lib/audit/config";
import { startRedisCluster, stopAllServers } from "./throwaway-servers";
import { DEMO_USERS } from "./oidc-provider";
import { setWorkloadStarter, startStack, type RunningStack } from "./stack";
import { startWorkload, type Workload } from "./workload";
import { startWorkerMetrics } from "./workload/metrics-exporter";
import type { RunningApi } from "@/lib/api/start";
import { startDemoApi } from "./demo-api";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** A second stop signal sooner than this after the first is the same Ctrl-C delivered twice. */
const DUPLICATE_SIGNAL_MS = 1_000;

const ZDemoEnv = z.object({
  PORT: z.coerce.number().int().min(1).max(65_535).default(3000),
  OIDC_PORT: z.coerce.number().int().min(1).max(65_535).default(4400),
  API_PORT: z.coerce.number().int().min(1).max(65_535).default(8787),
  DEMO_WORKER_METRICS_PORT: z.coerce.number().int().min(1).max(65_535).default(9464),
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

interface PrometheusSetup {
  token: string;
  configPath: string;
  dataDir: string;
}

/**
 * The token file and a prometheus.yml that scrapes this console's /api/metrics and the lock API's /metrics with it and
 * loads the example alert rules: `prometheus --config.file=…` is all a newcomer has to run.
 */
function writePrometheusSetup(consoleUrl: string, apiUrl: string, token: string, workerMetricsUrl: string): PrometheusSetup {
  const dir = path.join(os.tmpdir(), "leasewatch-demo");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tokenPath = path.join(dir, "metrics-token");
  writeFileSync(tokenPath, token, { mode: 0o600 });
  const target = new URL(consoleUrl).host;
  const configPath = path.join(dir, "prometheus.yml");
  writeFileSync(
    configPath,
    [
      "# Written by `npm run demo`: scrapes the demo console and lock API and evaluates the example alert rules.",
      "global: { scrape_interval: 15s, evaluation_interval: 15s }",
      `rule_files: [${JSON.stringify(path.join(ROOT, "ops", "alerts.yml"))}]`,
      "scrape_configs:",
      "  - job_name: leasewatch",
      "    metrics_path: /api/metrics",
      `    authorization: { type: Bearer, credentials_file: ${JSON.stringify(tokenPath)} }`,
      `    static_configs: [{ targets: [${JSON.stringify(target)}] }]`,
      "  - job_name: leasewatch-api",
      "    metrics_path: /metrics",
      `    authorization: { type: Bearer, credentials_file: ${JSON.stringify(tokenPath)} }`,
      `    static_configs: [{ targets: [${JSON.stringify(new URL(apiUrl).host)}] }]`,
      "  - job_name: leasewatch-workers",
      "    metrics_path: /metrics",
      `    static_configs: [{ targets: [${JSON.stringify(new URL(workerMetricsUrl).host)}] }]`,
      "",
    ].join("\n"),
  );
  return { token, configPath, dataDir: path.join(dir, "prometheus-data") };
}

function printWelcome(stack: RunningStack, prometheus: PrometheusSetup, api: { url: string; token: string }, workerMetricsUrl: string): void {
  const roleMap = parseRoleMap(process.env.LEASEWATCH_ROLE_MAP || DEMO_ROLE_MAP);
  const users = Object.entries(DEMO_USERS)
    .map(([login, user]) => {
      const access = mapGroupsToAccess(user.groups, roleMap);
      const role = getPrimaryRole(access.roles);
      const scope = role ? scopeForPermission(access, "leases:read") : null;
      const unverified = user.emailVerified ? "" : ` (email ${user.email} unverified: shown and recorded as ${login})`;
      return `    ${login.padEnd(8)} ${role ?? "no access"}${scope && scope.kind === "prefixes" ? ` (only ${describeScope(scope)})` : ""}${unverified}`;
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
  │ Metrics:             ${stack.url}/api/metrics
  │   METRICS_TOKEN=${prometheus.token}
  │   curl -H "Authorization: Bearer ${prometheus.token}" ${stack.url}/api/metrics
  │ A local Prometheus (scrapes it, loads ops/alerts.yml; Debian: apt-get install prometheus):
  │   prometheus --config.file=${prometheus.configPath} \\
  │     --storage.tsdb.path=${prometheus.dataDir} --web.listen-address=127.0.0.1:9090
  │
  │ Lock API:            ${api.url}  (tenant prefix demo:)
  │   export LEASEWATCH_API=${api.url}
  │   export LEASEWATCH_TOKEN=${api.token}
  │   curl -H "Authorization: Bearer ${prometheus.token}" ${api.url}/metrics
  │
  │ A workload is running: healthy holders, slow renewers, crashing
  │ holders, hot-spot contention, stale writers hitting fencing.
  │ Workers' metrics:    ${workerMetricsUrl}
  │   (OpenTelemetry, Prometheus exporter: acquire wait, renewals, losses, pool use)
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
  const workerMetrics = await startWorkerMetrics({ port: env.DEMO_WORKER_METRICS_PORT });
  setWorkloadStarter(async (options) => {
    workload = await startWorkload({
      stores: options.stores,
      meterProvider: workerMetrics.meterProvider,
      backfillHours: env.DEMO_BACKFILL_HOURS,
      intensity: env.DEMO_INTENSITY,
      allowRemote: env.DEMO_ALLOW_REMOTE === "1",
      log: say,
    });
    return workload;
  });

  // The console and the lock API read METRICS_TOKEN from the environment.
  const metricsToken = (process.env.METRICS_TOKEN ||= randomBytes(32).toString("base64url"));
  const stack = await startStack({ port: env.PORT, oidcPort: env.OIDC_PORT, workload: true, log: say });
  let demoApi: { api: RunningApi; token: string };
  try {
    // The token's audit entry goes to the console's audit log, chained with the console's key.
    demoApi = await startDemoApi({ port: env.API_PORT, env: { ...process.env, LEASEWATCH_AUDIT_KEY: stack.env.LEASEWATCH_AUDIT_KEY }, stores: stack.stores });
  } catch (error) {
    await stack.stop();
    await workerMetrics.stop();
    throw error;
  }
  printWelcome(stack, writePrometheusSetup(stack.url, demoApi.api.url, metricsToken, workerMetrics.url), { url: demoApi.api.url, token: demoApi.token }, workerMetrics.url);

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
    demoApi.api
      .close()
      .then(() => stack.stop())
      .then(() => workerMetrics.stop())
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
