/**
 * Brings up the console stack on one machine, for the demo and the browser tests:
 *
 *   1. the local OIDC provider (scripts/oidc-provider.ts, demo users, in this process),
 *   2. optionally the workload generator (scripts/workload, in this process),
 *   3. the console as a production server: `node_modules/.bin/next start`, built first
 *      when `.next/BUILD_ID` is missing or older than the sources.
 *
 * Child processes run in their own process group and are stopped by group, so no
 * `next-server` outlives the stack (on stop(), exit, SIGINT or SIGTERM).
 *
 * CLI: `tsx scripts/stack.ts [--port 3000] [--oidc-port 4400] [--workload] [--no-build]`.
 * Stores come from LEASEWATCH_STORES (default: local Postgres and Redis).
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseStoresConfig, ConfigError, type TStoreConfig } from "../lib/server/store-config";
import { DEMO_ROLE_MAP, parseAuthEnv, EnvError } from "../lib/auth/env";
import { AuditConfigError, DEMO_AUDIT_KEY, parseAuditConfig } from "../lib/audit/config";
import { observedHistorySchema } from "../lib/observed/runtime";
import { startObservers } from "../lib/server/observers";
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, DEMO_USERS, startOidcProvider, type RunningOidcProvider } from "./oidc-provider";
import { demoObservedConfig, startObservedWorkload } from "./workload/observed";
import { spawnGroup, stopGroup } from "./process-group";

/** The demo's audit chain key: local data only, never for a real deployment (production refuses it off loopback). */
export { DEMO_AUDIT_KEY };

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const NEXT_BIN = path.join(ROOT, "node_modules", ".bin", "next");
/** Longer than the usual 60 s idle timeout of load balancers and of keep-alive clients. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
const BUILD_ID = path.join(ROOT, ".next", "BUILD_ID");
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 8_000;
/** Inputs of `next build`; a change to any of them makes the production build stale. */
const BUILD_INPUTS = ["app", "components", "lib", "public", "proxy.ts", "next.config.js", "postcss.config.mjs", "package.json", "package-lock.json"];

export const DEFAULT_CONSOLE_PORT = 3000;

/** A running workload, as scripts/workload's `startWorkload` returns it. */
export interface WorkloadHandle {
  stop(): Promise<void>;
}
export type WorkloadStarter = (options: { stores: TStoreConfig[] }) => Promise<WorkloadHandle>;

let workloadStarter: WorkloadStarter | undefined;

/** Plug in a workload starter explicitly (otherwise `./workload` is imported lazily when asked for). */
export function setWorkloadStarter(starter: WorkloadStarter | undefined): void {
  workloadStarter = starter;
}

async function loadWorkloadStarter(): Promise<WorkloadStarter | null> {
  if (workloadStarter) return workloadStarter;
  const entry = path.join(ROOT, "scripts", "workload", "index.ts");
  if (!existsSync(entry)) return null;
  // Resolved at run time: the stack works (without a workload) in a checkout that has none.
  const mod = (await import(pathToFileURL(entry).href)) as { startWorkload?: WorkloadStarter };
  return mod.startWorkload ?? null;
}

export interface StackOptions {
  /** Console port (default 3000). */
  port?: number;
  /** IdP port (default 4400). */
  oidcPort?: number;
  /** Extra environment for the console (and the workload's store config), e.g. LEASEWATCH_STORES. */
  env?: Record<string, string | undefined>;
  /** Start the workload generator when it is available (default false). */
  workload?: boolean;
  /** IdP access-token lifetime in seconds (default 1 h); tests shorten it so token refresh is exercised. */
  accessTokenTtlS?: number;
  /** "auto" (default): build when missing or stale; "always"; "never". */
  build?: "auto" | "always" | "never";
  log?: (line: string) => void;
}

export interface RunningStack {
  url: string;
  issuer: string;
  env: Record<string, string>;
  stores: TStoreConfig[];
  isWorkloadRunning: boolean;
  /** The running demo IdP (tests change users' groups through it). */
  idp: RunningOidcProvider;
  /** Process group id of `next start` (its pid): the console's processes, for measuring memory. */
  consolePid: number | undefined;
  stop(): Promise<void>;
}

