/**
 * `npm run api`: the lock API server (lib/api). Stops on SIGTERM/SIGINT after the
 * requests in flight have been answered (Fastify's close waits for them; new ones get 503).
 */
import { parseApiConfig } from "../lib/api/config";
import { buildApiServer } from "../lib/api/server";
import { TokenStore } from "../lib/api/tokens";
import { createStore } from "../lib/console/registry";
import type { LeaseStore } from "../lib/lease/types";

async function main(): Promise<void> {
  const config = parseApiConfig();
  const stores = new Map<string, LeaseStore>(config.stores.map((c) => [c.name, createStore(c)]));
  const tokens = new TokenStore({ url: config.tokenDb.url, schema: config.tokenDb.schema });
  await tokens.migrate();
  const app = buildApiServer({ stores, tokens, handleKey: config.handleKey, storeTimeoutMs: config.storeTimeoutMs });
  if (config.handleKeyIsEphemeral) app.log.warn("LEASEWATCH_API_HANDLE_KEY is unset: using a random key, lease handles will not survive a restart");
  await app.listen({ port: config.port, host: config.host });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, "stopping: finishing requests in flight");
    void app
      .close()
      .then(() => Promise.all([...stores.values()].map((s) => s.close().catch(() => {}))))
      .then(() => tokens.close())
      .then(() => process.exit(0), () => process.exit(1));
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

main().catch((error: unknown) => {
  console.error(`[api] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
