/**
 * Server-only: the console's store instances, built once per process from
 * LEASEWATCH_STORES (lib/console/config.ts). Kept on globalThis so dev-mode hot
 * reloads reuse the same pools instead of leaking connections.
 *
 * Migrating and sweeping are duties of their own, each switched on by
 * configuration (both on in the demo and the browser tests):
 * - LEASEWATCH_MIGRATE=1: Postgres stores are migrated lazily, on their first use.
 *   Off, the console needs no right to change the schema (a migration is run by
 *   `npm run migrate` or the workers' `store.migrate()`).
 * - LEASEWATCH_SWEEP=1: every store is swept every SWEEP_INTERVAL_MS so leases whose
 *   TTL ran out get their `expired` event even when no worker touches the resource
 *   again. Off, that is the workers' job (any `sweep()`), or `npm run sweeper`'s.
 */
import { z } from "zod";
import type {
  AcquireInput,
  AcquireResult,
  EventQuery,
  EventRetention,
  FencingRejectionInput,
  HeldAtQuery,
  HeldAtResult,
  ForceReleaseInput,
  ForceReleaseResult,
  Lease,
  LeaseEvent,
  LeasePage,
  LeaseStore,
  ListQuery,
  LostInput,
  Page,
  ReleaseInput,
  ReleaseResult,
  RenewInput,
  RenewResult,
  GroupTotals,
  GroupTotalsQuery,
  LifetimeTotals,
  RenewalSlackQuery,
  RenewalSlackRow,
  StatsBucket,
  StatsQuery,
  StoreHealth,
  StoreKind,
  TtlAdviceQuery,
  TtlAdviceReport,
  ReadSignal,
} from "@/lib/lease/types";
import { DEFAULT_STATEMENT_TIMEOUT_MS } from "@/lib/lease/postgres/bounded-read";
import { PostgresLeaseStore } from "@/lib/lease/postgres/store";
import { PROJECTION_INTERVAL_MS } from "@/lib/lease/redis/projector";
import { RedisLeaseStore } from "@/lib/lease/redis/store";
import { DEFAULT_READ_KEY_BUDGET } from "@/lib/lease/redis/read-budget";
import { parseStoresConfig, type TStoreConfig } from "./config";

export const SWEEP_INTERVAL_MS = 5_000;

export interface StoreEntry {
  config: TStoreConfig;
  store: LeaseStore;
}

interface Registry {
  entries: StoreEntry[];
  byName: Map<string, StoreEntry>;
  /** Null unless LEASEWATCH_SWEEP=1. */
  sweepTimer: ReturnType<typeof setInterval> | null;
  /** Null when no store has projected read models. */
  projectTimer: ReturnType<typeof setInterval> | null;
}

/** A store whose read models are derived from its events off the hot path (Redis: lib/lease/redis/projector.ts). */
interface ProjectingStore {
  project(): Promise<unknown>;
}

function isProjectingStore(store: LeaseStore): store is LeaseStore & ProjectingStore {
  return typeof (store as Partial<ProjectingStore>).project === "function";
}

/**
 * Projects every store that has read models every PROJECTION_INTERVAL_MS, so they lag their
 * events by about that at most. Never throws (a store that is down shows on the health bar);
 * each store has its own in-flight flag. The timer never keeps a process alive on its own.
 */
export function startProjecting(entries: readonly StoreEntry[]): ReturnType<typeof setInterval> | null {
  const projecting = entries.filter((e) => isProjectingStore(e.store));
  if (projecting.length === 0) return null;
  const busy = new Set<string>();
  const timer = setInterval(() => {
    for (const entry of projecting) {
      if (busy.has(entry.config.name)) continue;
      busy.add(entry.config.name);
      void (entry.store as LeaseStore & ProjectingStore)
        .project()
        .catch(() => undefined)
        .finally(() => busy.delete(entry.config.name));
    }
  }, PROJECTION_INTERVAL_MS);
  timer.unref();
  return timer;
}

