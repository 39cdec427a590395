/**
 * `npm run sweeper`: sweeps every configured store every few seconds, so leases
 * whose TTL ran out get their `expired` event (and Postgres rollups stay fresh), and
 * projects the Redis stores' read models from their events every second
 * when the console does not sweep (LEASEWATCH_SWEEP unset) and workers do not
 * either. Runs until SIGTERM or SIGINT; a sweep in progress finishes first.
 * Needs write access to the stores (the workers' role, not the console's).
 */
import { parseStoresConfig } from "../lib/console/config";
import { createStore, startProjecting, SWEEP_INTERVAL_MS, sweepAllStores, type StoreEntry } from "../lib/console/registry";

async function main(): Promise<void> {
  const intervalMs = Number(process.env.SWEEP_INTERVAL_MS ?? SWEEP_INTERVAL_MS);
  if (!Number.isInteger(intervalMs) || intervalMs < 100) throw new Error("SWEEP_INTERVAL_MS must be a whole number of milliseconds ≥ 100");
  const entries: StoreEntry[] = parseStoresConfig().map((config) => ({ config, store: createStore(config) }));
  console.log(`[sweeper] sweeping ${entries.map((e) => e.config.name).join(", ")} every ${intervalMs} ms`);
  // Redis read models (listing, history, charts) are projected from the events every second.
  const projectTimer = startProjecting(entries);

  let stopping = false;
  let wake: (() => void) | undefined;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[sweeper] ${signal}: stopping after the current sweep`);
    wake?.();
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));

  while (!stopping) {
    const outcomes = await sweepAllStores(entries);
    const expired = outcomes.reduce((n, o) => n + (o.expired ?? 0), 0);
    if (expired > 0) console.log(`[sweeper] recorded ${expired} expiries`);
    if (stopping) break;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, intervalMs);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
  if (projectTimer) clearInterval(projectTimer);
  await Promise.all(entries.map((e) => e.store.close().catch(() => {})));
  console.log("[sweeper] stopped");
}

main().catch((error: unknown) => {
  console.error(`[sweeper] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
