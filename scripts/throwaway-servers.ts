/**
 * Throwaway real servers: a redis-server, a Redis Cluster, a PostgreSQL
 * postmaster or a PgBouncer in front of one, on free loopback ports, which a fault test may stop, kill -9 or
 * restart without touching the shared instances on 5432/6379. The demo
 * (DEMO_REDIS_CLUSTER=1) and the lease bench start their Redis Cluster here too.
 *
 * Each server runs in its own process group (spawned detached) and is killed by
 * group, so no backend or child survives. Everything started here is stopped by
 * `stopAllServers()` (call it in afterAll) and, as a last resort, on process exit.
 */
import { execFileSync, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { sleep } from "@leasewatch/lease/testing";
import { killGroupSync, spawnGroup, stopGroup, waitForExit } from "./process-group";

export interface ThrowawayServer {
  readonly kind: "redis" | "postgres";
  readonly port: number;
  readonly url: string;
  /** Graceful stop (Redis: SIGTERM, no save; Postgres: fast shutdown). */
  stop(): Promise<void>;
  /** SIGKILL to the whole process group. */
  kill9(): Promise<void>;
  /** Stop (if running) and start again on the same port (Postgres: same data dir). */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT the whole group: the server hangs instead of refusing connections. */
  pause(): void;
  resume(): void;
  /** Whether the server process is currently running. */
  readonly isRunning: boolean;
}

const READY_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 10_000;

const cleanups = new Set<() => Promise<void>>();
const dataDirs = new Set<string>();

/** Child pids of `pid`, read from /proc (Linux). */
function listChildPids(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Field 4 (ppid) follows the parenthesised command name, which may contain spaces.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return children;
}

/**
 * Signals the group AND every direct child. PostgreSQL backends call setsid(), so
 * they are not in the postmaster's process group: a group signal alone would
 * leave them running (or unfrozen).
 */
function signalTreeSync(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const children = listChildPids(child.pid);
  killGroupSync(child, signal);
  for (const pid of children) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone
    }
  }
}

// Last resort: never leave data behind when the test process exits (process-group.ts kills the servers).
process.once("exit", () => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/** Registers `cleanup` for stopAllServers(); returns it made to run once, whoever calls it first. */
function addCleanup(cleanup: () => Promise<void>): () => Promise<void> {
  const once = async () => {
    if (!cleanups.delete(once)) return;
    await cleanup();
  };
  cleanups.add(once);
  return once;
}

/** A temporary directory for a server's data, owned by `owner` when given; removed on exit at the latest. */
function makeDataDir(prefix: string, owner?: { uid: number; gid: number }): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  dataDirs.add(dir);
  if (owner) chownSync(dir, owner.uid, owner.gid);
  return dir;
}

function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  dataDirs.delete(dir);
}

/** Stops every server started by this process and removes their data. */
export async function stopAllServers(): Promise<void> {
  await Promise.all([...cleanups].map((cleanup) => cleanup()));
}

/** A free TCP port on 127.0.0.1 (asks the kernel for one, then frees it). */
export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

async function waitUntil(what: string, check: () => Promise<boolean>, child: () => ChildProcess | null, logs: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const c = child();
    if (c && (c.exitCode !== null || c.signalCode !== null)) throw new Error(`${what} exited during start-up:\n${logs()}`);
    if (await check().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`${what} not ready within ${READY_TIMEOUT_MS} ms:\n${logs()}`);
}

/** Sends PING over a raw socket; true on +PONG. */
function pingRedis(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.on("error", () => done(false));
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (data) => done(data.toString().startsWith("+PONG")));
  });
}

type ServerProcess = ReturnType<typeof spawnGroup>;

/**
 * A ThrowawayServer around the process `spawnServer` starts, ready once `isReady` answers;
 * a restart spawns it again on the same port. `signal` reaches the whole server (its group,
 * or more); `stop` and `kill9` end it gracefully or not.
 */
