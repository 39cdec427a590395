/**
 * `npm run observer`: samples every observed store (LEASEWATCH_OBSERVED) every
 * LEASEWATCH_OBSERVE_INTERVAL_MS and records what changed in the console's
 * Postgres (LEASEWATCH_AUDIT_URL, else the first Postgres store's database).
 * Run as many replicas as you like: each observed store is sampled by one at a
 * time, the one holding its observer lease in the first configured lease store.
 * Runs until SIGTERM or SIGINT, then releases its leases so another replica
 * takes over at once.
 */
import { initLogger } from "../lib/log/logger";
import { startObservers } from "../lib/server/observers";

const log = initLogger("observer");

async function main(): Promise<void> {
  const running = await startObservers({ log: (line) => log.info(line) });
  if (!running) {
    log.info("LEASEWATCH_OBSERVED is empty: nothing to observe");
    return;
  }
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  await running.stop();
  log.info("stopped");
}

main().catch((error: unknown) => {
  log.fatal({ error: error instanceof Error ? error.message : String(error) }, "stopped by an error");
  process.exit(1);
});
