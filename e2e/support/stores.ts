/**
 * The e2e stack's stores, opened through the lease library with the same
 * configuration the console and the workload use (the stack hands it out at
 * GET /stores on the control endpoint). Specs write known data and count with
 * them; the stack uses them to tell when the workload has produced data.
 */
import type { TStoreConfig } from "../../lib/server/store-config";
import { type LeaseEventKind, type LeaseStore, PostgresLeaseStore, RedisLeaseStore } from "@leasewatch/lease";

/** A store client for `config` (the stack has already migrated Postgres). Close it when done. */
export function openStore(config: TStoreConfig): LeaseStore {
  return config.kind === "postgres"
    ? new PostgresLeaseStore({ name: config.name, connectionString: config.url, schema: config.schema })
    : new RedisLeaseStore({ name: config.name, url: config.url, namespace: config.namespace });
}

export interface EventKindsReady {
  isReady: boolean;
  waitedMs: number;
  /** `store: kind` pairs with no event yet (empty when ready). */
  missing: string[];
}

const CHECK_EVERY_MS = 250;

/**
 * Resolves as soon as every store has at least one event of every kind, or with
 * `isReady: false` after `timeoutMs`. Each check is one `limit: 1` read per store
 * and kind still missing, so waiting costs the stores next to nothing.
 */
export async function waitForEventKinds(
  stores: readonly LeaseStore[],
  kinds: readonly LeaseEventKind[],
  timeoutMs: number,
): Promise<EventKindsReady> {
  const startedAt = performance.now();
  let missing = stores.flatMap((store) => kinds.map((kind) => ({ store, kind })));
  for (;;) {
    const found = await Promise.all(
      missing.map(({ store, kind }) =>
        store.events({ kinds: [kind], limit: 1 }).then(
          (page) => page.items.length > 0,
          () => false,
        ),
      ),
    );
    missing = missing.filter((_, i) => !found[i]);
    const waitedMs = Math.round(performance.now() - startedAt);
    if (missing.length === 0 || waitedMs >= timeoutMs) {
      return { isReady: missing.length === 0, waitedMs, missing: missing.map(({ store, kind }) => `${store.name}: ${kind}`) };
    }
    await new Promise((resolve) => setTimeout(resolve, CHECK_EVERY_MS));
  }
}
