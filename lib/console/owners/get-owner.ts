/**
 * Server-only read model of `/owners/[owner]`: what one owner holds now in every
 * store, its latest events, its expiries, renewal failures and lost leases, when
 * it was last seen — and from those, plainly, whether it is alive.
 *
 * Bounded like every read: leases through the stores' owner-filtered list (one
 * page), events through their owner filter within the window (Postgres serves it
 * from lease_events (owner, at); Redis reads that window of its streams).
 */
import type { LeaseEvent, LeaseStore } from "@leasewatch/lease";
import { MAX_LIST_LIMIT } from "@leasewatch/lease/internal";
import { fanOutStores, resolveEntries, selectEntries, type ReadOptions } from "@/lib/console/shared/fan-out";
import { ALIVE_SEEN_MS, type OwnerVerdict, type OwnerView } from "./owner-types";
import { parseOwnerParams, type OwnerParams, type SearchParamsInput } from "@/lib/console/shared/params";
import { reshapeEvent, reshapeLease } from "@/lib/console/shared/reshape";
import type { EventView, LeaseView, ReadResult } from "@/lib/console/shared/views";

export const OWNER_HELD_LIMIT = 100;
export const OWNER_EVENTS_LIMIT = 25;
export const TROUBLE_LIMIT = 50;
/**
 * Trouble events counted per store at most (newest first), as many as the counts above the
 * lists read: past that the page says its counts are a lower bound and what they cover.
 */
export const TROUBLE_COUNT_LIMIT = 5_000;
const TROUBLE_KINDS = ["expired", "renew_failed", "lost"] as const;
type TroubleKind = (typeof TROUBLE_KINDS)[number];

interface StoreRead {
  held: LeaseView[];
  hasMoreHeld: boolean;
  storeNow: Date;
  events: LeaseEvent[];
  troubles: LeaseEvent[];
  troubleCounts: Record<TroubleKind, number>;
  /** The count stopped before the window's end: at TROUBLE_COUNT_LIMIT, or at the store's read budget. */
  countCut: "limit" | "read_budget" | null;
}

/**
 * The owner's trouble events in the window, counted page by page: the first page is the list
 * the page shows (TROUBLE_LIMIT), the rest are only counted, up to TROUBLE_COUNT_LIMIT.
 */
async function countTroubles(
  store: LeaseStore,
  window: { owner: string; from: Date; to: Date; signal: AbortSignal },
): Promise<Pick<StoreRead, "troubles" | "troubleCounts" | "countCut">> {
  const counts: Record<TroubleKind, number> = { expired: 0, renew_failed: 0, lost: 0 };
  const troubles: LeaseEvent[] = [];
  let seen = 0;
  let cursor: string | undefined;
  let limit = TROUBLE_LIMIT;
  for (;;) {
    const page = await store.events({ ...window, kinds: [...TROUBLE_KINDS], limit, ...(cursor ? { cursor } : {}) });
    if (troubles.length === 0) troubles.push(...page.items);
    for (const e of page.items) if (e.kind in counts) counts[e.kind as TroubleKind] += 1;
    seen += page.items.length;
    if (page.partial) return { troubles, troubleCounts: counts, countCut: "read_budget" };
    cursor = page.nextCursor;
    if (!cursor) return { troubles, troubleCounts: counts, countCut: null };
    if (seen >= TROUBLE_COUNT_LIMIT) return { troubles, troubleCounts: counts, countCut: "limit" };
    limit = Math.min(MAX_LIST_LIMIT, TROUBLE_COUNT_LIMIT - seen);
  }
}

async function readOwner(store: LeaseStore, params: OwnerParams, signal: AbortSignal): Promise<StoreRead> {
  const window = { owner: params.owner, from: params.range.from, to: params.range.to, signal };
  const [page, events, troubles] = await Promise.all([
    store.list({ owner: params.owner, limit: OWNER_HELD_LIMIT, signal }),
    store.events({ ...window, limit: OWNER_EVENTS_LIMIT }),
    countTroubles(store, window),
  ]);
  return {
    held: page.items.map((lease) => reshapeLease(lease, store.kind, page.now)),
    // A store that stopped at its read budget may hold more of this owner's leases.
    hasMoreHeld: page.nextCursor !== undefined || page.partial !== undefined,
    storeNow: page.now,
    events: events.items,
    ...troubles,
  };
}

