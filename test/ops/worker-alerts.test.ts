/**
 * The worker-side renewal-failure alert end to end: a worker exports the library's metrics with
 * the Prometheus exporter, the real Prometheus (Debian's `prometheus`) scrapes it every second and
 * evaluates the alert from ops/alerts.yml, with its windows shortened (5m → 10s, for 2m → 3s) in
 * a rule file written for this test only. Renewals are made to fail by force-releasing what the
 * worker holds; the alert fires, and resolves once that stops.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { z } from "zod";
import { type Lease, LeaseClient } from "@leasewatch/lease";
import { sleep } from "@leasewatch/lease/testing";
import { findFreePort } from "@/scripts/throwaway-servers";
import { startWorkerMetrics, type WorkerMetrics } from "@/scripts/workload/metrics-exporter";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";

const ALERT = "LeasewatchWorkerRenewalFailures";
const ROOT = path.join(__dirname, "..", "..");
const hasPrometheus = spawnSync("prometheus", ["--version"], { stdio: "ignore" }).status === 0;

const ZRules = z.object({ groups: z.array(z.object({ name: z.string(), rules: z.array(z.record(z.string(), z.unknown())) })) });

/** The alert as shipped, on a test's time scale. */
function shortenedRule(): Record<string, unknown> {
  const rules = ZRules.parse(parseYaml(readFileSync(path.join(ROOT, "ops", "alerts.yml"), "utf8"))).groups.flatMap((g) => g.rules);
  const rule = rules.find((r) => r.alert === ALERT);
  if (!rule) throw new Error(`${ALERT} is not in ops/alerts.yml`);
  expect(String(rule.expr)).toContain("[5m]");
  return { ...rule, expr: String(rule.expr).replaceAll("[5m]", "[10s]"), for: "3s" };
}

interface AlertState {
  state: string;
  labels: Record<string, string>;
}

describe.skipIf(!hasPrometheus)("the renewal-failure alert with the real Prometheus", () => {
  let fixture: StoreFixture;
  let metrics: WorkerMetrics;
  let prometheus: ChildProcess;
  let prometheusUrl: string;
  let dir: string;
  let logs = "";
  const stop = new AbortController();
  let isSabotaging = false;
  const held: Lease[] = [];
  let workers: Promise<void>[] = [];

  const alerts = async (): Promise<AlertState[]> => {
    const body = (await (await fetch(`${prometheusUrl}/api/v1/alerts`)).json()) as { data: { alerts: AlertState[] } };
    return body.data.alerts.filter((a) => a.labels.alertname === ALERT);
  };
  const query = async (promql: string): Promise<number | null> => {
    const body = (await (await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(promql)}`)).json()) as { data: { result: Array<{ value: [number, string] }> } };
    const first = body.data.result[0];
    return first ? Number(first.value[1]) : null;
  };
  /** Polls until `check` holds, at most `ms`; returns whether it did. */
  const waitFor = async (check: () => Promise<boolean>, ms: number): Promise<boolean> => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (await check().catch(() => false)) return true;
      await sleep(500);
    }
    return false;
  };

  beforeAll(async () => {
    fixture = await createStoreFixture("redis");
    metrics = await startWorkerMetrics({ port: await findFreePort() });
    dir = mkdtempSync(path.join(os.tmpdir(), "lw-prometheus-"));
    const rulesPath = path.join(dir, "rules.yml");
    writeFileSync(rulesPath, stringifyYaml({ groups: [{ name: "leasewatch-workers-test", interval: "1s", rules: [shortenedRule()] }] }));
    const configPath = path.join(dir, "prometheus.yml");
    writeFileSync(
      configPath,
      stringifyYaml({
        global: { scrape_interval: "1s", evaluation_interval: "1s" },
        rule_files: [rulesPath],
        scrape_configs: [{ job_name: "workers", static_configs: [{ targets: [new URL(metrics.url).host] }] }],
      }),
    );
    const port = await findFreePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    // Its own process group, so it is stopped with everything it started.
    prometheus = spawn("prometheus", [`--config.file=${configPath}`, `--storage.tsdb.path=${path.join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`], {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    prometheus.stdout?.on("data", (chunk: Buffer) => (logs += chunk.toString()));
    prometheus.stderr?.on("data", (chunk: Buffer) => (logs += chunk.toString()));
    const isReady = await waitFor(async () => (await fetch(`${prometheusUrl}/-/ready`)).ok, 30_000);
    if (!isReady) throw new Error(`prometheus did not start:\n${logs}`);

    // The worker: four loops holding short leases, renewing every 200 ms.
    const client = new LeaseClient(fixture.store, {
      owner: "e2e-worker",
      meterProvider: metrics.meterProvider,
      onEvent: (event) => {
        if (event.type === "acquired") held.push(event.lease);
      },
    });
    workers = [0, 1, 2, 3].map(async (loop) => {
      while (!stop.signal.aborted) {
        await client
          .withLease(`e2e:jobs:${loop}`, async ({ signal }) => sleep(1_000).then(() => signal.aborted), { task: "t", ttlMs: 600, waitMs: 1_000 })
          .catch(() => undefined);
      }
    });
    // The operator: while sabotaging, ends every lease the worker was granted, so its next renew is refused.
    workers.push(
      (async () => {
        while (!stop.signal.aborted) {
          const leases = held.splice(0);
          if (isSabotaging) {
            for (const lease of leases) await fixture.store.forceRelease({ resource: lease.resource, leaseId: lease.leaseId, actor: "e2e", reason: "renewals made to fail" }).catch(() => undefined);
          }
          await sleep(100);
        }
      })(),
    );
  }, 60_000);

  afterAll(async () => {
    stop.abort();
    await Promise.allSettled(workers);
    if (prometheus?.pid) {
      try {
        process.kill(-prometheus.pid, "SIGTERM");
      } catch {
        // Already gone.
      }
    }
    await metrics?.stop();
    await fixture?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("stays quiet while renewals succeed, fires while they fail, and resolves after", async () => {
    // Healthy: scraped, renewals counted, nothing failing.
    expect(await waitFor(async () => ((await query('sum(rate(leasewatch_lease_renewals_total{leasewatch_outcome="renewed"}[10s]))')) ?? 0) > 1, 30_000), logs).toBe(true);
    await sleep(5_000);
    expect(await alerts()).toEqual([]);

    isSabotaging = true;
    const hasFired = await waitFor(async () => (await alerts()).some((a) => a.state === "firing"), 60_000);
    expect(hasFired, logs).toBe(true);
    const [firing] = await alerts();
    expect(firing!.labels).toMatchObject({ alertname: ALERT, severity: "page", store: fixture.store.name });
    expect(await query('sum(rate(leasewatch_lease_renewals_total{leasewatch_outcome="not_owner"}[10s]))')).toBeGreaterThan(0);

    isSabotaging = false;
    const hasResolved = await waitFor(async () => (await alerts()).length === 0, 60_000);
    expect(hasResolved, logs).toBe(true);
  }, 180_000);
});
