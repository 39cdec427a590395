import { z } from "zod";
import { type TStoreConfig, ZStoreConfig } from "./store-kinds";

/**
 * Stores the console watches, from `LEASEWATCH_STORES`: a JSON array of
 * `{ "name": "pg-main", "kind": "postgres", "url": "postgres://…" }` /
 * `{ "name": "redis-main", "kind": "redis", "url": "redis://…" }`. A Redis Cluster is
 * `"url": "redis+cluster://host:port,host:port[/namespace]"` (seed nodes; the console shows it as one store).
 * Unset: the local PostgreSQL (DATABASE_URL or 127.0.0.1:5432) and Redis
 * (REDIS_URL or 127.0.0.1:6379), named "pg-main" and "redis-main". Each kind's entry is
 * defined with the kind, in lib/server/store-kinds.ts.
 */
export { ZStoreConfig, type TStoreConfig } from "./store-kinds";

const ZStoresConfig = z
  .array(ZStoreConfig)
  .min(1, { error: "configure at least one store" })
  .refine((stores) => new Set(stores.map((s) => s.name)).size === stores.length, { error: "store names must be unique" });

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

export function defaultStores(env: NodeJS.ProcessEnv = process.env): TStoreConfig[] {
  return [
    { name: "pg-main", kind: "postgres", url: env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres" },
    { name: "redis-main", kind: "redis", url: env.REDIS_URL ?? "redis://127.0.0.1:6379" },
  ];
}

/** Parse the stores configuration or throw a ConfigError that says what to fix. */
export function parseStoresConfig(env: NodeJS.ProcessEnv = process.env): TStoreConfig[] {
  const raw = env.LEASEWATCH_STORES?.trim();
  if (!raw) return defaultStores(env);
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new ConfigError(
      'LEASEWATCH_STORES is not valid JSON; expected e.g. [{"name":"pg-main","kind":"postgres","url":"postgres://…"}]',
    );
  }
  const parsed = ZStoresConfig.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length ? ` at ${issue.path.join(".")}` : "";
    throw new ConfigError(`LEASEWATCH_STORES is invalid${where}: ${issue?.message ?? "unknown problem"}`);
  }
  return parsed.data;
}
