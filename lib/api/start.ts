/** Starts the API server from its parsed config; shared by `npm run api` and the demo. */
import type { FastifyInstance } from "fastify";
import { createStore } from "@/lib/console/registry";
import type { LeaseStore } from "@/lib/lease/types";
import type { ApiConfig } from "./config";
import { buildApiServer } from "./server";
import { TokenStore } from "./tokens";

export interface RunningApi {
  app: FastifyInstance;
  url: string;
  tokens: TokenStore;
  /** Answers the requests in flight (new ones get 503), then closes stores and pools. */
  close(): Promise<void>;
}

export async function startApiServer(config: ApiConfig, options: { logger?: boolean | Record<string, unknown> } = {}): Promise<RunningApi> {
  const stores = new Map<string, LeaseStore>(config.stores.map((c) => [c.name, createStore(c)]));
  const tokens = new TokenStore({ url: config.tokenDb.url, schema: config.tokenDb.schema });
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
      logger: options.logger ?? { level: config.logLevel },
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
        await app.close();
        await closeStores();
      },
    };
  } catch (error) {
    await closeStores();
    throw error;
  }
}