async function superviseServer(options: {
  kind: ThrowawayServer["kind"];
  port: number;
  url: string;
  /** Names the server in start-up errors. */
  what: string;
  spawnServer: () => ServerProcess;
  isReady: () => Promise<boolean>;
  signal: (child: ChildProcess, signal: NodeJS.Signals) => void;
  stop: (child: ChildProcess) => Promise<void>;
  kill9: (child: ChildProcess) => Promise<void>;
}): Promise<ThrowawayServer> {
  let proc: ServerProcess | null = null;
  const launch = async () => {
    const current = (proc = options.spawnServer());
    await waitUntil(options.what, options.isReady, () => current.child, current.logs);
  };
  const isUp = () => proc !== null && proc.child.exitCode === null && proc.child.signalCode === null;
  await launch();
  const server: ThrowawayServer = {
    kind: options.kind,
    port: options.port,
    url: options.url,
    get isRunning() {
      return isUp();
    },
    stop: async () => {
      if (proc) await options.stop(proc.child);
    },
    kill9: async () => {
      if (proc) await options.kill9(proc.child);
    },
    pause: () => {
      if (proc) options.signal(proc.child, "SIGSTOP");
    },
    resume: () => {
      if (proc) options.signal(proc.child, "SIGCONT");
    },
    restart: async () => {
      if (isUp()) await server.stop();
      await launch();
    },
  };
  return server;
}

/**
 * A redis-server on `port` with `args` added, no persistence: a restart loses every key.
 * `env` is read at every (re)start, so a test can change it before a restart.
 */
function superviseRedis(what: string, port: number, args: string[], env?: () => NodeJS.ProcessEnv): Promise<ThrowawayServer> {
  return superviseServer({
    kind: "redis",
    port,
    url: `redis://127.0.0.1:${port}`,
    what: `${what} :${port}`,
    spawnServer: () => spawnGroup("redis-server", ["--port", String(port), "--bind", "127.0.0.1", ...args, "--save", "", "--appendonly", "no", "--daemonize", "no"], env ? { env: env() } : {}),
    isReady: () => pingRedis(port),
    signal: killGroupSync,
    stop: (child) => stopGroup(child, "SIGTERM", STOP_TIMEOUT_MS),
    kill9: (child) => stopGroup(child, "SIGKILL", STOP_TIMEOUT_MS),
  });
}

/**
 * redis-server on a free port, no persistence: a restart loses every key. `env` is added to
 * the server's environment (a clock shim, for instance) each time it starts: what the caller
 * changes in it before a restart applies to the restarted server.
 */
export async function startRedis(options: { env?: Record<string, string> } = {}): Promise<ThrowawayServer> {
  const server = await superviseRedis("redis-server", await findFreePort(), [], () => ({ ...process.env, ...options.env }));
  addCleanup(() => server.kill9());
  return server;
}

export interface ThrowawayCluster {
  /** The masters, in slot order; each may be killed and restarted like a throwaway redis-server. */
  readonly masters: ThrowawayServer[];
  /** `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,…` (the store's URL form). */
  readonly url: string;
  readonly seeds: { host: string; port: number }[];
  /** Node id of a master (CLUSTER MYID). */
  nodeId(master: ThrowawayServer): Promise<string>;
  /** Moves `slots` slots from one master to another with `redis-cli --cluster reshard` (live, keys included). */
  reshard(from: ThrowawayServer, to: ThrowawayServer, slots: number): Promise<void>;
  /** Waits until every running master reports cluster_state:ok. */
  waitUntilOk(): Promise<void>;
}

function redisCli(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const { child, logs } = spawnGroup("redis-cli", args);
    child.once("exit", (code) => (code === 0 ? resolve(logs()) : reject(new Error(`redis-cli ${args.join(" ")} exited ${code}:\n${logs()}`))));
  });
}

