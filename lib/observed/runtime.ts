import { Cluster, Redis } from "ioredis";
import pg from "pg";
import type { TObservedConfig } from "./config";
import type { ObservedSource } from "./observer";
import { resolveAdvisoryNames } from "./pg-advisory";
import { advisorySource, redisKeysSource, shedLockSource } from "./sources";

/**
 * The schema in the console's Postgres that keeps observed history:
 * LEASEWATCH_OBSERVED_SCHEMA, else `<LEASEWATCH_CONSOLE_SCHEMA>_observed`, else `leasewatch_observed`.
 */
export function observedHistorySchema(env: NodeJS.ProcessEnv = process.env): string {
  return env.LEASEWATCH_OBSERVED_SCHEMA || (env.LEASEWATCH_CONSOLE_SCHEMA ? `${env.LEASEWATCH_CONSOLE_SCHEMA}_observed` : "leasewatch_observed");
}

export interface OpenedSource {
  config: TObservedConfig;
  source: ObservedSource;
  /** The connection the source reads through (force-release uses the same one). */
  pool?: pg.Pool;
  redis?: Redis | Cluster;
  close(): Promise<void>;
}

/** The seed nodes of a `redis+cluster://host:port,host:port[/namespace]` URL; null for any other URL. */
export function clusterSeedsOf(url: string): { host: string; port: number }[] | null {
  if (!url.startsWith("redis+cluster://")) return null;
  return url
    .slice("redis+cluster://".length)
    .split("/")[0]!
    .split(",")
    .map((hp) => {
      const [host, port] = hp.split(":");
      return { host: host!, port: Number(port ?? 6379) };
    });
}

function redisClient(url: string): Redis | Cluster {
  const seeds = clusterSeedsOf(url);
  if (seeds) return new Cluster(seeds, { redisOptions: { connectionName: "leasewatch-observer" } });
  return new Redis(url, { connectionName: "leasewatch-observer", maxRetriesPerRequest: 1 });
}

/** Opens the connection an observed store is read through, and its source. */
export async function openObservedSource(config: TObservedConfig): Promise<OpenedSource> {
  if (config.kind === "redis-keys") {
    const redis = redisClient(config.url);
    redis.on("error", () => {});
    return { config, redis, source: redisKeysSource(config.name, redis, { patterns: config.patterns }), close: async () => void redis.disconnect() };
  }
  const pool = new pg.Pool({ connectionString: config.url, max: 2, application_name: "leasewatch-observer" });
  pool.on("error", () => {});
  if (config.kind === "shedlock") {
    const source = shedLockSource(config.name, pool, {
      ...(config.table ? { table: config.table } : {}),
      ...(config.lockAtMostForMs ? { lockAtMostForMs: { default: config.lockAtMostForMs } } : {}),
    });
    return { config, pool, source, close: () => pool.end() };
  }
  const names = await resolveAdvisoryNames(pool, { names: config.names ?? [] });
  return { config, pool, source: advisorySource(config.name, pool, { names }), close: () => pool.end() };
}
