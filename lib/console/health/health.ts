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

let cache: { at: number; result: Promise<StoreHealth[]> } | undefined;

/** Health of every configured store (cached ~2 s). Throws ConfigError when LEASEWATCH_STORES is invalid. */
export async function getStoresHealth(): Promise<StoreHealth[]> {
  const entries = getStoreEntries();
  const now = Date.now();
  if (!cache || now - cache.at > HEALTH_CACHE_MS) {
    cache = { at: now, result: checkStoresHealth(entries) };
  }
  return cache.result;
}