/**
 * A Redis Cluster of `masters` masters without replicas, each a throwaway redis-server on free
 * ports (client and cluster bus), no persistence: a master restarted after kill -9 comes back
 * with its slots (nodes.conf is kept) and no keys. `cluster-require-full-coverage no`, so the
 * other masters keep serving their slots while one is down.
 */
export async function startRedisCluster(masters = 3): Promise<ThrowawayCluster> {
  const dir = makeDataDir("lw-cluster-");
  const nodes: ThrowawayServer[] = [];
  for (let i = 0; i < masters; i++) {
    const port = await findFreePort();
    const busPort = await findFreePort();
    const server = await superviseRedis("redis-server (cluster)", port, [
      "--cluster-port", String(busPort),
      "--cluster-enabled", "yes",
      "--cluster-config-file", path.join(dir, `nodes-${port}.conf`),
      "--cluster-node-timeout", "2000",
      "--cluster-require-full-coverage", "no",
      "--dir", dir,
    ]);
    nodes.push(server);
  }
  const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
  await redisCli(["--cluster", "create", ...addresses, "--cluster-replicas", "0", "--cluster-yes"]);
  const cluster: ThrowawayCluster = {
    masters: nodes,
    url: `redis+cluster://${addresses.join(",")}`,
    seeds: nodes.map((n) => ({ host: "127.0.0.1", port: n.port })),
    nodeId: async (master) => (await redisCli(["-p", String(master.port), "cluster", "myid"])).trim(),
    reshard: async (from, to, slots) => {
      const [fromId, toId] = [await cluster.nodeId(from), await cluster.nodeId(to)];
      await redisCli([
        "--cluster", "reshard", `127.0.0.1:${from.port}`,
        "--cluster-from", fromId,
        "--cluster-to", toId,
        "--cluster-slots", String(slots),
        "--cluster-yes",
      ]);
    },
    waitUntilOk: async () => {
      const deadline = Date.now() + READY_TIMEOUT_MS;
      for (;;) {
        const states = await Promise.all(
          nodes.filter((n) => n.isRunning).map((n) => redisCli(["-p", String(n.port), "cluster", "info"]).catch(() => "")),
        );
        if (states.every((info) => /cluster_state:ok/.test(info))) return;
        if (Date.now() > deadline) throw new Error(`cluster not ok within ${READY_TIMEOUT_MS} ms`);
        await sleep(100);
      }
    },
  };
  await cluster.waitUntilOk();
  addCleanup(async () => {
    await Promise.all(nodes.map((n) => n.kill9()));
    removeDataDir(dir);
  });
  return cluster;
}

/** Newest /usr/lib/postgresql/<version>/bin, or the directory of `postgres` on PATH. */
export function findPostgresBinDir(): string {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(path.join(root, v, "bin", "postgres")))
      .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
    if (versions[0]) return path.join(root, versions[0], "bin");
  }
  const onPath = execFileSync("sh", ["-c", "command -v postgres || true"]).toString().trim();
  if (onPath) return path.dirname(onPath);
  throw new Error("PostgreSQL server binaries not found (install postgresql)");
}

/** uid/gid to run PostgreSQL as: it refuses root, so as root we switch to the `postgres` user. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  return { uid, gid };
}

async function canQuery(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A fresh PostgreSQL cluster (initdb into a temp dir) on a free port, trust auth,
 * fsync off. Runs as the `postgres` user when we are root — the same as
 * `runuser -u postgres --`, but with the postmaster itself as the process-group
 * leader, so a group kill reaches every backend.
 */
