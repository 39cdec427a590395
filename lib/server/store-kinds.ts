/**
 * The store kinds a configuration can name, in one place: for each kind, its entry in
 * LEASEWATCH_STORES (the schema lib/server/store-config.ts reads it with) and how a store is
 * built from that entry. Adding a kind is one entry in STORE_KINDS; the configuration schema,
 * createStore and the registry follow from it.
 */
import { z } from "zod";
import {
  DEFAULT_READ_KEY_BUDGET,
  DEFAULT_STATEMENT_TIMEOUT_MS,
  type LeaseStore,
  PostgresLeaseStore,
  RedisLeaseStore,
  type StoreKind,
  type StoreWarning,
} from "@leasewatch/lease";
import { layerStore, refusingStore, ZStoreName, zSqlIdentifier } from "@leasewatch/lease/internal";
import { getLogger } from "@/lib/log/logger";

/** One kind: its configuration entry (a strict object with `name` and its `kind`) and how a store is built from it. */
interface StoreKindEntry<Config extends z.ZodObject> {
  config: Config;
  /** Throws when the store refuses its options (createStore then answers with an unavailable store). */
  create(config: z.infer<Config>): LeaseStore;
}

function storeKind<Config extends z.ZodObject>(config: Config, create: (config: z.infer<Config>) => LeaseStore): StoreKindEntry<Config> {
  return { config, create };
}

export const STORE_KINDS = {
  postgres: storeKind(
    z.strictObject({
      name: ZStoreName,
      kind: z.literal("postgres"),
      url: z.string().regex(/^postgres(ql)?:\/\//, { error: "a postgres store needs a postgres:// url" }),
      schema: zSqlIdentifier("schema").optional(),
      /** "transaction": the url is a pooler in transaction mode (PgBouncer, RDS Proxy); see PostgresLeaseStore's `pooler`. */
      pooler: z.literal("transaction", { error: 'pooler must be "transaction" (or left out for a direct connection)' }).optional(),
    }),
    // TLS follows the URL: `?sslmode=require` / `verify-full` (with sslrootcert=…) are read by pg.
    (config) =>
      new PostgresLeaseStore({
        name: config.name,
        connectionString: config.url,
        schema: config.schema,
        ...(config.pooler ? { pooler: config.pooler } : {}),
        statementTimeoutMs: readStatementTimeoutMs(),
        eventRetentionDays: readEventRetentionDays(),
      }),
  ),
  redis: storeKind(
    z.strictObject({
      name: ZStoreName,
      kind: z.literal("redis"),
      url: z.string().regex(/^(rediss?|redis\+cluster):\/\//, { error: "a redis store needs a redis://, rediss:// or redis+cluster://host:port,host:port url" }),
      namespace: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/).optional(),
    }),
    // TLS follows the URL: `rediss://` connects over TLS (ioredis).
    (config) =>
      new RedisLeaseStore({
        name: config.name,
        url: config.url,
        namespace: config.namespace,
        readKeyBudget: readRedisKeyBudget(),
        ...readRedisEventRetention(),
        onWarning: logStoreWarning,
      }),
  ),
} satisfies { [K in StoreKind]: StoreKindEntry<z.ZodObject<{ kind: z.ZodLiteral<K> } & z.ZodRawShape>> };

type StoreKinds = typeof STORE_KINDS;
/** One store's entry in LEASEWATCH_STORES, whichever its kind. */
export type TStoreConfig = { [K in keyof StoreKinds]: z.infer<StoreKinds[K]["config"]> }[keyof StoreKinds];

const kindSchemas = Object.values(STORE_KINDS).map((entry) => entry.config);
export const ZStoreConfig: z.ZodType<TStoreConfig> = z.discriminatedUnion(
  "kind",
  kindSchemas as [(typeof kindSchemas)[number], ...(typeof kindSchemas)[number][]],
) as z.ZodType<TStoreConfig>;

/** The console migrates its Postgres stores itself (LEASEWATCH_MIGRATE=1). */
export function isMigrateEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.LEASEWATCH_MIGRATE === "1";
}

