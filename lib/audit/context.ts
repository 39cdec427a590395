/**
 * Server-only: the console's process-wide audit log, built once from the
 * environment (./config.ts) and the configured stores (lib/server/store-registry.ts).
 * With LEASEWATCH_MIGRATE=1 the console creates or upgrades the audit schema
 * itself on first use; otherwise it expects a migration run by a role that may
 * (`npm run migrate`), which is what a least-privilege console needs.
 */
import pg from "pg";
import { parseObservedConfig } from "@/lib/observed/config";
import { readRecordAfter } from "@/lib/observed/observer";
import { observedHistorySchema } from "@/lib/observed/runtime";
import { parseStoresConfig } from "@/lib/server/store-config";
import { getStoreEntries, isMigrateEnabled } from "@/lib/server/store-registry";
import { DEFAULT_SCHEMA as DEFAULT_LEASE_SCHEMA } from "@leasewatch/lease/internal";
import { isSameDatabase, parseAuditConfig } from "./config";
import type { AuditDeps, ObservedReleaseDeps } from "./deps";
import { AuditLog } from "./log";
import { RefusalTally } from "./refusal-tally";
import { ChainWatcher, type ChainStatus } from "./chain-status";

interface ProcessAudit {
  log: AuditLog;
  ready: Promise<void> | null;
}

const GLOBAL_KEY = Symbol.for("leasewatch.audit.log");
const TALLY_KEY = Symbol.for("leasewatch.audit.refusal-tally");
const WATCHER_KEY = Symbol.for("leasewatch.audit.chain-watcher");
/** A burst of rate-limited attempts is one entry per user and action at most this often. */
const TALLY_WINDOW_MS = 30_000;
type GlobalWithAudit = typeof globalThis & { [GLOBAL_KEY]?: ProcessAudit };

/** Lease schemas of the Postgres stores in the audit log's database: force_release() serves these. */
export function leaseSchemasInDatabase(auditUrl: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return parseStoresConfig(env)
    .filter((s) => s.kind === "postgres" && isSameDatabase(auditUrl, s.url))
    .map((s) => (s.kind === "postgres" ? (s.schema ?? DEFAULT_LEASE_SCHEMA) : DEFAULT_LEASE_SCHEMA));
}

function processAudit(): ProcessAudit {
  const g = globalThis as GlobalWithAudit;
  if (!g[GLOBAL_KEY]) {
    // Throws AuditConfigError with what to fix; nothing is cached on failure.
    const config = parseAuditConfig();
    g[GLOBAL_KEY] = { log: new AuditLog({ connectionString: config.url, schema: config.schema, key: config.key, ...(config.pooler ? { pooler: config.pooler } : {}) }), ready: null };
  }
  return g[GLOBAL_KEY];
}

/** The audit log, migrated first when this console does migrations. A failed migration is retried on the next call. */
export async function getProcessAuditLog(): Promise<AuditLog> {
  const audit = processAudit();
  if (!isMigrateEnabled()) return audit.log;
  audit.ready ??= audit.log
    .migrate(leaseSchemasInDatabase(audit.log.connectionString ?? ""))
    .then(() => undefined)
    .catch((error: unknown) => {
      audit.ready = null;
      throw error;
    });
  await audit.ready;
  return audit.log;
}

/** The console's count of rate-limited attempts, written to the process-wide audit log. */
export function getRefusalTally(): RefusalTally {
  const g = globalThis as typeof globalThis & { [TALLY_KEY]?: RefusalTally };
  g[TALLY_KEY] ??= new RefusalTally({ windowMs: TALLY_WINDOW_MS, getAuditLog: getProcessAuditLog });
  return g[TALLY_KEY];
}

/** The chain's state as this process last verified it (extended to the newest entry when older than a few seconds). */
export async function getChainStatus(): Promise<ChainStatus> {
  const audit = await getProcessAuditLog();
  const g = globalThis as typeof globalThis & { [WATCHER_KEY]?: ChainWatcher };
  g[WATCHER_KEY] ??= new ChainWatcher((options) => audit.verifyChain(options));
  return g[WATCHER_KEY].look();
}

export function defaultAuditDeps(): AuditDeps {
  return {
    getAuditLog: getProcessAuditLog,
    getTarget: (name) => getStoreEntries().find((e) => e.config.name === name),
  };
}

const HISTORY_KEY = Symbol.for("leasewatch.audit.observed-history");

/**
 * The observed force-release's dependencies: the configured observed stores, and
 * the observer's record (kept in the audit log's database) for resolving entries
 * a crash left open.
 */
export function defaultObservedReleaseDeps(env: NodeJS.ProcessEnv = process.env): ObservedReleaseDeps {
  const configs = parseObservedConfig(env);
  return {
    getAuditLog: getProcessAuditLog,
    getObserved: (name) => configs.find((c) => c.name === name),
    readRecordAfter: (query) => {
      const g = globalThis as typeof globalThis & { [HISTORY_KEY]?: pg.Pool };
      if (!g[HISTORY_KEY]) {
        const pool = new pg.Pool({ connectionString: parseAuditConfig(env).url, max: 1, application_name: "leasewatch-console", statement_timeout: 4_000 });
        pool.on("error", () => {});
        g[HISTORY_KEY] = pool;
      }
      return readRecordAfter(g[HISTORY_KEY], observedHistorySchema(env), query);
    },
  };
}

/** Closes the process-wide audit log (tests, and scripts that end). */
export async function closeProcessAuditLog(): Promise<void> {
  const g = globalThis as GlobalWithAudit;
  const audit = g[GLOBAL_KEY];
  delete g[GLOBAL_KEY];
  delete (g as { [WATCHER_KEY]?: unknown })[WATCHER_KEY];
  const history = (g as { [HISTORY_KEY]?: pg.Pool })[HISTORY_KEY];
  delete (g as { [HISTORY_KEY]?: unknown })[HISTORY_KEY];
  await Promise.all([audit?.log.close(), history?.end()]);
}
