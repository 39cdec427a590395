import os from "node:os";
import pg from "pg";
import { observeIntervalMs, parseObservedConfig } from "@/lib/observed/config";
import { migrateObservedHistory, Observer } from "@/lib/observed/observer";
import { observedHistorySchema, openObservedSource } from "@/lib/observed/runtime";
import { parseStoresConfig } from "./store-config";
import { readEventRetentionDays } from "./store-kinds";
import { createStore } from "./store-registry";

/**
 * Starts an observer per observed store (LEASEWATCH_OBSERVED), recording into the
 * console's Postgres (LEASEWATCH_AUDIT_URL, else the first Postgres store's
 * database) under leases taken in the first configured store. Used by
 * `npm run observer` and by the demo. Resolves to a stop() that releases the
 * leases, so another replica takes over at once; null when nothing is observed.
 */
export async function startObservers(options: { env?: NodeJS.ProcessEnv; log?: (line: string) => void } = {}): Promise<{ stop(): Promise<void> } | null> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  const observed = parseObservedConfig(env);
  if (observed.length === 0) return null;
  const intervalMs = observeIntervalMs(env);
  const stores = parseStoresConfig(env);
  const historyUrl = env.LEASEWATCH_AUDIT_URL || stores.find((s) => s.kind === "postgres")?.url;
  if (!historyUrl) throw new Error("observed history needs a Postgres database: set LEASEWATCH_AUDIT_URL or configure a postgres store");
  const history = new pg.Pool({ connectionString: historyUrl, max: 4, application_name: "leasewatch-observer" });
  history.on("error", () => {});
  const schema = observedHistorySchema(env);
  await migrateObservedHistory(history, schema);
  const leases = createStore(stores[0]!, { migrate: false });
  const owner = `${os.hostname()}:${process.pid}`;
  const opened = await Promise.all(observed.map((config) => openObservedSource(config)));
  const observers = opened.map(
    (o) =>
      new Observer({
        source: o.source,
        history,
        schema,
        leases,
        owner,
        intervalMs,
        retentionDays: readEventRetentionDays(env),
        onError: (error) => log(`[observer] ${o.config.name}: ${error instanceof Error ? error.message : String(error)}`),
      }),
  );
  for (const observer of observers) observer.start();
  log(`[observer] observing ${observed.map((o) => `${o.name} (${o.kind})`).join(", ")} every ${intervalMs} ms`);
  return {
    async stop() {
      await Promise.all(observers.map((o) => o.stop()));
      await Promise.all(opened.map((o) => o.close().catch(() => {})));
      await leases.close().catch(() => {});
      await history.end();
    },
  };
}