function newestMtime(target: string): number {
  if (!existsSync(target)) return 0;
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(target, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    // Tests are not part of the build; editing one must not force a rebuild.
    if (entry.isFile() && /\.test\.tsx?$/.test(entry.name)) continue;
    newest = Math.max(newest, newestMtime(path.join(target, entry.name)));
  }
  return newest;
}

/** Whether `.next` is missing or older than any build input. */
export function isBuildStale(): boolean {
  if (!existsSync(BUILD_ID)) return true;
  const built = statSync(BUILD_ID).mtimeMs;
  return BUILD_INPUTS.some((input) => newestMtime(path.join(ROOT, input)) > built);
}

function spawnLogged(command: string, args: string[], env: NodeJS.ProcessEnv, log: (line: string) => void, prefix: string) {
  return spawnGroup(command, args, { cwd: ROOT, env, onLine: (line) => log(`${prefix} ${line}`) });
}

async function runBuild(env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<void> {
  log("[stack] building the console (next build)…");
  const { child, logs } = spawnLogged(NEXT_BIN, ["build"], env, log, "[build]");
  const code: number | null = await new Promise((resolve) => child.once("exit", (c) => resolve(c)));
  if (code !== 0) throw new Error(`next build failed (exit ${code}):\n${logs()}`);
}

async function waitForHttp(url: string, child: ChildProcess, tail: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the console exited during start-up:\n${tail()}`);
    try {
      const response = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(2_000) });
      if (response.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`the console did not answer at ${url} within ${READY_TIMEOUT_MS} ms:\n${tail()}`);
}

/** Starts IdP, workload (optional) and console; resolves when the console answers. */
export async function startStack(options: StackOptions = {}): Promise<RunningStack> {
  const port = options.port ?? DEFAULT_CONSOLE_PORT;
  const oidcPort = options.oidcPort ?? 4400;
  const log = options.log ?? ((line: string) => console.log(line));
  const url = `http://127.0.0.1:${port}`;
  const issuer = `http://127.0.0.1:${oidcPort}`;

  const consoleEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...options.env })) if (v !== undefined) consoleEnv[k] = v;
  Object.assign(consoleEnv, {
    NODE_ENV: "production",
    // The local IdP, its public secret and plain http on loopback are allowed only with this flag.
    LEASEWATCH_DEMO: "1",
    // Production refuses an unset role map; the demo states its own explicitly.
    LEASEWATCH_ROLE_MAP: consoleEnv.LEASEWATCH_ROLE_MAP || DEMO_ROLE_MAP,
    NEXT_TELEMETRY_DISABLED: "1",
    NEXTAUTH_URL: url,
    OIDC_ISSUER: issuer,
    OIDC_CLIENT_ID: consoleEnv.OIDC_CLIENT_ID || DEFAULT_CLIENT_ID,
    OIDC_CLIENT_SECRET: consoleEnv.OIDC_CLIENT_SECRET || DEFAULT_CLIENT_SECRET,
    // A fresh secret per run unless one is given: sessions simply end with the stack.
    NEXTAUTH_SECRET: options.env?.NEXTAUTH_SECRET || randomBytes(32).toString("base64url"),
    // The demo and the browser tests run the console with both duties on; production
    // leaves them to `npm run migrate` and the workers (or `npm run sweeper`).
    LEASEWATCH_MIGRATE: consoleEnv.LEASEWATCH_MIGRATE || "1",
    LEASEWATCH_SWEEP: consoleEnv.LEASEWATCH_SWEEP || "1",
    // A fixed key unless one is given, so the local audit log verifies across demo runs.
    LEASEWATCH_AUDIT_KEY: consoleEnv.LEASEWATCH_AUDIT_KEY || DEMO_AUDIT_KEY,
  });
  delete consoleEnv.PORT;
  const childEnv = consoleEnv as NodeJS.ProcessEnv;

  // Configuration problems are reported here, plainly, before anything starts.
  const stores = parseStoresConfig(childEnv);
  // With the workload, the demo also observes the locks its own observed workload takes
  // (advisory locks, ShedLock, redlock), unless observed stores are configured already.
  const pgStore = stores.find((s) => s.kind === "postgres");
  const redisStore = stores.find((s) => s.kind === "redis" && !s.url.startsWith("redis+cluster://"));
  const observeDemo = options.workload === true && !consoleEnv.LEASEWATCH_OBSERVED && pgStore !== undefined && redisStore !== undefined;
  // The demo's ShedLock table sits beside the observed history (a schema of the run's own in the browser tests).
  const demoShedlockTable = `${observedHistorySchema(childEnv)}_demo.shedlock`;
  if (observeDemo) {
    consoleEnv.LEASEWATCH_OBSERVED = JSON.stringify(demoObservedConfig(pgStore.url, redisStore.url, demoShedlockTable));
    consoleEnv.LEASEWATCH_OBSERVE_INTERVAL_MS ||= "2000";
  }
  parseAuthEnv(childEnv);
  parseAuditConfig(childEnv, stores);

  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const fn of stops.splice(0).reverse()) await fn().catch((e: unknown) => log(`[stack] stop: ${String(e)}`));
  };

  try {
    const idp: RunningOidcProvider = await startOidcProvider({
      port: oidcPort,
      clientId: consoleEnv.OIDC_CLIENT_ID,
      clientSecret: consoleEnv.OIDC_CLIENT_SECRET,
      redirectUris: [`${url}/api/auth/callback/oidc`],
      postLogoutRedirectUris: [`${url}/signin`],
      ...(options.accessTokenTtlS !== undefined ? { accessTokenTtlS: options.accessTokenTtlS } : {}),
      env: childEnv,
    });
    stops.push(() => idp.close());
    log(`[stack] identity provider at ${issuer} (demo users: ${Object.keys(DEMO_USERS).join(", ")}; any password)`);

    const build = options.build ?? "auto";
    if (build === "always" || (build === "auto" && isBuildStale())) await runBuild(childEnv, log);
    else if (!existsSync(BUILD_ID)) throw new Error("no production build (.next/BUILD_ID); run `next build` or use build: \"auto\"");

    let isWorkloadRunning = false;
    if (options.workload) {
      const starter = await loadWorkloadStarter();
      if (starter) {
        const workload = await starter({ stores });
        stops.push(() => workload.stop());
        isWorkloadRunning = true;
        log(`[stack] workload running on ${stores.map((s) => s.name).join(", ")}`);
        if (observeDemo) {
          const observedWorkload = await startObservedWorkload({ pgUrl: pgStore.url, redisUrl: redisStore.url, shedlockTable: demoShedlockTable, log });
          stops.push(() => observedWorkload.stop());
          const observers = await startObservers({ env: childEnv, log });
          if (observers) stops.push(() => observers.stop());
        }
      } else {
        log("[stack] workload generator not available; starting without it");
      }
    }

    // Idle keep-alive connections are closed after 65 s, not Node's 5 s: a client (a proxy, a
    // browser, a test's request context) reusing one just as the server closes it gets ECONNRESET.
    const server = spawnLogged(NEXT_BIN, ["start", "--port", String(port), "--hostname", "127.0.0.1", "--keepAliveTimeout", String(KEEP_ALIVE_TIMEOUT_MS)], childEnv, log, "[console]");
    stops.push(() => stopGroup(server.child, "SIGTERM", STOP_TIMEOUT_MS));
    await waitForHttp(`${url}/signin`, server.child, server.logs);
    log(`[stack] console ready at ${url}`);

    return { url, issuer, env: consoleEnv, stores, isWorkloadRunning, idp, consolePid: server.child.pid, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function readFlag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

function parsePort(value: string | undefined, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new ConfigError(`${what} must be a port number, got "${value}"`);
  return port;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const stack = await startStack({
    port: parsePort(readFlag(args, "--port") ?? process.env.PORT, DEFAULT_CONSOLE_PORT, "--port"),
    oidcPort: parsePort(readFlag(args, "--oidc-port") ?? process.env.OIDC_PORT, 4400, "--oidc-port"),
    workload: args.includes("--workload"),
    build: args.includes("--no-build") ? "never" : "auto",
  });
  console.log(`\n  Leasewatch console: ${stack.url}\n  Sign in as alice (operator) or bob (viewer), any password.\n`);
  let isStopping = false;
  const shutdown = () => {
    if (isStopping) return;
    isStopping = true;
    void stack.stop().then(() => process.exit(0));
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    const isConfig = error instanceof ConfigError || error instanceof EnvError || error instanceof AuditConfigError;
    console.error(isConfig ? `[stack] configuration problem: ${(error as Error).message}` : error);
    process.exit(1);
  });
}