export async function getOwner(params: OwnerParams, options: ReadOptions): Promise<ReadResult<OwnerView>> {
  const all = await resolveEntries(options);
  const selected = selectEntries(all, params.store);
  if (!selected.ok) return selected;
  const outcomes = await fanOutStores(selected.entries, (store, signal) => readOwner(store, params, signal), options.timeoutMs, options.signal);
  const reads = outcomes.flatMap((o) => (o.ok ? [{ store: o.store, ...o.data }] : []));

  const held = reads.flatMap((r) => r.held).sort((a, b) => a.expiresInMs - b.expiresInMs || a.resource.localeCompare(b.resource));
  const byTime = (a: EventView, b: EventView) => b.at.localeCompare(a.at) || a.store.localeCompare(b.store);
  const events = reads.flatMap((r) => r.events.map(reshapeEvent)).sort(byTime).slice(0, OWNER_EVENTS_LIMIT);
  const troubles = reads.flatMap((r) => r.troubles.map(reshapeEvent)).sort(byTime);

  // Last seen: the latest event or renewal, measured on the clock of the store that saw it.
  let lastSeen: { agoMs: number; at: string; what: string } | null = null;
  for (const r of reads) {
    const candidates: Array<{ atMs: number; what: string }> = [];
    // Troubles come from their own (cheap) read and may be newer than the events page when that was cut short.
    for (const latest of [r.events[0], r.troubles[0]]) {
      if (latest) candidates.push({ atMs: latest.at.getTime(), what: `${latest.kind.replace("_", " ")} on ${latest.resource} in ${r.store}` });
    }
    for (const lease of r.held) {
      if (lease.renewals > 0) candidates.push({ atMs: Date.parse(lease.renewedAt), what: `renewed ${lease.resource} in ${r.store}` });
    }
    for (const c of candidates) {
      const agoMs = Math.max(0, r.storeNow.getTime() - c.atMs);
      if (lastSeen === null || agoMs < lastSeen.agoMs) lastSeen = { agoMs, at: new Date(c.atMs).toISOString(), what: c.what };
    }
  }

  return {
    ok: true,
    view: {
      owner: params.owner,
      readAt: new Date(options.nowMs ?? Date.now()).toISOString(),
      from: params.range.from.toISOString(),
      to: params.range.to.toISOString(),
      storeNames: all.map((e) => e.store.name),
      verdict: judgeOwner(held, lastSeen?.agoMs ?? null),
      lastSeenAt: lastSeen?.at ?? null,
      lastSeenAgoMs: lastSeen?.agoMs ?? null,
      lastSeenWhat: lastSeen?.what ?? null,
      held,
      events,
      troubles,
      troubleCounts: {
        expired: sumOf(reads, "expired"),
        renew_failed: sumOf(reads, "renew_failed"),
        lost: sumOf(reads, "lost"),
      },
      troubleCountCover: coverOf(reads),
      troubleListLimit: TROUBLE_LIMIT,
      stores: outcomes.map((o) => (o.ok ? { ...o, data: { held: o.data.held.length, hasMoreHeld: o.data.hasMoreHeld } } : o)),
    },
  };
}

function sumOf(reads: readonly StoreRead[], kind: TroubleKind): number {
  return reads.reduce((n, r) => n + r.troubleCounts[kind], 0);
}

/** What the counts cover when they are not the whole window: the first cut store's reason. */
function coverOf(reads: ReadonlyArray<StoreRead & { store: string }>): OwnerView["troubleCountCover"] {
  const cut = reads.find((r) => r.countCut !== null);
  if (!cut) return null;
  return cut.countCut === "limit"
    ? { reason: "limit", limit: TROUBLE_COUNT_LIMIT, store: cut.store }
    : { reason: "read_budget", limit: null, store: cut.store };
}

/** Holding a lease whose renewals are current is alive; the rest follows from when it was last seen. */
export function judgeOwner(held: readonly Pick<LeaseView, "state">[], lastSeenAgoMs: number | null): OwnerVerdict {
  if (held.some((l) => l.state === "held" || l.state === "expiring")) return "alive";
  if (held.length > 0) return "stalled";
  if (lastSeenAgoMs === null) return "unseen";
  return lastSeenAgoMs <= ALIVE_SEEN_MS ? "idle" : "gone";
}

/** `/owners/[owner]` and `/api/owners/[owner]`. */
export async function getOwnerFromRoute(segment: string, search: SearchParamsInput, options: ReadOptions): Promise<ReadResult<OwnerView>> {
  const parsed = parseOwnerParams(segment, search, options.nowMs);
  return parsed.ok ? getOwner(parsed.params, options) : parsed;
}
