/**
 * Server-only: the console's store instances, built once per process from
 * LEASEWATCH_STORES (lib/server/store-config.ts). Kept on globalThis so dev-mode hot
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
import type { LeaseStore } from "@leasewatch/lease";
import { PROJECTION_INTERVAL_MS } from "@leasewatch/lease/internal";
import { parseStoresConfig, type TStoreConfig } from "./store-config";
import { createStore } from "./store-kinds";
import { runInBackgroundRun } from "@/lib/log/context";
import { getLogger } from "@/lib/log/logger";

// Building one store lives with the store kinds; these are re-exported for the registry's callers.
export { createStore, isMigrateEnabled, wrapWithLazyMigration } from "./store-kinds";

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

/** The console sweeps its stores itself (LEASEWATCH_SWEEP=1). */
export function isSweepEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.LEASEWATCH_SWEEP === "1";
}

const GLOBAL_KEY = Symbol.for("leasewatch.console.registry");
type GlobalWithRegistry = typeof globalThis & { [GLOBAL_KEY]?: Registry };

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
    if (hadFailed) getLogger("sweep").info({ store: name }, "sweep works again");
    lastSweepFailed.set(name, false);
    return { store: name, expired };
  } catch (error) {
    const message = errorText(error);
    if (!hadFailed) getLogger("sweep").error({ store: name, error: message }, "sweep failed");
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
      // A run of its own: the timer was made inside whichever request built the registry.
      void runInBackgroundRun(() => sweepStore(entry)).finally(() => sweeping.delete(entry.config.name));
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

/** Stops the sweep and projection timers and closes every store's pool (the console's shutdown). */
export async function closeStoreRegistry(): Promise<void> {
  const g = globalThis as GlobalWithRegistry;
  const registry = g[GLOBAL_KEY];
  delete g[GLOBAL_KEY];
  if (!registry) return;
  if (registry.sweepTimer) clearInterval(registry.sweepTimer);
  if (registry.projectTimer) clearInterval(registry.projectTimer);
  await Promise.allSettled(registry.entries.map((e) => e.store.close()));
}
