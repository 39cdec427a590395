/**
 * `npm run api` (`node dist/api.js` when built): the lock API server (lib/api). On SIGTERM/SIGINT
 * it stops accepting connections, answers the requests in flight (waiting acquires stop waiting
 * and answer; a request on a kept-alive connection gets 503) and closes its pools, within
 * LEASEWATCH_SHUTDOWN_GRACE_MS (lib/server/shutdown.ts). OpenTelemetry starts first when OTEL_*
 * settings ask for it (lib/server/telemetry-sdk.ts).
 */
import { parseApiConfig } from "../lib/api/config";
import { startApiServer } from "../lib/api/start";
import { parseShutdownGraceMs, stopOnSignals } from "../lib/server/shutdown";
import { describeTelemetry, startTelemetry } from "../lib/server/telemetry-sdk";
import { initLogger } from "../lib/log/logger";

const log = initLogger("api");

async function main(): Promise<void> {
  const graceMs = parseShutdownGraceMs();
  const config = parseApiConfig();
  const telemetry = await startTelemetry("leasewatch-api");
  const api = await startApiServer(config);
  api.app.log.info(describeTelemetry(telemetry));
  // Logged at info, or at the configured level when that is above info: scripts and the benchmark wait for it.
  const at = (["fatal", "error", "warn"] as const).find((level) => level === api.app.log.level) ?? "info";
  api.app.log[at]({ url: api.url }, `listening at ${api.url}`);
  stopOnSignals({
    graceMs,
    stop: () => api.close().then(() => telemetry?.shutdown()),
    log: (message) => api.app.log.info(message),
  });
}

main().catch((error: unknown) => {
  log.fatal({ error: error instanceof Error ? error.message : String(error) }, "could not start");
  process.exit(1);
});
