import { LeaseError } from "../errors";
import { PostgresLeaseStore } from "../postgres/store";
import { RedisLeaseStore } from "../redis/store";
import type { LeaseStore } from "../types";
import { findConsoleModule, type ConsoleStoreConfig, type Env } from "./console-module";
import { EXIT, UsageError, type CliOutput } from "./usage";

/** The options every store-using subcommand takes. */
export const STORE_OPTIONS = {
  store: { type: "string" },
  schema: { type: "string" },
  namespace: { type: "string" },
} as const;

export const STORE_OPTIONS_HELP = `Store:
  --store URL|NAME    redis://host:6379, rediss://… (TLS), redis+cluster://host:port,host:port,
                      postgres://user@host/db; default: $LEASEWATCH_STORE. Inside the console's
                      installation, NAME is a store configured there (LEASEWATCH_STORES).
  --schema NAME       Postgres schema of the lease tables (default: leasewatch)
  --namespace NAME    Redis key namespace (default: lw)
  The defaults are the console's, so what this command does shows in the console.`;

export interface StoreSpec {
  kind: "postgres" | "redis";
  /** Shown in output; a console store's name, or the kind for a URL. */
  name: string;
  url: string;
  schema?: string;
  namespace?: string;
}

const URL_SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

/** The store named by --store (or LEASEWATCH_STORE), checked but not connected to. */
export async function resolveStoreSpec(
  values: { store?: string; schema?: string; namespace?: string },
  env: Env = process.env,
): Promise<StoreSpec> {
  const given = values.store ?? env.LEASEWATCH_STORE;
  if (!given?.trim()) {
    throw new UsageError("--store is required (or set LEASEWATCH_STORE): e.g. --store redis://127.0.0.1:6379 or --store postgres://user@host/db");
  }
  const scheme = URL_SCHEME.exec(given)?.[1]?.toLowerCase();
  let spec: StoreSpec;
  if (scheme === undefined) {
    spec = await lookUpConsoleStore(given.trim(), env);
  } else if (scheme === "redis" || scheme === "rediss" || scheme === "redis+cluster") {
    spec = { kind: "redis", name: "redis", url: given };
  } else if (scheme === "postgres" || scheme === "postgresql") {
    spec = { kind: "postgres", name: "postgres", url: given };
  } else {
    throw new UsageError(`--store: "${scheme}://" is not a store; use redis://, rediss://, redis+cluster:// or postgres://`);
  }
  if (values.schema !== undefined) {
    if (spec.kind !== "postgres") throw new UsageError("--schema applies to a postgres:// store only (a Redis store takes --namespace)");
    spec = { ...spec, schema: values.schema };
  }
  if (values.namespace !== undefined) {
    if (spec.kind !== "redis") throw new UsageError("--namespace applies to a redis:// store only (a Postgres store takes --schema)");
    spec = { ...spec, namespace: values.namespace };
  }
  return spec;
}

async function lookUpConsoleStore(name: string, env: Env): Promise<StoreSpec> {
  const found = await findConsoleModule(env);
  if (found.kind !== "loaded" || !found.module.stores) {
    const why = found.kind === "failed" ? ` (${found.message})` : "";
    throw new UsageError(
      `--store "${name}" is not a URL, and a store name only means something inside the console's installation${why}; give a redis:// or postgres:// URL`,
    );
  }
  let stores: ConsoleStoreConfig[];
  try {
    stores = found.module.stores();
  } catch (error) {
    throw new UsageError(`the console's store configuration: ${error instanceof Error ? error.message : String(error)}`);
  }
  const store = stores.find((s) => s.name === name);
  if (!store) throw new UsageError(`no store named "${name}" is configured (configured: ${stores.map((s) => s.name).join(", ") || "none"})`);
  return store.kind === "postgres"
    ? { kind: "postgres", name: store.name, url: store.url, ...(store.schema ? { schema: store.schema } : {}) }
    : { kind: "redis", name: store.name, url: store.url, ...(store.namespace ? { namespace: store.namespace } : {}) };
}

/**
 * Opens the store. Bad options (a malformed schema or namespace) are usage errors.
 * Redis warnings (a server without persistence) are printed as one line when asked for:
 * a cron job running `exec` every minute should not repeat one on every run.
 */
export function openStore(spec: StoreSpec, output: CliOutput, options: { showWarnings: boolean }): LeaseStore {
  try {
    if (spec.kind === "postgres") {
      return new PostgresLeaseStore({ name: spec.name, connectionString: spec.url, ...(spec.schema ? { schema: spec.schema } : {}) });
    }
    return new RedisLeaseStore({
      name: spec.name,
      url: spec.url,
      ...(spec.namespace ? { namespace: spec.namespace } : {}),
      onWarning: (warning) => {
        if (options.showWarnings) output.err(`leasewatch: warning: ${warning.message}`);
      },
    });
  } catch (error) {
    if (error instanceof LeaseError) throw new UsageError(error.message.replace(/^(PostgresLeaseStore|RedisLeaseStore) options: /, "--store: "));
    throw error;
  }
}

/**
 * Opens the store, answers with what `work` returns and closes the store; an error of the
 * store ends the command with exit 69 and says which store failed.
 */
export async function runOnStore(spec: StoreSpec, output: CliOutput, options: { showWarnings: boolean }, work: (store: LeaseStore) => Promise<number>): Promise<number> {
  const store = openStore(spec, output, options);
  try {
    return await work(store);
  } catch (error) {
    output.err(`leasewatch: store ${spec.name}: ${describeStoreError(error, spec)}`);
    return EXIT.STORE_UNAVAILABLE;
  } finally {
    await store.close().catch(() => undefined);
  }
}

/** The store's error in one line, with what to do when the Postgres schema is not there yet. */
export function describeStoreError(error: unknown, spec: StoreSpec): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  // undefined_table, undefined_function, invalid_schema_name: the schema was never migrated.
  if (spec.kind === "postgres" && (code === "42P01" || code === "42883" || code === "3F000")) {
    return `${message}; the store's schema is not set up: run \`leasewatch migrate --store …\` once (as a role that may create it)`;
  }
  return message;
}
