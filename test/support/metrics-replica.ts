/**
 * One console replica's metrics read model in a process of its own (the tests run two
 * at once), watching the stores in LEASEWATCH_STORES. Each stdin line is a
 * request id; the answer is one stdout line `{"id", "body"}` with /api/metrics' text.
 */
import readline from "node:readline";
import { getMetricsText } from "@/lib/console/metrics/get-metrics-text";
import { createStore } from "@/lib/server/store-registry";
import { parseStoresConfig } from "@/lib/server/store-config";

const configs = parseStoresConfig(process.env);
const entries = configs.map((config) => ({ config, store: createStore(config, { migrate: false }) }));

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (id) => {
  getMetricsText({ entries, audit: null, config: { prefixDepth: 2, maxGroups: 5 } }).then(
    (metrics) => process.stdout.write(`${JSON.stringify({ id, body: metrics.body })}\n`),
    (error: unknown) => process.stdout.write(`${JSON.stringify({ id, error: String(error) })}\n`),
  );
});
rl.on("close", () => {
  void Promise.all(entries.map((e) => e.store.close())).then(() => process.exit(0));
});
process.stdout.write(`${JSON.stringify({ id: "ready" })}\n`);