/**
 * Builds one store from its validated config; never throws (a failure becomes an unavailable
 * store). `migrate`: stores with a schema (`migrate()`) migrate themselves on first use.
 */
export function createStore(config: TStoreConfig, options: { migrate: boolean } = { migrate: isMigrateEnabled() }): LeaseStore {
  try {
    // The entry for config.kind takes configs of that kind, which config is.
    const store = (STORE_KINDS[config.kind].create as (config: TStoreConfig) => LeaseStore)(config);
    return options.migrate && isMigratable(store) ? wrapWithLazyMigration(store) : store;
  } catch (error) {
    return unavailableStore(config, error instanceof Error ? error.message : String(error));
  }
}

function isMigratable(store: LeaseStore): store is MigratableStore {
  return typeof (store as Partial<MigratableStore>).migrate === "function";
}

/**
 * A configured store that could not be constructed (bad options, driver missing).
 * It reports itself down with the reason, so one broken store shows on the
 * health bar instead of taking every page down; everything else rejects with it.
 */
function unavailableStore(config: TStoreConfig, reason: string): LeaseStore {
  const unavailable = refusingStore(config, () => new Error(`store "${config.name}" is unavailable: ${reason}`));
  return layerStore(unavailable, {
    override: {
      health: async () => ({ store: config.name, kind: config.kind, ok: false, error: reason }),
      close: async () => {},
    },
  });
}

type MigratableStore = LeaseStore & { migrate(): Promise<unknown> };

/**
 * Runs the store's `migrate()` once before its first real operation. A failed
 * migration (database down) is retried on the next call rather than remembered,
 * so the store recovers by itself when the database comes back.
 */
export function wrapWithLazyMigration(inner: MigratableStore): LeaseStore {
  let ready: Promise<void> | null = null;
  const ensureMigrated = (): Promise<void> => {
    ready ??= inner.migrate().then(
      () => undefined,
      (error: unknown) => {
        ready = null;
        throw error;
      },
    );
    return ready;
  };
  return layerStore(inner, {
    beforeForward: ensureMigrated,
    // Health is about reachability; it must answer (down) even when migration cannot run.
    override: { health: () => inner.health(), close: () => inner.close() },
  });
}

const ZStatementTimeoutMs = z.coerce
  .number({ error: "LEASEWATCH_STATEMENT_TIMEOUT_MS must be a number of milliseconds" })
  .int({ error: "LEASEWATCH_STATEMENT_TIMEOUT_MS must be a whole number of milliseconds" })
  .min(100, { error: "LEASEWATCH_STATEMENT_TIMEOUT_MS must be at least 100" })
  .max(60_000, { error: "LEASEWATCH_STATEMENT_TIMEOUT_MS must be at most 60000" });

const ZEventRetentionDays = z.coerce
  .number({ error: "LEASEWATCH_EVENT_RETENTION_DAYS must be a number of days" })
  .int({ error: "LEASEWATCH_EVENT_RETENTION_DAYS must be a whole number of days" })
  .min(0, { error: "LEASEWATCH_EVENT_RETENTION_DAYS must be 0 (keep every event) or more" })
  .max(36_500, { error: "LEASEWATCH_EVENT_RETENTION_DAYS must be at most 36500" });

/**
 * Days of raw events Postgres stores keep (whole UTC days, dropped by partition); unset or 0
 * keeps every event. Charts read rollups, which are kept: they outlive the raw events.
 */
export function readEventRetentionDays(env: NodeJS.ProcessEnv = process.env): number {
  return readOptionalEnv(env, "LEASEWATCH_EVENT_RETENTION_DAYS", ZEventRetentionDays) ?? 0;
}

