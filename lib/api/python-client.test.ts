import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { createInterface } from "node:readline";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFencedTable, fencedWrite } from "@leasewatch/lease";
import { freshPgSchema, type FreshPgSchema, sleep, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { collectEvents } from "@/test/support/stores";
import { startApiFixture, type ApiFixture } from "@/test/support/api-server";

const SCRIPT = path.resolve(__dirname, "../../examples/python/lease.py");

let api: ApiFixture;
let token: string;
let pool: pg.Pool;
let downstream: FreshPgSchema;

beforeAll(async () => {
  api = await startApiFixture();
  token = await api.createToken({ prefixes: ["py:"] });
  pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
  pool.on("error", () => undefined);
  downstream = freshPgSchema();
  await pool.query(`CREATE SCHEMA "${downstream.schema}"`);
});
afterAll(async () => {
  await downstream?.drop();
  await pool?.end();
  await api?.close();
});

interface Run {
  child: ChildProcessWithoutNullStreams;
  events: Array<Record<string, unknown>>;
  /** Resolves with the first event of `kind` (rejects if the process exits first). */
  next(kind: string): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
}

function runPython(args: string[]): Run {
  const child = spawn("python3", [SCRIPT, ...args], { env: { ...process.env, LEASEWATCH_API: api.url, LEASEWATCH_TOKEN: token } });
  const events: Array<Record<string, unknown>> = [];
  const waiters: Array<{ kind: string; resolve: (e: Record<string, unknown>) => void }> = [];
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  createInterface({ input: child.stdout }).on("line", (line) => {
    const event = JSON.parse(line) as Record<string, unknown>;
    events.push(event);
    for (const w of waiters.splice(0)) {
      if (w.kind === event.event) w.resolve(event);
      else waiters.push(w);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    events,
    exited,
    next(kind) {
      const seen = events.find((e) => e.event === kind);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ kind, resolve });
        void exited.then((code) => reject(new Error(`python exited (${code}) before "${kind}": ${JSON.stringify(events)} ${stderr}`)));
      });
    },
  };
}

describe("examples/python/lease.py against the API", () => {
  it("holds a lease, renews it and releases it in finally", async () => {
    const resource = `py:ok:${randomUUID().slice(0, 8)}`;
    const run = runPython(["--resource", resource, "--owner", "py-1", "--task", "demo", "--ttl-ms", "3000", "--hold-s", "1.5", "--store", api.redis.spec.name]);
    expect(await run.exited).toBe(0);
    const kinds = run.events.map((e) => e.event);
    expect(kinds[0]).toBe("acquired");
    expect(kinds.slice(-2)).toEqual(["work_done", "released"]);
    const events = await collectEvents(api.redis.store, { resource });
    expect(events.map((e) => e.kind)).toEqual(["acquired", "released"]);
  });

  it("killed with SIGKILL: the lease expires and is recorded, and the fenced downstream refuses the stale token", async () => {
    const store = api.pg.store;
    const resource = `py:kill:${randomUUID().slice(0, 8)}`;
    const table = `${downstream.schema}.ledger`;
    await createFencedTable({ pool, table });

    const run = runPython(["--resource", resource, "--owner", "py-2", "--task", "crash", "--ttl-ms", "1000", "--hold-s", "60", "--store", api.pg.spec.name]);
    const acquired = await run.next("acquired");
    const staleToken = String(acquired.fencingToken);
    const first = await fencedWrite({ pool, table, key: resource, value: { by: "py-2" }, fencingToken: staleToken, resource, by: "ledger", store });
    expect(first.accepted).toBe(true);
    run.child.kill("SIGKILL");
    await run.exited;

    // No release: the lease ends only by expiry, which a sweep records once the store's clock passes it.
    let expired = 0;
    for (let i = 0; i < 50 && expired === 0; i++) {
      await sleep(100);
      expired = (await collectEvents(store, { resource, kinds: ["expired"] })).length;
      if (expired === 0) await store.sweep();
    }
    expect(expired).toBe(1);

    const next = await api.call(token, "POST", "/v1/locks/acquire", { store: api.pg.spec.name, resource, ownerId: "py-3", task: "after", ttlMs: 10_000 });
    expect(next.body.acquired).toBe(true);
    const newer = await fencedWrite({ pool, table, key: resource, value: { by: "py-3" }, fencingToken: String(next.body.fencingToken), resource, by: "ledger", store });
    expect(newer.accepted).toBe(true);
    const stale = await fencedWrite({ pool, table, key: resource, value: { by: "py-2 zombie" }, fencingToken: staleToken, resource, by: "ledger", store });
    expect(stale.accepted).toBe(false);

    // A heartbeat that reached the store after the expiry (a slow machine) is allowed to show as renew_failed.
    const kinds = (await collectEvents(store, { resource })).map((e) => e.kind).filter((k) => k !== "renew_failed");
    expect(kinds).toEqual(["acquired", "expired", "acquired", "fencing_rejected"]);
    expect(kinds).not.toContain("released");
    await api.call(token, "DELETE", `/v1/locks/${String(next.body.leaseId)}`);
  });
});
