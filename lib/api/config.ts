/**
 * The API server's environment, validated once at start-up:
 * - LEASEWATCH_STORES: the stores (lib/server/store-config.ts, shared with the console);
 * - LEASEWATCH_API_HANDLE_KEY: HMAC key for lease handles, ≥ 32 characters, the same on
 *   every replica. Unset outside production, a random key is used: handles then do not
 *   survive a restart (a holder's renew gets 404 and it stops, as after a lost lease).
 * - LEASEWATCH_API_PORT (default 8787), LEASEWATCH_API_HOST (default 127.0.0.1);
 * - LEASEWATCH_API_STORE_TIMEOUT_MS (default 2000);
 * - LOG_LEVEL (default info; LEASEWATCH_API_LOG_LEVEL, when set, wins for the API): JSON lines
 *   (lib/log/logger.ts); requests that fail (4xx, 5xx) are logged at info
 *   with their request id; successful ones only at debug (one line each), since a line per
 *   lock call costs more CPU than the call itself;
 * - METRICS_TOKEN: the bearer Prometheus sends to scrape /metrics (as for the console's
 *   /api/metrics); unset, /metrics is refused;
 * - TRUSTED_PROXY: proxies whose X-Forwarded-For is believed (lib/auth/client-address.ts);
 * - the token table lives where the console keeps its tables (resolveConsoleDbConfig).
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { parseStoresConfig, type TStoreConfig } from "@/lib/server/store-config";
import { resolveConsoleDbConfig, type ConsoleDbConfig } from "@/lib/auth/session-store";
import { parseTrustedProxy, TrustedProxyError, type TrustProxy } from "@/lib/auth/client-address";
import { MetricsTokenError, readMetricsToken } from "@/lib/server/metrics-token";
import { EnvError } from "@/lib/auth/env";
import { DEFAULT_LOG_LEVEL, isLogLevel, LOG_LEVELS, type LogLevel } from "@/lib/log/logger";
import { MIN_HANDLE_KEY_BYTES } from "./handle";
import { DEFAULT_STORE_TIMEOUT_MS } from "./server";

export const DEFAULT_API_PORT = 8787;

export interface ApiConfig {
  stores: TStoreConfig[];
  tokenDb: ConsoleDbConfig;
  handleKey: Buffer;
  handleKeyIsEphemeral: boolean;
  port: number;
  host: string;
  storeTimeoutMs: number;
  logLevel: LogLevel;
  metricsToken: string | null;
  trustProxy: TrustProxy;
}

const ZPort = z.coerce.number().int().min(0).max(65535);

export function parseApiConfig(env: NodeJS.ProcessEnv = process.env): ApiConfig {
  const rawKey = env.LEASEWATCH_API_HANDLE_KEY?.trim();
  if (rawKey !== undefined && rawKey !== "" && Buffer.byteLength(rawKey) < MIN_HANDLE_KEY_BYTES) {
    throw new EnvError(`LEASEWATCH_API_HANDLE_KEY must be at least ${MIN_HANDLE_KEY_BYTES} characters (e.g. openssl rand -hex 32)`);
  }
  if (!rawKey && env.NODE_ENV === "production") throw new EnvError("Set LEASEWATCH_API_HANDLE_KEY in production (the same on every replica)");
  const port = ZPort.safeParse(env.LEASEWATCH_API_PORT ?? DEFAULT_API_PORT);
  if (!port.success) throw new EnvError("LEASEWATCH_API_PORT must be a port number");
  const timeout = z.coerce.number().int().min(50).max(60_000).safeParse(env.LEASEWATCH_API_STORE_TIMEOUT_MS ?? DEFAULT_STORE_TIMEOUT_MS);
  if (!timeout.success) throw new EnvError("LEASEWATCH_API_STORE_TIMEOUT_MS must be between 50 and 60000");
  const levelVariable = env.LEASEWATCH_API_LOG_LEVEL?.trim() ? "LEASEWATCH_API_LOG_LEVEL" : "LOG_LEVEL";
  const logLevel = env[levelVariable]?.trim() || DEFAULT_LOG_LEVEL;
  if (!isLogLevel(logLevel)) throw new EnvError(`${levelVariable} must be one of ${LOG_LEVELS.join(", ")}`);
  let metricsToken: string | null;
  let trustProxy: TrustProxy;
  try {
    metricsToken = readMetricsToken(env);
    trustProxy = parseTrustedProxy(env);
  } catch (error) {
    if (error instanceof MetricsTokenError || error instanceof TrustedProxyError) throw new EnvError(error.message);
    throw error;
  }
  return {
    logLevel,
    metricsToken,
    trustProxy,
    stores: parseStoresConfig(env),
    tokenDb: resolveConsoleDbConfig(env),
    handleKey: rawKey ? Buffer.from(rawKey, "utf8") : randomBytes(32),
    handleKeyIsEphemeral: !rawKey,
    port: port.data,
    host: env.LEASEWATCH_API_HOST?.trim() || "127.0.0.1",
    storeTimeoutMs: timeout.data,
  };
}
