import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LeaseStore } from "@leasewatch/lease";
import { findForeignFencingRejections, sleep } from "@leasewatch/lease/testing";
import type { TStoreConfig } from "@/lib/server/store-config";
import { setUpStoreFixture } from "@/test/support/store-suite";
import { collectEvents, countKinds, createStoreFixture } from "@/test/support/stores";
import { LONG_HOLD_RESOURCES } from "./names";
import { findFreePort } from "@/scripts/throwaway-servers";
import { isLoopbackUrl, MAX_OPS_PER_SECOND, startWorkload, type WorkloadStats } from "./index";
import { startWorkerMetrics, type WorkerMetrics } from "./metrics-exporter";

describe("startWorkload against real Postgres and Redis", () => {
  const pg = setUpStoreFixture("postgres");
  const redis = setUpStoreFixture("redis");
  let configs: TStoreConfig[];
  let stores: LeaseStore[];
  let stats: WorkloadStats;
  let elapsedS: number;
  let workerMetrics: WorkerMetrics | undefined;
  let scraped = "";

  beforeAll(async () => {
    configs = [pg.spec, redis.spec];
    workerMetrics = await startWorkerMetrics({ port: await findFreePort() });
    const started = performance.now();
    const workload = await startWorkload({
      stores: configs,
      durationMs: 14_000,
      downstreamTable: `${pg.spec.schema}.ledger_exports`,
      seed: 7,
      meterProvider: workerMetrics.meterProvider,
    });
    // Scraped while it runs, as Prometheus would: pool gauges exist only while the stores are open.
    const scraping = sleep(11_000).then(async () => (await fetch(workerMetrics!.url)).text());
    await workload.done;
    scraped = await scraping;
    elapsedS = (performance.now() - started) / 1000;
    stats = workload.stats();
    stores = [pg.store, redis.store];
    // Record every expiry the stores already enforced, as the console's sweeper would.
    for (const store of stores) await store.sweep();
  }, 90_000);

  afterAll(async () => {
    await workerMetrics?.stop();
  });

  it.each(["pg-test", "redis-test"])("%s: the workers' own metrics are served on their Prometheus endpoint", (name) => {
    // Summed over the series of every prefix group and outcome that match.
    const total = (metric: string, labels = "") =>
      [...scraped.matchAll(new RegExp(`^${metric}\\{[^}]*leasewatch_store="${name}"[^}]*${labels}[^}]*\\} (\\d+)$`, "gm"))].reduce((sum, m) => sum + Number(m[1]), 0);
    expect(total("leasewatch_lease_acquire_duration_count", 'leasewatch_outcome="granted"')).toBeGreaterThan(5);
    expect(total("leasewatch_lease_renewals_total", 'leasewatch_outcome="renewed"')).toBeGreaterThan(0);
    expect(total("leasewatch_fencing_rejections_total")).toBeGreaterThan(0);
    expect(total("leasewatch_pool_connections_max")).toBeGreaterThanOrEqual(1);
  });

  it("stops by itself after durationMs and reports that it stopped", () => {
    expect(stats.isRunning).toBe(false);
    expect(stats.stoppedAt).toBeInstanceOf(Date);
  });

  it.each(["pg-test", "redis-test"])("%s: records every kind of story a real fleet tells", async (name) => {
    const store = stores.find((s) => s.name === name)!;
    const kinds = countKinds(await collectEvents(store));
    // Well-behaved holders acquire and release; hot spots contend; crashing holders
    // expire; slow renewers and stale writers fail renewals and lose leases; stale
    // writes are refused downstream.
    expect(kinds.acquired).toBeGreaterThan(10);
    expect(kinds.released).toBeGreaterThan(5);
    expect(kinds.contended).toBeGreaterThan(0);
    expect(kinds.expired).toBeGreaterThan(0);
    expect(kinds.renew_failed).toBeGreaterThan(0);
    expect(kinds.lost).toBeGreaterThan(0);
    expect(kinds.fencing_rejected).toBeGreaterThan(0);
    expect(stats.stores[name]!.fencedRejected).toBe(kinds.fencing_rejected);
  });

  it.each(["pg-test", "redis-test"])("%s: every fencing rejection compared tokens this store issued for that resource", async (name) => {
    // Both stores' stale writers share one downstream table: tokens are only comparable within a store.
    const events = await collectEvents(stores.find((s) => s.name === name)!);
    expect(events.filter((e) => e.kind === "fencing_rejected").length).toBeGreaterThan(0);
    expect(findForeignFencingRejections(events)).toEqual([]);
  });

  it.each(["pg-test", "redis-test"])("%s: conservation holds — every acquire ended or is still held", async (name) => {
    const store = stores.find((s) => s.name === name)!;
    const kinds = countKinds(await collectEvents(store));
    const held = await store.countActive();
    expect(kinds.acquired).toBe(kinds.released + kinds.expired + kinds.force_released + held);
  });

  it.each(["pg-test", "redis-test"])("%s: stop() released the long holds instead of leaving them to expire", async (name) => {
    const store = stores.find((s) => s.name === name)!;
    const events = await collectEvents(store);
    const longHolds = events.filter((e) => e.kind === "acquired" && (LONG_HOLD_RESOURCES as readonly string[]).includes(e.resource));
    expect(longHolds.length).toBeGreaterThan(0);
    for (const resource of new Set(longHolds.map((e) => e.resource))) expect(await store.get(resource)).toBeNull();
    const released = events.filter((e) => e.kind === "released" && (LONG_HOLD_RESOURCES as readonly string[]).includes(e.resource));
    expect(released.length).toBe(longHolds.length);
  });

  it("never spent more than its write budget per store", () => {
    for (const name of ["pg-test", "redis-test"]) {
      const c = stats.stores[name]!;
      expect(c.ops).toBeGreaterThan(0);
      // Token bucket: a one-second burst plus the refill rate, never more.
      expect(c.ops).toBeLessThanOrEqual(50 * (elapsedS + 1));
      expect(c.errors).toBe(0);
    }
  });
});

