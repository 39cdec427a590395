/**
 * Server-only read model behind bulk release: every lease under a prefix that is
 * lapsed (expired by the store's clock, not yet swept) or overdue (not renewed
 * for two thirds of its TTL), read from the stores with their own state filters.
 * The bulk dialog lists these, and the bulk route reads them again to check that
 * every lease it is asked to end is still one of them.
 */
import type { LeaseState } from "@leasewatch/lease";
import { fanOutStores, resolveEntries, selectEntries, STORE_TIMEOUT_MS, withDeadline, type ReadOptions } from "@/lib/console/shared/fan-out";
import { reshapeLease } from "@/lib/console/shared/reshape";
import type { LeaseView, ReadResult, StoreOutcome } from "@/lib/console/shared/views";

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

/**
 * The lease id holding `resource` in store `storeName` now, or null when it is free. Rejects
 * when the store cannot say (unknown store, error, timeout, abort): "no answer" is never "free".
 */
export async function readCurrentLeaseId(storeName: string, resource: string, options: ReadOptions): Promise<string | null> {
  const selected = selectEntries(await resolveEntries(options), storeName);
  if (!selected.ok) throw new Error(selected.problem.message);
  const store = selected.entries[0]!.store;
  options.signal?.throwIfAborted();
  const lease = await withDeadline((signal) => store.get(resource, { signal }), options.timeoutMs ?? STORE_TIMEOUT_MS, `store "${storeName}"`, options.signal);
  // A store that does not stop on abort may still answer; an aborted request takes nothing from it.
  options.signal?.throwIfAborted();
  return lease?.leaseId ?? null;
}

/**
 * Where a lease asked for in a bulk release stands now. "candidate": still lapsed or overdue, may
 * be ended. "renewed": the same lease holds it and is healthy again. "other_lease": another lease
 * (or none) holds it; the id-checked force-release answers that it changed. "unconfirmed": a read
 * failed (error, timeout, abort), so nothing is known and the lease must be left alone.
 */
export type ReleaseCandidateState = "candidate" | "renewed" | "other_lease" | "unconfirmed";

export interface ReleaseCandidateRef {
  store: string;
  resource: string;
  leaseId: string;
}

/** Reads the candidates under `prefix` again, once, and returns the check of one lease against them. */
export async function checkReleaseCandidates(prefix: string, options: ReadOptions): Promise<(lease: ReleaseCandidateRef) => Promise<ReleaseCandidateState>> {
  const keyOf = (l: ReleaseCandidateRef) => `${l.store}\u0000${l.resource}\u0000${l.leaseId}`;
  const listed = await listReleaseCandidates({ prefix }, options).catch(() => null);
  const candidates = new Set(listed?.ok ? listed.view.items.map(keyOf) : []);
  const unread = new Set(listed?.ok ? listed.view.stores.filter((s) => !s.ok).map((s) => s.store) : []);
  return async (lease) => {
    if (options.signal?.aborted || !listed?.ok || unread.has(lease.store)) return "unconfirmed";
    if (candidates.has(keyOf(lease))) return "candidate";
    try {
      return (await readCurrentLeaseId(lease.store, lease.resource, options)) === lease.leaseId ? "renewed" : "other_lease";
    } catch {
      return "unconfirmed";
    }
  };
}
