/**
 * Server-only: the console's process-wide audit log, built once from the
 * environment (./config.ts) and the configured stores (lib/console/registry).
 * With LEASEWATCH_MIGRATE=1 the console creates or upgrades the audit schema
 * itself on first use; otherwise it expects a migration run by a role that may
 * (`npm run migrate`), which is what a least-privilege console needs.
 */
import { parseStoresConfig } from "@/lib/console/config";
import { getStoreEntries, isMigrateEnabled } from "@/lib/console/registry";
import { DEFAULT_SCHEMA as DEFAULT_LEASE_SCHEMA } from "@/lib/lease/postgres/sql";
import { isSameDatabase, parseAuditConfig } from "./config";
import { resolvePendingForceReleases, DEFAULT_PENDING_GRACE_MS, type AuditDeps, type ResolveResult } from "./force-release";
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
    g[GLOBAL_KEY] = { log: new AuditLog({ connectionString: config.url, schema: config.schema, key: config.key }), ready: null };
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

/**
 * At console start-up: give entries a crashed process left `requested` their
 * outcome. Entries younger than the grace period may still be in flight in
 * another replica, so a second pass runs once that has passed. Resolves with
 * the first pass (never rejects: problems are logged).
 */
export function startAuditHousekeeping(options: { graceMs?: number } = {}): Promise<ResolveResult | null> {
  const graceMs = options.graceMs ?? DEFAULT_PENDING_GRACE_MS;
  const run = () =>
    resolvePendingForceReleases({ ...defaultAuditDeps(), pendingGraceMs: graceMs })
      .then((result) => {
        if (result.resolved.length > 0) console.info(`[leasewatch] audit: recorded the outcome of ${result.resolved.length} open force-release entries`);
        if (result.open.length > 0) console.warn(`[leasewatch] audit: ${result.open.length} force-release entries stay open (their store is not answering)`);
        return result;
      })
      .catch((error: unknown) => {
        console.error(`[leasewatch] audit: resolving open entries failed: ${error instanceof Error ? error.message : String(error)}`);
        return null;
      });
  setTimeout(() => void run(), graceMs + 1_000).unref();
  return run();
}

/** Closes the process-wide audit log (tests, and scripts that end). */
export async function closeProcessAuditLog(): Promise<void> {
  const g = globalThis as GlobalWithAudit;
  const audit = g[GLOBAL_KEY];
  delete g[GLOBAL_KEY];
  delete (g as { [WATCHER_KEY]?: unknown })[WATCHER_KEY];
  await audit?.log.close();
}
