/**
 * Throwaway real servers: a redis-server, a Redis Cluster or a PostgreSQL
 * postmaster on free loopback ports, which a fault test may stop, kill -9 or
 * restart without touching the shared instances on 5432/6379. The demo
 * (DEMO_REDIS_CLUSTER=1) and the lease bench start their Redis Cluster here too.
 *
 * Each server runs in its own process group (spawned detached) and is killed by
 * group, so no backend or child survives. Everything started here is stopped by
 * `stopAllServers()` (call it in afterAll) and, as a last resort, on process exit.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { sleep } from "@/lib/lease/testing/isolation";

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

const running = new Set<ChildProcess>();
const cleanups = new Set<() => Promise<void>>();
const dataDirs = new Set<string>();

function killGroupSync(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Group already gone.
  }
}

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

// Last resort: never leave a server behind when the test process exits.
process.once("exit", () => {
  for (const child of running) killGroupSync(child, "SIGKILL");
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

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

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
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

/** Spawns in its own process group and keeps the last lines of output for error messages. */
function spawnGroup(command: string, args: string[], options: { uid?: number; gid?: number; cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const child = spawn(command, args, { detached: true, stdio: ["ignore", "pipe", "pipe"], ...options });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  running.add(child);
  child.once("exit", () => running.delete(child));
  return { child, logs: () => output };
}

async function stopGroup(child: ChildProcess | null, signal: NodeJS.Signals): Promise<void> {
  if (!child) return;
  killGroupSync(child, signal);
  if (!(await waitForExit(child, STOP_TIMEOUT_MS))) {
    killGroupSync(child, "SIGKILL");
    await waitForExit(child, STOP_TIMEOUT_MS);
  }
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

/**
 * redis-server on a free port, no persistence: a restart loses every key. `env` is added to
 * the server's environment (a clock shim, for instance).
 */
export async function startRedis(options: { env?: Record<string, string> } = {}): Promise<ThrowawayServer> {
  const port = await findFreePort();
  let proc: { child: ChildProcess; logs: () => string } | null = null;

  const launch = async () => {
    proc = spawnGroup("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"], {
      env: { ...process.env, ...options.env },
    });
    const current = proc;
    await waitUntil(`redis-server :${port}`, () => pingRedis(port), () => current.child, current.logs);
  };
  const isUp = () => proc !== null && proc.child.exitCode === null && proc.child.signalCode === null;

  await launch();
  const server: ThrowawayServer = {
    kind: "redis",
    port,
    url: `redis://127.0.0.1:${port}`,
    get isRunning() {
      return isUp();
    },
    stop: async () => {
      await stopGroup(proc?.child ?? null, "SIGTERM");
    },
    kill9: async () => {
      await stopGroup(proc?.child ?? null, "SIGKILL");
    },
    pause: () => {
      if (proc) killGroupSync(proc.child, "SIGSTOP");
    },
    resume: () => {
      if (proc) killGroupSync(proc.child, "SIGCONT");
    },
    restart: async () => {
      if (isUp()) await server.stop();
      await launch();
    },
  };
  const cleanup = async () => {
    cleanups.delete(cleanup);
    await server.kill9();
  };
  cleanups.add(cleanup);
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
  const dir = mkdtempSync(path.join(os.tmpdir(), "lw-cluster-"));
  dataDirs.add(dir);
  const nodes: ThrowawayServer[] = [];
  for (let i = 0; i < masters; i++) {
    const port = await findFreePort();
    const busPort = await findFreePort();
    let proc: { child: ChildProcess; logs: () => string } | null = null;
    const launch = async () => {
      proc = spawnGroup("redis-server", [
        "--port", String(port),
        "--cluster-port", String(busPort),
        "--bind", "127.0.0.1",
        "--cluster-enabled", "yes",
        "--cluster-config-file", path.join(dir, `nodes-${port}.conf`),
        "--cluster-node-timeout", "2000",
        "--cluster-require-full-coverage", "no",
        "--dir", dir,
        "--save", "",
        "--appendonly", "no",
        "--daemonize", "no",
      ]);
      const current = proc;
      await waitUntil(`redis-server (cluster) :${port}`, () => pingRedis(port), () => current.child, current.logs);
    };
    const isUp = () => proc !== null && proc.child.exitCode === null && proc.child.signalCode === null;
    await launch();
    const server: ThrowawayServer = {
      kind: "redis",
      port,
      url: `redis://127.0.0.1:${port}`,
      get isRunning() {
        return isUp();
      },
      stop: async () => stopGroup(proc?.child ?? null, "SIGTERM"),
      kill9: async () => stopGroup(proc?.child ?? null, "SIGKILL"),
      pause: () => {
        if (proc) killGroupSync(proc.child, "SIGSTOP");
      },
      resume: () => {
        if (proc) killGroupSync(proc.child, "SIGCONT");
      },
      restart: async () => {
        if (isUp()) await server.stop();
        await launch();
      },
    };
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
  const cleanup = async () => {
    cleanups.delete(cleanup);
    await Promise.all(nodes.map((n) => n.kill9()));
    rmSync(dir, { recursive: true, force: true });
    dataDirs.delete(dir);
  };
  cleanups.add(cleanup);
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
export async function startPostgres(): Promise<ThrowawayServer> {
  const bin = findPostgresBinDir();
  const user = postgresUser();
  const port = await findFreePort();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "lw-pg-"));
  dataDirs.add(dataDir);
  if (user) chownSync(dataDir, user.uid, user.gid);
  execFileSync(path.join(bin, "initdb"), ["-D", dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"], {
    stdio: "pipe",
    cwd: dataDir,
    ...(user ?? {}),
  });

  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let proc: { child: ChildProcess; logs: () => string } | null = null;
  const launch = async () => {
    const args = ["-D", dataDir, "-p", String(port), "-k", dataDir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=100"];
    proc = spawnGroup(path.join(bin, "postgres"), args, { cwd: dataDir, ...(user ?? {}) });
    const current = proc;
    await waitUntil(`postgres :${port}`, () => canQuery(url), () => current.child, current.logs);
  };
  const isUp = () => proc !== null && proc.child.exitCode === null && proc.child.signalCode === null;

  await launch();
  const server: ThrowawayServer = {
    kind: "postgres",
    port,
    url,
    get isRunning() {
      return isUp();
    },
    // SIGINT to the postmaster = fast shutdown (rolls back open transactions,
    // disconnects clients); the postmaster then stops its backends itself.
    stop: async () => {
      const child = proc?.child ?? null;
      if (!child || !isUp() || child.pid === undefined) return;
      process.kill(child.pid, "SIGINT");
      if (!(await waitForExit(child, STOP_TIMEOUT_MS))) {
        signalTreeSync(child, "SIGKILL");
        await waitForExit(child, STOP_TIMEOUT_MS);
      }
    },
    kill9: async () => {
      const child = proc?.child ?? null;
      if (!child) return;
      signalTreeSync(child, "SIGKILL");
      await waitForExit(child, STOP_TIMEOUT_MS);
    },
    pause: () => {
      if (proc) signalTreeSync(proc.child, "SIGSTOP");
    },
    resume: () => {
      if (proc) signalTreeSync(proc.child, "SIGCONT");
    },
    restart: async () => {
      if (isUp()) await server.stop();
      await launch();
    },
  };
  const cleanup = async () => {
    cleanups.delete(cleanup);
    await server.kill9();
    rmSync(dataDir, { recursive: true, force: true });
    dataDirs.delete(dataDir);
  };
  cleanups.add(cleanup);
  return server;
}
