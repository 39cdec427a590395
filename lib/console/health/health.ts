/**
 * Server-only: health of every configured store, for the header, the store-down
 * banner and /api/health. Each check is bounded by HEALTH_TIMEOUT_MS so a store
 * that hangs (not just refuses) still reports "down" quickly, and results are
 * shared for HEALTH_CACHE_MS so many pages and pollers cost one check per store.
 */
import type { StoreHealth } from "@leasewatch/lease";
import { toPublicStoreError } from "@/lib/server/public-error";
import { getStoreEntries, type StoreEntry } from "@/lib/server/store-registry";

export const HEALTH_TIMEOUT_MS = 1_500;
export const HEALTH_CACHE_MS = 2_000;

/** One store's health; never throws, never takes longer than `timeoutMs`. */
export async function checkStoreHealth(entry: StoreEntry, timeoutMs = HEALTH_TIMEOUT_MS): Promise<StoreHealth> {
  const { name, kind } = entry.config;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<StoreHealth>((resolve) => {
    timer = setTimeout(() => resolve({ store: name, kind, ok: false, error: `no answer within ${timeoutMs} ms` }), timeoutMs);
  });
  const check = entry.store.health().then(
    (health): StoreHealth =>
      health.ok ? { ...health, store: name, kind } : { ...health, store: name, kind, error: toPublicStoreError(health.error ?? "unknown", name) },
    // The browser gets a short reason and a reference; the driver's message goes to the server log.
    (error: unknown): StoreHealth => ({ store: name, kind, ok: false, error: toPublicStoreError(error, name) }),
  );
  try {
    return await Promise.race([check, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Health of the given stores, checked in parallel, in their configured order. */
export async function checkStoresHealth(entries: readonly StoreEntry[], timeoutMs = HEALTH_TIMEOUT_MS): Promise<StoreHealth[]> {
  return Promise.all(entries.map((entry) => checkStoreHealth(entry, timeoutMs)));
}

/** One health check of every store: when it started, and what it found. */
export interface HealthSnapshot {
  checkedAt: Date;
  stores: StoreHealth[];
}

export interface HealthCache {
  /** A check at most `cacheMs` old, awaited (what /api/health answers). */
  current(): Promise<HealthSnapshot>;
  /**
   * For the page shell: the current check if it answers within `waitMs`, else the last finished one
   * if it is at most `maxAgeMs` old (with its own time, which the browser's poll goes by). A page
   * whose reads keep the store connections busy would otherwise hold its whole frame, skeleton
   * included, until a ping queued behind those reads came back.
   */
  forShell(waitMs?: number, maxAgeMs?: number): Promise<HealthSnapshot>;
}

/** How long the shell waits for a new check before it takes the last finished one. */
export const SHELL_HEALTH_WAIT_MS = 50;
/** The oldest finished check the shell shows rather than wait (the browser polls every 5 s anyway). */
export const SHELL_HEALTH_MAX_AGE_MS = 30_000;

export function createHealthCache(check: () => Promise<StoreHealth[]>, { cacheMs = HEALTH_CACHE_MS, now = Date.now } = {}): HealthCache {
  let running: { at: number; result: Promise<HealthSnapshot> } | undefined;
  let finished: HealthSnapshot | undefined;
  const current = (): Promise<HealthSnapshot> => {
    const at = now();
    if (!running || at - running.at > cacheMs) {
      const result = check().then((stores): HealthSnapshot => ({ checkedAt: new Date(at), stores }));
      running = { at, result };
      result.then(
        (snapshot) => {
          if (!finished || finished.checkedAt < snapshot.checkedAt) finished = snapshot;
        },
        () => {}, // the caller of current() gets the failure
      );
    }
    return running.result;
  };
  return {
    current,
    forShell(waitMs = SHELL_HEALTH_WAIT_MS, maxAgeMs = SHELL_HEALTH_MAX_AGE_MS) {
      const fresh = current();
      const fallback = finished;
      if (!fallback || now() - fallback.checkedAt.getTime() > maxAgeMs) return fresh;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = new Promise<HealthSnapshot>((resolve) => {
        timer = setTimeout(() => resolve(fallback), waitMs);
      });
      return Promise.race([fresh, waited]).finally(() => clearTimeout(timer));
    },
  };
}

let cache: HealthCache | undefined;

/** Health of every configured store, shared ~2 s between callers. Throws ConfigError when LEASEWATCH_STORES is invalid. */
export function getStoresHealth(): HealthCache {
  getStoreEntries();
  cache ??= createHealthCache(() => checkStoresHealth(getStoreEntries()));
  return cache;
}