/** The console migrates its Postgres stores itself (LEASEWATCH_MIGRATE=1). */
export function isMigrateEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.LEASEWATCH_MIGRATE === "1";
}
/** The console sweeps its stores itself (LEASEWATCH_SWEEP=1). */
export function isSweepEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.LEASEWATCH_SWEEP === "1";
}

const GLOBAL_KEY = Symbol.for("leasewatch.console.registry");
type GlobalWithRegistry = typeof globalThis & { [GLOBAL_KEY]?: Registry };

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A configured store that could not be constructed (bad options, driver missing).
 * It reports itself down with the reason, so one broken store shows on the
 * health bar instead of taking every page down.
 */
class UnavailableStore implements LeaseStore {
  readonly name: string;
  readonly kind: StoreKind;
  private readonly reason: string;
  constructor(config: TStoreConfig, reason: string) {
    this.name = config.name;
    this.kind = config.kind;
    this.reason = reason;
  }
  private fail(): never {
    throw new Error(`store "${this.name}" is unavailable: ${this.reason}`);
  }
  async acquire(): Promise<AcquireResult> { return this.fail(); }
  async renew(): Promise<RenewResult> { return this.fail(); }
  async release(): Promise<ReleaseResult> { return this.fail(); }
  async forceRelease(): Promise<ForceReleaseResult> { return this.fail(); }
  async get(): Promise<Lease | null> { return this.fail(); }
  async list(): Promise<LeasePage> { return this.fail(); }
  async events(): Promise<Page<LeaseEvent>> { return this.fail(); }
  async heldAt(): Promise<HeldAtResult> { return this.fail(); }
  async sweep(): Promise<{ expired: number }> { return this.fail(); }
  async reportFencingRejection(): Promise<LeaseEvent> { return this.fail(); }
  async reportLost(): Promise<LeaseEvent> { return this.fail(); }
  async stats(): Promise<StatsBucket[]> { return this.fail(); }
  async countActive(): Promise<number> { return this.fail(); }
  async lifetimeTotals(): Promise<LifetimeTotals> { return this.fail(); }
  async groupTotals(): Promise<GroupTotals> { return this.fail(); }
  async renewalSlack(): Promise<RenewalSlackRow[]> { return this.fail(); }
  async ttlAdvice(): Promise<TtlAdviceReport> { return this.fail(); }
  async health(): Promise<StoreHealth> {
    return { store: this.name, kind: this.kind, ok: false, error: this.reason };
  }
  async close(): Promise<void> {}
}

type MigratableStore = LeaseStore & { migrate(): Promise<unknown> };

/**
 * Runs the store's `migrate()` once before its first real operation. A failed
 * migration (database down) is retried on the next call rather than remembered,
 * so the store recovers by itself when the database comes back.
 */
