/** Starts the API server from its parsed config; shared by `npm run api` and the demo. */
import type { FastifyInstance, FastifyServerOptions } from "fastify";
import { createStore } from "@/lib/server/store-registry";
import type { LeaseStore } from "@leasewatch/lease";
import { loggerOptions } from "@/lib/log/logger";
import type { ApiConfig } from "./config";
import { buildApiServer } from "./server";
import { TokenStore } from "./tokens";

/** While closing, connections that finished their last request are closed this often. */
const IDLE_SWEEP_MS = 100;

export interface RunningApi {
  app: FastifyInstance;
  url: string;
  tokens: TokenStore;
  /** Answers the requests in flight (new ones get 503), then closes stores and pools. */
  close(): Promise<void>;
}

export async function startApiServer(config: ApiConfig, options: { logger?: FastifyServerOptions["logger"] } = {}): Promise<RunningApi> {
  const stores = new Map<string, LeaseStore>(config.stores.map((c) => [c.name, createStore(c)]));
  const tokens = new TokenStore({ url: config.tokenDb.url, schema: config.tokenDb.schema, ...(config.tokenDb.pooler ? { pooler: config.tokenDb.pooler } : {}) });
  const closeStores = async () => {
    await Promise.all([...stores.values()].map((s) => s.close().catch(() => {})));
    await tokens.close();
  };
  try {
    await tokens.migrate();
    const app = buildApiServer({
      stores,
      tokens,
      handleKey: config.handleKey,
      storeTimeoutMs: config.storeTimeoutMs,
      logger: options.logger ?? loggerOptions("api", config.logLevel),
      metricsToken: config.metricsToken,
      trustProxy: config.trustProxy,
    });
    if (config.handleKeyIsEphemeral) app.log.warn("LEASEWATCH_API_HANDLE_KEY is unset: using a random key, lease handles will not survive a restart");
    if (!config.metricsToken) app.log.warn("METRICS_TOKEN is unset: /metrics refuses every scrape");
    await app.listen({ port: config.port, host: config.host });
    // The bound port, so LEASEWATCH_API_PORT=0 (any free port) reports the real one.
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : config.port;
    return {
      app,
      url: `http://${config.host}:${port}`,
      tokens,
      close: async () => {
        const closed = app.close();
        // Fastify closes the connections idle when it starts closing; a connection whose request was
        // in flight then goes idle (keep-alive) and would hold the close until its keep-alive timeout.
        const closeIdle = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
        try {
          await closed;
        } finally {
          clearInterval(closeIdle);
        }
        await closeStores();
      },
    };
  } catch (error) {
    await closeStores();
    throw error;
  }
}