/** How long Postgres lets one console read run (LEASEWATCH_STATEMENT_TIMEOUT_MS, default 2000). */
export function readStatementTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  return readOptionalEnv(env, "LEASEWATCH_STATEMENT_TIMEOUT_MS", ZStatementTimeoutMs) ?? DEFAULT_STATEMENT_TIMEOUT_MS;
}

const ZRedisEventRetentionDays = z.coerce
  .number({ error: "LEASEWATCH_REDIS_EVENT_RETENTION_DAYS must be a number of days" })
  .int({ error: "LEASEWATCH_REDIS_EVENT_RETENTION_DAYS must be a whole number of days" })
  .min(1, { error: "LEASEWATCH_REDIS_EVENT_RETENTION_DAYS must be at least 1 (unset it to keep events by count only)" })
  .max(36_500, { error: "LEASEWATCH_REDIS_EVENT_RETENTION_DAYS must be at most 36500" });

const ZRedisEventMemoryMb = z.coerce
  .number({ error: "LEASEWATCH_REDIS_EVENT_MEMORY_MB must be a number of megabytes" })
  .int({ error: "LEASEWATCH_REDIS_EVENT_MEMORY_MB must be a whole number of megabytes" })
  .min(1, { error: "LEASEWATCH_REDIS_EVENT_MEMORY_MB must be at least 1 (unset it for no memory budget)" })
  .max(1_000_000, { error: "LEASEWATCH_REDIS_EVENT_MEMORY_MB must be at most 1000000" });

/**
 * Retention of Redis stores' event streams, applied by the sweep: days of events kept
 * (LEASEWATCH_REDIS_EVENT_RETENTION_DAYS) and a memory budget for each namespace's streams
 * (LEASEWATCH_REDIS_EVENT_MEMORY_MB). Unset: the streams are only capped by length.
 */
export function readRedisEventRetention(env: Record<string, string | undefined> = process.env): { eventRetentionDays?: number; eventRetentionMaxMb?: number } {
  const days = readOptionalEnv(env, "LEASEWATCH_REDIS_EVENT_RETENTION_DAYS", ZRedisEventRetentionDays);
  const memoryMb = readOptionalEnv(env, "LEASEWATCH_REDIS_EVENT_MEMORY_MB", ZRedisEventMemoryMb);
  return { ...(days === undefined ? {} : { eventRetentionDays: days }), ...(memoryMb === undefined ? {} : { eventRetentionMaxMb: memoryMb }) };
}

/** The number in `env[name]` as `schema` reads it; undefined when unset or empty; an error saying what is wrong otherwise. */
function readOptionalEnv(env: Record<string, string | undefined>, name: string, schema: z.ZodType<number, unknown>): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? `${name} is invalid`);
  return parsed.data;
}

const ZReadKeyBudget = z.coerce
  .number({ error: "LEASEWATCH_REDIS_READ_KEY_BUDGET must be a number of keys" })
  .int({ error: "LEASEWATCH_REDIS_READ_KEY_BUDGET must be a whole number of keys" })
  .min(1_000, { error: "LEASEWATCH_REDIS_READ_KEY_BUDGET must be at least 1000" })
  .max(10_000_000, { error: "LEASEWATCH_REDIS_READ_KEY_BUDGET must be at most 10000000" });

/** Keys and entries one console read may examine on a Redis store (LEASEWATCH_REDIS_READ_KEY_BUDGET, default 50000). */
export function readRedisKeyBudget(env: NodeJS.ProcessEnv = process.env): number {
  return readOptionalEnv(env, "LEASEWATCH_REDIS_READ_KEY_BUDGET", ZReadKeyBudget) ?? DEFAULT_READ_KEY_BUDGET;
}

const loggedWarnings = new Set<string>();

/** A store's warning (a Redis server without an append-only file) in the server log, once per store and server. */
function logStoreWarning(warning: StoreWarning): void {
  if (loggedWarnings.has(warning.message)) return;
  loggedWarnings.add(warning.message);
  getLogger("store").warn({ store: warning.store, code: warning.code }, warning.message);
}
