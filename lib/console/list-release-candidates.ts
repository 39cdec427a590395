/**
 * Server-only read model behind bulk release: every lease under a prefix that is
 * lapsed (expired by the store's clock, not yet swept) or overdue (not renewed
 * for two thirds of its TTL), read from the stores with their own state filters.
 * The bulk dialog lists these, and the bulk route reads them again to check that
 * every lease it is asked to end is still one of them.
 */
import type { LeaseState } from "@/lib/lease/types";
import { fanOutStores, resolveEntries, selectEntries, STORE_TIMEOUT_MS, withTimeout, type ReadOptions } from "./fan-out";
import { reshapeLease } from "./reshape";
import type { LeaseView, ReadResult, StoreOutcome } from "./views";

/** Bulk release handles at most this many leases at once (the dialog lists them all). */
export const MAX_RELEASE_CANDIDATES = 100;
const CANDIDATE_STATES: readonly LeaseState[] = ["lapsed", "overdue"];

export interface ReleaseCandidatesView {
  readAt: string;
  prefix: string;
  /** Oldest expiry first, at most MAX_RELEASE_CANDIDATES. */
  items: LeaseView[];
  /** More matched than the dialog may list. */
  hasMore: boolean;
  stores: StoreOutcome<{ count: number }>[];
}

export async function listReleaseCandidates(
  query: { prefix: string; store?: string },
  options: ReadOptions,
): Promise<ReadResult<ReleaseCandidatesView>> {
  if (!query.prefix) return { ok: false, problem: { param: "prefix", message: "Bulk release needs a prefix: it never applies to every lease." } };
  const selected = selectEntries(await resolveEntries(options), query.store);
  if (!selected.ok) return selected;
  const outcomes = await fanOutStores(
    selected.entries,
    async (store) => {
      const pages = await Promise.all(
        CANDIDATE_STATES.map((state) => store.list({ prefix: query.prefix, state, sort: "expires", limit: MAX_RELEASE_CANDIDATES + 1 })),
      );
      return pages.flatMap((page) => page.items.map((lease) => reshapeLease(lease, store.kind, page.now)));
    },
    options.timeoutMs,
  );
  const all = outcomes
    .flatMap((o) => (o.ok ? o.data : []))
    .filter((lease) => lease.state === "lapsed" || lease.state === "overdue")
    .sort((a, b) => a.expiresAt.localeCompare(b.expiresAt) || a.store.localeCompare(b.store) || a.resource.localeCompare(b.resource));
  return {
    ok: true,
    view: {
      readAt: new Date(options.nowMs ?? Date.now()).toISOString(),
      prefix: query.prefix,
      items: all.slice(0, MAX_RELEASE_CANDIDATES),
      hasMore: all.length > MAX_RELEASE_CANDIDATES,
      stores: outcomes.map((o) => (o.ok ? { ...o, data: { count: o.data.length } } : o)),
    },
  };
}

/** The lease id holding `resource` in store `storeName` now, or null (free, or the store is unknown). */
export async function readCurrentLeaseId(storeName: string, resource: string, options: ReadOptions): Promise<string | null> {
  const selected = selectEntries(await resolveEntries(options), storeName);
  if (!selected.ok) return null;
  const lease = await withTimeout(selected.entries[0]!.store.get(resource), options.timeoutMs ?? STORE_TIMEOUT_MS, `store "${storeName}"`).catch(() => null);
  return lease?.leaseId ?? null;
}
