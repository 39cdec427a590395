import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sleep } from "@/lib/lease/testing/isolation";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";

const ROOT = path.resolve(__dirname, "..");

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

    const child = spawn(path.join(ROOT, "node_modules", ".bin", "tsx"), [path.join(ROOT, "scripts", "sweeper.ts")], {
      cwd: ROOT,
      env: {
        ...process.env,
        SWEEP_INTERVAL_MS: "200",
        LEASEWATCH_STORES: JSON.stringify([{ name: "pg-sweep", kind: "postgres", url: pg.spec.url, schema: pg.spec.schema }]),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      const deadline = Date.now() + 30_000;
      while (!output.includes("recorded 1 expiries") && Date.now() < deadline) await sleep(100);
      const expired = await pg.store.events({ resource: "sweeper:lapsed", kinds: ["expired"] });
      expect(expired.items).toHaveLength(1);
      expect(await pg.store.get("sweeper:lapsed")).toBeNull();
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    expect(output).toContain("[sweeper] stopped");
  });
});