class MigratingStore implements LeaseStore {
  readonly name: string;
  readonly kind: StoreKind;
  private readonly inner: MigratableStore;
  private ready: Promise<void> | null = null;
  constructor(inner: MigratableStore) {
    this.inner = inner;
    this.name = inner.name;
    this.kind = inner.kind;
  }
  private ensureMigrated(): Promise<void> {
    this.ready ??= this.inner.migrate().then(
      () => undefined,
      (error: unknown) => {
        this.ready = null;
        throw error;
      },
    );
    return this.ready;
  }
  private async run<T>(op: (store: LeaseStore) => Promise<T>): Promise<T> {
    await this.ensureMigrated();
    return op(this.inner);
  }
  acquire(input: AcquireInput) { return this.run((s) => s.acquire(input)); }
  renew(input: RenewInput) { return this.run((s) => s.renew(input)); }
  release(input: ReleaseInput) { return this.run((s) => s.release(input)); }
  forceRelease(input: ForceReleaseInput) { return this.run((s) => s.forceRelease(input)); }
  get(resource: string, options?: ReadSignal) { return this.run((s) => s.get(resource, options)); }
  list(query?: ListQuery) { return this.run((s) => s.list(query)); }
  events(query?: EventQuery) { return this.run((s) => s.events(query)); }
  heldAt(query: HeldAtQuery) { return this.run((s) => s.heldAt(query)); }
  eventRetention(options?: ReadSignal): Promise<EventRetention> {
    return this.run((s) => s.eventRetention?.(options) ?? Promise.resolve({ retentionDays: null, retainedFrom: null }));
  }
  sweep() { return this.run((s) => s.sweep()); }
  reportFencingRejection(input: FencingRejectionInput) { return this.run((s) => s.reportFencingRejection(input)); }
  reportLost(input: LostInput) { return this.run((s) => s.reportLost(input)); }
  stats(query: StatsQuery) { return this.run((s) => s.stats(query)); }
  countActive(options?: ReadSignal) { return this.run((s) => s.countActive(options)); }
  lifetimeTotals(options?: ReadSignal) { return this.run((s) => s.lifetimeTotals(options)); }
  groupTotals(query: GroupTotalsQuery) { return this.run((s) => s.groupTotals(query)); }
  renewalSlack(query: RenewalSlackQuery) { return this.run((s) => s.renewalSlack(query)); }
  ttlAdvice(query?: TtlAdviceQuery) { return this.run((s) => s.ttlAdvice(query)); }
  // Health is about reachability; it must answer (down) even when migration cannot run.
  health() { return this.inner.health(); }
  close() { return this.inner.close(); }
}

const ZStatementTimeoutMs = z.coerce
  .number({ error: "LEASEWATCH_STATEMENT_TIMEOUT_MS must be a number of milliseconds" })
  .int({ error: "LEASEWATCH_STATEMENT_TIMEOUT_MS must be a whole number of milliseconds" })
  .min(100, { error: "LEASEWATCH_STATEMENT_TIMEOUT_MS must be at least 100" })
  .max(60_000, { error: "LEASEWATCH_STATEMENT_TIMEOUT_MS must be at most 60000" });

/** How long Postgres lets one console read run (LEASEWATCH_STATEMENT_TIMEOUT_MS, default 2000). */
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
  const raw = env.LEASEWATCH_EVENT_RETENTION_DAYS;
  if (raw === undefined || raw === "") return 0;
  const parsed = ZEventRetentionDays.safeParse(raw);
  if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? "LEASEWATCH_EVENT_RETENTION_DAYS is invalid");
  return parsed.data;
}

export function readStatementTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.LEASEWATCH_STATEMENT_TIMEOUT_MS;
  if (raw === undefined || raw === "") return DEFAULT_STATEMENT_TIMEOUT_MS;
  const parsed = ZStatementTimeoutMs.safeParse(raw);
  if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? "LEASEWATCH_STATEMENT_TIMEOUT_MS is invalid");
  return parsed.data;
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
  const raw = env.LEASEWATCH_REDIS_READ_KEY_BUDGET;
  if (raw === undefined || raw === "") return DEFAULT_READ_KEY_BUDGET;
  const parsed = ZReadKeyBudget.safeParse(raw);
  if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? "LEASEWATCH_REDIS_READ_KEY_BUDGET is invalid");
  return parsed.data;
}

/**
 * Builds one store from its validated config; never throws (a failure becomes an
 * UnavailableStore). `migrate`: Postgres stores migrate themselves on first use.
 */
export function createStore(config: TStoreConfig, options: { migrate: boolean } = { migrate: isMigrateEnabled() }): LeaseStore {
  try {
    return constructStore(config, options.migrate);
  } catch (error) {
    return new UnavailableStore(config, errorText(error));
  }
}

