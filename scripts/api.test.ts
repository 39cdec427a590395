import { spawn } from "node:child_process";
import { connect } from "node:net";
import path from "node:path";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { API_ACTIONS, TokenStore } from "@/lib/api/tokens";
import { freshPgSchema, sleep } from "@leasewatch/lease/testing";
import { collectEvents, countKinds, createStoreFixture, type StoreFixture } from "@/test/support/stores";

const ROOT = path.resolve(__dirname, "..");
const LISTENING = /listening at (http:\/\/[^\s"]+)/;

/** Opens a new TCP connection to the server: "" if it was accepted, else the error code. */
function tryConnect(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once("connect", () => {
      socket.destroy();
      resolve("");
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** `npm run api` as a process: what a rolling deploy sends SIGTERM to. */
describe("npm run api on SIGTERM", () => {
  let store: StoreFixture;
  let tokenSchema: ReturnType<typeof freshPgSchema>;
  let blocker: pg.Client;

  beforeEach(async () => {
    store = await createStoreFixture("postgres");
    tokenSchema = freshPgSchema();
    blocker = new pg.Client({ connectionString: store.spec.url });
    await blocker.connect();
  });
  afterEach(async () => {
    await blocker.end().catch(() => {});
    await store.cleanup();
    await tokenSchema.drop();
  });

  async function startApi(env: Record<string, string> = {}) {
    if (store.spec.kind !== "postgres") throw new Error("unreachable");
    const child = spawn(path.join(ROOT, "node_modules", ".bin", "tsx"), [path.join(ROOT, "scripts", "api.ts")], {
      cwd: ROOT,
      env: {
        ...process.env,
        LEASEWATCH_STORES: JSON.stringify([{ name: "pg-api", kind: "postgres", url: store.spec.url, schema: store.spec.schema }]),
        LEASEWATCH_CONSOLE_SCHEMA: tokenSchema.schema,
        LEASEWATCH_API_PORT: "0",
        LEASEWATCH_API_HANDLE_KEY: "api-shutdown-test-handle-key-0123456789abcdef",
        // The blocked release below must outlast neither the store timeout nor the grace on its own.
        LEASEWATCH_API_STORE_TIMEOUT_MS: "30000",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const deadline = Date.now() + 30_000;
    while (!LISTENING.test(output) && Date.now() < deadline) await sleep(100);
    expect(output).toMatch(LISTENING);
    const url = LISTENING.exec(output)![1]!;
    const tokens = new TokenStore({ url: store.spec.url, schema: tokenSchema.schema });
    const { token } = await tokens.create({
      name: "deploy-test",
      prefixes: ["jobs:"],
      stores: ["pg-api"],
      actions: [...API_ACTIONS],
      expiresAt: new Date(Date.now() + 3_600_000),
      createdBy: "test",
    });
    await tokens.close();
    const call = (method: string, route: string, body?: unknown) =>
      fetch(url + route, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    return { child, exited, url, call, output: () => output };
  }

  /** Holds the lease row locked in an open transaction, so the API's release of it waits in Postgres. */
  async function lockLeaseRow(resource: string): Promise<number> {
    if (store.spec.kind !== "postgres") throw new Error("unreachable");
    await blocker.query("BEGIN");
    const locked = await blocker.query(`SELECT 1 FROM "${store.spec.schema}".leases WHERE resource = $1 FOR UPDATE`, [resource]);
    expect(locked.rowCount).toBe(1);
    return (await blocker.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
  }

  async function waitUntilBlockedBy(pid: number): Promise<void> {
    const watcher = new pg.Client({ connectionString: store.spec.url });
    await watcher.connect();
    try {
      for (let i = 0; i < 300; i++) {
        const { rows } = await watcher.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))", [pid]);
        if (rows[0]!.n > 0) return;
        await sleep(50);
      }
      throw new Error("the release never reached Postgres");
    } finally {
      await watcher.end();
    }
  }

  it("finishes the release in flight, refuses new connections meanwhile, exits 0 and leaves no lease held", async () => {
    // A grace no busy machine runs out of: this test is about the work in flight, the next one about the grace.
    const api = await startApi({ LEASEWATCH_SHUTDOWN_GRACE_MS: "30000" });
    const acquired = await api.call("POST", "/v1/locks/acquire", { resource: "jobs:nightly", ownerId: "worker-1", task: "run", ttlMs: 60_000 });
    expect(acquired.status).toBe(200);
    const { leaseId } = (await acquired.json()) as { leaseId: string };

    const pid = await lockLeaseRow("jobs:nightly");
    const release = api.call("DELETE", `/v1/locks/${encodeURIComponent(leaseId)}`);
    await waitUntilBlockedBy(pid);

    let isReleaseAnswered = false;
    void release.then(() => (isReleaseAnswered = true));
    api.child.kill("SIGTERM");
    // The listener closes at once: a new connection is refused while the release is still in flight.
    let connectError = "";
    for (let i = 0; i < 100 && !connectError; i++) {
      connectError = await tryConnect(api.url);
      if (!connectError) await sleep(50);
    }
    expect(connectError).toBe("ECONNREFUSED");
    expect(isReleaseAnswered).toBe(false);
    // Several of the shutdown's idle-connection sweeps pass while the answer is still being worked
    // on: its kept-alive connection carries a request in flight and must not be among them.
    await sleep(500);
    expect(isReleaseAnswered).toBe(false);

    await blocker.query("COMMIT");
    const answer = await release;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ released: true });
    expect(await api.exited).toBe(0);

    expect(await store.store.get("jobs:nightly")).toBeNull();
    const counts = countKinds(await collectEvents(store.store, { resource: "jobs:nightly" }));
    expect(counts).toMatchObject({ acquired: 1, released: 1, expired: 0 });
  });

  it("gives up on work still in flight when the grace is over and exits 1", async () => {
    const api = await startApi({ LEASEWATCH_SHUTDOWN_GRACE_MS: "300" });
    const acquired = await api.call("POST", "/v1/locks/acquire", { resource: "jobs:stuck", ownerId: "worker-1", task: "run", ttlMs: 60_000 });
    const { leaseId } = (await acquired.json()) as { leaseId: string };
    const pid = await lockLeaseRow("jobs:stuck");
    const release = api.call("DELETE", `/v1/locks/${encodeURIComponent(leaseId)}`).then(
      (response) => response.status,
      () => "connection closed",
    );
    await waitUntilBlockedBy(pid);

    api.child.kill("SIGTERM");
    expect(await api.exited).toBe(1);
    expect(await release).toBe("connection closed");
    expect(api.output()).toMatch(/grace/);
    await blocker.query("ROLLBACK");
  });
});
