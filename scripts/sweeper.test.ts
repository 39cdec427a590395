import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sleep } from "@leasewatch/lease/testing";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";

const ROOT = path.resolve(__dirname, "..");
const METRICS_TOKEN = "sweeper-test-metrics-token-0123456789abcdef";

/** Starts `npm run sweeper` on the given stores, with its health port on a free port. */
function startSweeper(stores: unknown[]) {
  const child = spawn(path.join(ROOT, "node_modules", ".bin", "tsx"), [path.join(ROOT, "scripts", "sweeper.ts")], {
    cwd: ROOT,
    env: { ...process.env, SWEEP_INTERVAL_MS: "200", LEASEWATCH_SWEEPER_PORT: "0", METRICS_TOKEN, LEASEWATCH_STORES: JSON.stringify(stores) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    exited,
    output: () => output,
    async waitFor(text: string | RegExp, ms = 30_000): Promise<void> {
      const deadline = Date.now() + ms;
      while (!(typeof text === "string" ? output.includes(text) : text.test(output)) && Date.now() < deadline) await sleep(100);
      expect(output).toMatch(text);
    },
  };
}

/** The value of one sample in Prometheus text, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("npm run sweeper", () => {
  let pg: StoreFixture;
  beforeAll(async () => {
    pg = await createStoreFixture("postgres");
  });
  afterAll(async () => {
    await pg?.cleanup();
  });

  it("records expiries on an interval and stops cleanly on SIGTERM", async () => {
    if (pg.spec.kind !== "postgres") throw new Error("unreachable");
    const lapsed = await pg.store.acquire({ resource: "sweeper:lapsed", owner: "crashed-worker", task: "t", ttlMs: 100 });
    expect(lapsed.acquired).toBe(true);
    await sleep(150);

    const sweeper = startSweeper([{ name: "pg-sweep", kind: "postgres", url: pg.spec.url, schema: pg.spec.schema }]);
    try {
      await sweeper.waitFor("recorded 1 expiries");
      const expired = await pg.store.events({ resource: "sweeper:lapsed", kinds: ["expired"] });
      expect(expired.items).toHaveLength(1);
      expect(await pg.store.get("sweeper:lapsed")).toBeNull();
    } finally {
      sweeper.child.kill("SIGTERM");
    }
    expect(await sweeper.exited).toBe(0);
    // JSON lines (lib/log/logger.ts); the round's line carries its runId.
    const lines = sweeper.output().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual(expect.objectContaining({ service: "sweeper", level: "info", msg: "recorded 1 expiries", expired: 1, runId: expect.any(String) }));
    expect(lines.at(-1)).toMatchObject({ service: "sweeper", level: "info", msg: "stopped" });
  });

  it("serves its health and, to the scrape token, when each store was last swept, sweeps and errors", async () => {
    if (pg.spec.kind !== "postgres") throw new Error("unreachable");
    const lapsed = await pg.store.acquire({ resource: "sweeper:metrics", owner: "crashed-worker", task: "t", ttlMs: 100 });
    expect(lapsed.acquired).toBe(true);
    await sleep(150);
    const down = { name: "pg-down", kind: "postgres", url: "postgres://postgres@127.0.0.1:1/postgres", schema: pg.spec.schema };
    const up = { name: "pg-sweep", kind: "postgres", url: pg.spec.url, schema: pg.spec.schema };

    const sweeper = startSweeper([up, down]);
    let url = "";
    try {
      await sweeper.waitFor(/health and metrics at (http:\/\/[^\s"]+)/);
      url = /health and metrics at (http:\/\/[^\s"]+)/.exec(sweeper.output())![1]!;
      await sweeper.waitFor("recorded 1 expiries");

      const livez = await fetch(`${url}/livez`);
      expect(livez.status).toBe(200);
      expect(await livez.json()).toEqual({ ok: true });
      // One store cannot be swept: not ready, and the probe does not say which (it needs no token).
      const readyz = await fetch(`${url}/readyz`);
      expect(readyz.status).toBe(503);
      expect(await readyz.json()).toEqual({ ready: false });

      expect((await fetch(`${url}/metrics`)).status).toBe(401);
      expect((await fetch(`${url}/metrics`, { headers: { authorization: "Bearer not-the-token-0123456789abcdef0123" } })).status).toBe(401);
      const metrics = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      const lastSwept = sample(text, 'leasewatch_sweeper_last_success_timestamp_seconds{store="pg-sweep"}');
      expect(lastSwept).toBeGreaterThan(Date.now() / 1000 - 60);
      expect(sample(text, 'leasewatch_sweeper_last_success_timestamp_seconds{store="pg-down"}')).toBe(0);
      expect(sample(text, 'leasewatch_sweeper_sweeps_total{store="pg-sweep"}')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'leasewatch_sweeper_errors_total{store="pg-sweep"}')).toBe(0);
      expect(sample(text, 'leasewatch_sweeper_errors_total{store="pg-down"}')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'leasewatch_sweeper_expired_recorded_total{store="pg-sweep"}')).toBe(1);
    } finally {
      sweeper.child.kill("SIGTERM");
    }
    expect(await sweeper.exited).toBe(0);
    // Stopped means stopped: the health port is closed too.
    await expect(fetch(`${url}/livez`)).rejects.toThrow();
  });

  it("is ready once every store has been swept", async () => {
    if (pg.spec.kind !== "postgres") throw new Error("unreachable");
    const sweeper = startSweeper([{ name: "pg-sweep", kind: "postgres", url: pg.spec.url, schema: pg.spec.schema }]);
    try {
      await sweeper.waitFor(/health and metrics at (http:\/\/[^\s"]+)/);
      const url = /health and metrics at (http:\/\/[^\s"]+)/.exec(sweeper.output())![1]!;
      let readyz = await fetch(`${url}/readyz`);
      for (let i = 0; i < 100 && readyz.status !== 200; i++) {
        await sleep(100);
        readyz = await fetch(`${url}/readyz`);
      }
      expect(readyz.status).toBe(200);
      expect(await readyz.json()).toEqual({ ready: true });
    } finally {
      sweeper.child.kill("SIGTERM");
    }
    expect(await sweeper.exited).toBe(0);
  });
});