function constructStore(config: TStoreConfig, migrate: boolean): LeaseStore {
  switch (config.kind) {
    case "postgres": {
      // TLS follows the URL: `?sslmode=require` / `verify-full` (with sslrootcert=…) are read by pg.
      const store = new PostgresLeaseStore({
        name: config.name,
        connectionString: config.url,
        schema: config.schema,
        statementTimeoutMs: readStatementTimeoutMs(),
        eventRetentionDays: readEventRetentionDays(),
      });
      return migrate ? new MigratingStore(store) : store;
    }
    case "redis":
      // TLS follows the URL: `rediss://` connects over TLS (ioredis).
      return new RedisLeaseStore({
        name: config.name,
        url: config.url,
        namespace: config.namespace,
        readKeyBudget: readRedisKeyBudget(),
        ...readRedisEventRetention(),
      });
  }
}

/** Exported for tests of the wrapper; the registry applies it to every postgres store. */
export function wrapWithLazyMigration(store: MigratableStore): LeaseStore {
  return new MigratingStore(store);
}

// Last sweep outcome per store, so a store that stays down is logged once, not every 5 s.
const lastSweepFailed = new Map<string, boolean>();

export type SweepOutcome = { store: string; expired: number; error?: undefined } | { store: string; error: string; expired?: undefined };

/** Sweeps one store; never throws. A failure is logged when it starts and when it ends. */
export async function sweepStore(entry: StoreEntry): Promise<SweepOutcome> {
  const name = entry.config.name;
  const hadFailed = lastSweepFailed.get(name) ?? false;
  try {
    const { expired } = await entry.store.sweep();
    if (hadFailed) console.info(`[leasewatch] sweep of store "${name}" works again`);
    lastSweepFailed.set(name, false);
    return { store: name, expired };
  } catch (error) {
    const message = errorText(error);
    if (!hadFailed) console.error(`[leasewatch] sweep of store "${name}" failed: ${message}`);
    lastSweepFailed.set(name, true);
    return { store: name, error: message };
  }
}

/** One sweep over every store, in parallel; a failing store does not stop the others. */
export async function sweepAllStores(entries: readonly StoreEntry[]): Promise<SweepOutcome[]> {
  return Promise.all(entries.map(sweepStore));
}

function buildRegistry(): Registry {
  // Throws ConfigError with a message that says what to fix; nothing is cached on failure.
  const configs = parseStoresConfig();
  const entries: StoreEntry[] = configs.map((config) => ({ config, store: createStore(config) }));
  const byName = new Map(entries.map((e) => [e.config.name, e]));
  const projectTimer = startProjecting(entries);
  if (!isSweepEnabled()) return { entries, byName, sweepTimer: null, projectTimer };
  // Each store has its own in-flight flag: a store that hangs until its command
  // timeout neither piles up overlapping sweeps nor delays the other stores' sweeps.
  const sweeping = new Set<string>();
  const sweepTimer = setInterval(() => {
    for (const entry of entries) {
      if (sweeping.has(entry.config.name)) continue;
      sweeping.add(entry.config.name);
      void sweepStore(entry).finally(() => sweeping.delete(entry.config.name));
    }
  }, SWEEP_INTERVAL_MS);
  // The sweeper must never keep a process (build worker, test, script) alive on its own.
  sweepTimer.unref();
  return { entries, byName, sweepTimer, projectTimer };
}

function getRegistry(): Registry {
  const g = globalThis as GlobalWithRegistry;
  g[GLOBAL_KEY] ??= buildRegistry();
  return g[GLOBAL_KEY];
}

/** Every configured store with its config, in configuration order. Throws ConfigError on a bad LEASEWATCH_STORES. */
export function getStoreEntries(): StoreEntry[] {
  return [...getRegistry().entries];
}

/** The store called `name`, or undefined when no such store is configured. */
export function getStore(name: string): LeaseStore | undefined {
  return getRegistry().byName.get(name)?.store;
}

export function getStoreNames(): string[] {
  return getRegistry().entries.map((e) => e.config.name);
}
