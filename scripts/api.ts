/**
 * `npm run api`: the lock API server (lib/api). Stops on SIGTERM/SIGINT after the
 * requests in flight have been answered (Fastify's close waits for them; new ones get 503).
 */
import { parseApiConfig } from "../lib/api/config";
import { startApiServer } from "../lib/api/start";

async function main(): Promise<void> {
  const api = await startApiServer(parseApiConfig());
  // Always printed, whatever the log level: scripts and the benchmark wait for it.
  console.log(`[api] listening at ${api.url}`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    api.app.log.info({ signal }, "stopping: finishing requests in flight");
    api.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

main().catch((error: unknown) => {
  console.error(`[api] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