describe("stale writers of two stores on one fenced downstream row", () => {
  it("refuse a stale token only for a newer token of the same store", async () => {
    const pg = await createStoreFixture("postgres", { name: "pg-fence" });
    const redis = await createStoreFixture("redis", { name: "redis-fence" });
    const configs: TStoreConfig[] = [pg.spec, redis.spec];
    try {
      // One ledger tenant: every store's writers write the same downstream key, as two stores' workers on one resource name would.
      const workload = await startWorkload({
        stores: configs,
        durationMs: 9_000,
        kinds: ["stale-writer", "sweeper"],
        intensity: 2,
        ledgerTenants: 1,
        downstreamTable: `${pg.spec.schema}.ledger_exports`,
        seed: 11,
      });
      await workload.done;
      for (const store of [pg.store, redis.store]) {
        const events = await collectEvents(store);
        expect(events.filter((e) => e.kind === "fencing_rejected").length, store.name).toBeGreaterThan(0);
        expect(findForeignFencingRejections(events), store.name).toEqual([]);
      }
    } finally {
      await Promise.allSettled([pg.cleanup(), redis.cleanup()]);
    }
  }, 60_000);
});

describe("startWorkload with a store instance", () => {
  it("drives a store it was given and leaves it open for its owner", async () => {
    const fixture = await createStoreFixture("redis", { name: "redis-own" });
    const { store } = fixture;
    try {
      const workload = await startWorkload({ stores: [store], durationMs: 3_000, kinds: ["well-behaved", "sweeper"], seed: 3 });
      await workload.done;
      expect(workload.stats().stores["redis-own"]!.acquired).toBeGreaterThan(0);
      // Still open: the workload closes only the stores it opened itself.
      const result = await store.acquire({ resource: "tenant_1:invoice-sync", owner: "worker-1@test-0000", task: "run-1", ttlMs: 1_000 });
      expect(result.acquired).toBe(true);
    } finally {
      await fixture.cleanup();
    }
  });
});

describe("startWorkload options", () => {
  it("knows which URLs are on this machine", () => {
    expect(isLoopbackUrl("postgres://postgres@127.0.0.1:5432/postgres")).toBe(true);
    expect(isLoopbackUrl("redis://localhost:6379")).toBe(true);
    expect(isLoopbackUrl("redis://[::1]:6379")).toBe(true);
    expect(isLoopbackUrl("redis://127.9.0.3:6379")).toBe(true);
    expect(isLoopbackUrl("postgres://db.internal:5432/x")).toBe(false);
    expect(isLoopbackUrl("redis://10.0.0.5:6379")).toBe(false);
    expect(isLoopbackUrl("not a url")).toBe(false);
  });

  it("refuses a store that is not on this machine unless asked to (and touches nothing)", async () => {
    await expect(
      startWorkload({ stores: [{ name: "redis-far", kind: "redis", url: "redis://10.0.0.5:6379" }] }),
    ).rejects.toThrow(/not on this machine/);
  });

  it("refuses an empty store list before starting anything", async () => {
    await expect(startWorkload({ stores: [] })).rejects.toThrow(/at least one store/);
  });

  it("refuses a write budget above the demo ceiling", async () => {
    // Port 1 refuses connections: only the validation message shows the budget was the reason.
    await expect(
      startWorkload({ stores: [{ name: "pg-x", kind: "postgres", url: "postgres://127.0.0.1:1/x" }], maxOpsPerSecond: 500 }),
    ).rejects.toMatchObject({
      name: "ZodError",
      issues: [{ path: ["maxOpsPerSecond"], message: `Too big: expected number to be <=${MAX_OPS_PER_SECOND}` }],
    });
  });

  it("refuses a store config that is not a postgres:// or redis:// url", async () => {
    await expect(startWorkload({ stores: [{ name: "pg-x", kind: "postgres", url: "http://example" } as never] })).rejects.toMatchObject({
      name: "ZodError",
      issues: [{ path: ["stores", 0, "url"], message: "a postgres store needs a postgres:// url" }],
    });
  });
});