/** `settings`: extra server settings (`-c name=value`), e.g. a larger max_locks_per_transaction. */
export async function startPostgres(options: { settings?: Record<string, string> } = {}): Promise<ThrowawayServer> {
  const bin = findPostgresBinDir();
  const user = postgresUser();
  const port = await findFreePort();
  const dataDir = makeDataDir("lw-pg-", user);
  execFileSync(path.join(bin, "initdb"), ["-D", dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"], {
    stdio: "pipe",
    cwd: dataDir,
    ...(user ?? {}),
  });

  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const settings = Object.entries(options.settings ?? {}).flatMap(([name, value]) => ["-c", `${name}=${value}`]);
  const server = await superviseServer({
    kind: "postgres",
    port,
    url,
    what: `postgres :${port}`,
    spawnServer: () =>
      spawnGroup(path.join(bin, "postgres"), ["-D", dataDir, "-p", String(port), "-k", dataDir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=100", ...settings], {
        cwd: dataDir,
        ...(user ?? {}),
      }),
    isReady: () => canQuery(url),
    signal: signalTreeSync,
    // SIGINT to the postmaster = fast shutdown (rolls back open transactions,
    // disconnects clients); the postmaster then stops its backends itself.
    stop: async (child) => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      process.kill(child.pid, "SIGINT");
      if (!(await waitForExit(child, STOP_TIMEOUT_MS))) {
        signalTreeSync(child, "SIGKILL");
        await waitForExit(child, STOP_TIMEOUT_MS);
      }
    },
    kill9: async (child) => {
      signalTreeSync(child, "SIGKILL");
      await waitForExit(child, STOP_TIMEOUT_MS);
    },
  });
  addCleanup(async () => {
    await server.kill9();
    removeDataDir(dataDir);
  });
  return server;
}

export interface ThrowawayPooler {
  readonly port: number;
  /** Connection string through the pooler, same user and database as the target. */
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * PgBouncer in transaction pooling mode on a free port, in front of `targetUrl`: each
 * transaction (each statement outside one) may run on a different server connection,
 * as behind PgBouncer in production or RDS Proxy. `auth_type = any` (trusted loopback,
 * like the test servers). Runs as the `postgres` user when we are root (PgBouncer refuses root).
 */
export async function startPgBouncer(targetUrl: string, options: { poolSize?: number } = {}): Promise<ThrowawayPooler> {
  const target = new URL(targetUrl);
  const user = postgresUser();
  const port = await findFreePort();
  const dir = makeDataDir("lw-pgbouncer-", user);
  const targetUser = decodeURIComponent(target.username || "postgres");
  const configFile = path.join(dir, "pgbouncer.ini");
  writeFileSync(
    configFile,
    [
      "[databases]",
      `* = host=${target.hostname || "127.0.0.1"} port=${target.port || "5432"} user=${targetUser}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = any",
      "pool_mode = transaction",
      `default_pool_size = ${options.poolSize ?? 2}`,
      "max_client_conn = 500",
      // PgBouncer 1.21+ can track protocol-level prepared statements; 0 keeps the classic behaviour.
      ...(pgBouncerVersion() >= 1.21 ? ["max_prepared_statements = 0"] : []),
      "ignore_startup_parameters = extra_float_digits,options",
      "",
    ].join("\n"),
  );
  if (user) chownSync(configFile, user.uid, user.gid);
  const proc = spawnGroup("pgbouncer", [configFile], { cwd: dir, ...(user ?? {}) });
  const url = `postgres://${encodeURIComponent(targetUser)}@127.0.0.1:${port}${target.pathname || "/postgres"}`;
  await waitUntil(`pgbouncer :${port}`, () => canQuery(url), () => proc.child, proc.logs);
  const stop = addCleanup(async () => {
    await stopGroup(proc.child, "SIGKILL", STOP_TIMEOUT_MS);
    removeDataDir(dir);
  });
  return { port, url, stop };
}

/** `pgbouncer --version` as major.minor (1.18 → 1.18); throws when PgBouncer is not installed. */
function pgBouncerVersion(): number {
  const out = execFileSync("pgbouncer", ["--version"]).toString();
  const match = /PgBouncer (\d+)\.(\d+)/.exec(out);
  if (!match) throw new Error(`unexpected pgbouncer --version output: ${out}`);
  return Number(match[1]) + Number(match[2]) / 100;
}
