/**
 * `npm run sweeper` (`node dist/sweeper.js` when built): sweeps every configured store every few
 * seconds, so leases whose TTL ran out get their `expired` event (and Postgres rollups stay
 * fresh), and projects the Redis stores' read models from their events every second
 * when the console does not sweep (LEASEWATCH_SWEEP unset) and workers do not
 * either. Needs write access to the stores (the workers' role, not the console's).
 *
 * Serves /livez, /readyz and /metrics on LEASEWATCH_SWEEPER_HOST:LEASEWATCH_SWEEPER_PORT
 * (default 127.0.0.1:8788; lib/server/sweeper-health.ts). On SIGTERM/SIGINT the sweep in progress
 * finishes, then the stores are closed, within LEASEWATCH_SHUTDOWN_GRACE_MS (lib/server/shutdown.ts).
 * OpenTelemetry starts first when OTEL_* settings ask for it (lib/server/telemetry-sdk.ts).
 */
import { z } from "zod";
import { parseStoresConfig } from "../lib/server/store-config";
import { readMetricsToken } from "../lib/server/metrics-token";
import { createStore, startProjecting, SWEEP_INTERVAL_MS, sweepAllStores, type StoreEntry } from "../lib/server/store-registry";
import { EnvError } from "../lib/auth/env";
import { parseShutdownGraceMs, stopOnSignals } from "../lib/server/shutdown";
import { startSweeperHealthServer, SweeperStatus } from "../lib/server/sweeper-health";
import { describeTelemetry, startTelemetry } from "../lib/server/telemetry-sdk";
import { runInBackgroundRun } from "../lib/log/context";
import { initLogger } from "../lib/log/logger";
import { repeatUntilStopped } from "@leasewatch/lease/internal";

const log = initLogger("sweeper");

const DEFAULT_SWEEPER_PORT = 8788;
/** A loop that finished no round for this long (or ten intervals, if longer) fails /livez. */
const MIN_LIVENESS_WINDOW_MS = 60_000;

function parseSweeperEnv(env: NodeJS.ProcessEnv = process.env) {
  const interval = z.coerce.number().int().min(100).safeParse(env.SWEEP_INTERVAL_MS ?? SWEEP_INTERVAL_MS);
  if (!interval.success) throw new EnvError("SWEEP_INTERVAL_MS must be a whole number of milliseconds ≥ 100");
  const port = z.coerce.number().int().min(0).max(65535).safeParse(env.LEASEWATCH_SWEEPER_PORT?.trim() || DEFAULT_SWEEPER_PORT);
  if (!port.success) throw new EnvError("LEASEWATCH_SWEEPER_PORT must be a port number");
  return {
    intervalMs: interval.data,
    port: port.data,
    host: env.LEASEWATCH_SWEEPER_HOST?.trim() || "127.0.0.1",
    metricsToken: readMetricsToken(env),
    graceMs: parseShutdownGraceMs(env),
  };
}

async function main(): Promise<void> {
  const { intervalMs, port, host, metricsToken, graceMs } = parseSweeperEnv();
  const telemetry = await startTelemetry("leasewatch-sweeper");
  log.info(describeTelemetry(telemetry));
  const entries: StoreEntry[] = parseStoresConfig().map((config) => ({ config, store: createStore(config) }));
  const status = new SweeperStatus(
    entries.map((e) => e.config.name),
    Math.max(MIN_LIVENESS_WINDOW_MS, 10 * intervalMs),
  );
  const health = await startSweeperHealthServer({ host, port, status, metricsToken });
  log.info({ stores: entries.map((e) => e.config.name), intervalMs, url: health.url }, `sweeping every ${intervalMs} ms; health and metrics at ${health.url}`);
  if (!metricsToken) log.warn("METRICS_TOKEN is unset: /metrics refuses every scrape");
  // Redis read models (listing, history, charts) are projected from the events every second.
  const projectTimer = startProjecting(entries);

  // One run per round: its lines (a store failing, the expiries) share a runId.
  const loop = repeatUntilStopped(
    () =>
      runInBackgroundRun(async () => {
        const outcomes = await sweepAllStores(entries);
        status.recordRound(outcomes);
        const expired = outcomes.reduce((n, o) => n + (o.expired ?? 0), 0);
        if (expired > 0) log.info({ expired }, `recorded ${expired} expiries`);
      }),
    intervalMs,
  );
  stopOnSignals({
    graceMs,
    log: (message) => log.info(message),
    stop: async () => {
      status.markStopping();
      loop.stop();
      await loop.done;
      if (projectTimer) clearInterval(projectTimer);
      await Promise.all(entries.map((e) => e.store.close().catch(() => {})));
      await health.close();
      await telemetry?.shutdown().catch(() => {});
    },
  });
  await loop.done;
}

main().catch((error: unknown) => {
  log.fatal({ error: error instanceof Error ? error.message : String(error) }, "stopped by an error");
  process.exit(1);
});
