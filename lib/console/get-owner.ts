/**
 * Server-only read model of `/owners/[owner]`: what one owner holds now in every
 * store, its latest events, its expiries, renewal failures and lost leases, when
 * it was last seen — and from those, plainly, whether it is alive.
 *
 * Bounded like every read: leases through the stores' owner-filtered list (one
 * page), events through their owner filter within the window (Postgres serves it
 * from lease_events (owner, at); Redis reads that window of its streams).
 */
import type { LeaseEvent, LeaseStore } from "@/lib/lease/types";
import { fanOutStores, resolveEntries, selectEntries, type ReadOptions } from "./fan-out";
import { ALIVE_SEEN_MS, type OwnerVerdict, type OwnerView } from "./owner-types";
import { parseOwnerParams, type OwnerParams, type SearchParamsInput } from "./params";
import { reshapeEvent, reshapeLease } from "./reshape";
import type { EventView, LeaseView, ReadResult } from "./views";

export const OWNER_HELD_LIMIT = 100;
export const OWNER_EVENTS_LIMIT = 25;
export const TROUBLE_LIMIT = 50;
const TROUBLE_KINDS = ["expired", "renew_failed", "lost"] as const;

interface StoreRead {
  held: LeaseView[];
  hasMoreHeld: boolean;
  storeNow: Date;
  events: LeaseEvent[];
  troubles: LeaseEvent[];
}

async function readOwner(store: LeaseStore, params: OwnerParams, signal: AbortSignal): Promise<StoreRead> {
  const window = { owner: params.owner, from: params.range.from, to: params.range.to, signal };
  const [page, events, troubles] = await Promise.all([
    store.list({ owner: params.owner, limit: OWNER_HELD_LIMIT, signal }),
    store.events({ ...window, limit: OWNER_EVENTS_LIMIT }),
    store.events({ ...window, kinds: [...TROUBLE_KINDS], limit: TROUBLE_LIMIT }),
  ]);
  return {
    held: page.items.map((lease) => reshapeLease(lease, store.kind, page.now)),
    // A store that stopped at its read budget may hold more of this owner's leases.
    hasMoreHeld: page.nextCursor !== undefined || page.partial !== undefined,
    storeNow: page.now,
    events: events.items,
    troubles: troubles.items,
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
        expired: troubles.filter((e) => e.kind === "expired").length,
        renew_failed: troubles.filter((e) => e.kind === "renew_failed").length,
        lost: troubles.filter((e) => e.kind === "lost").length,
      },
      stores: outcomes.map((o) => (o.ok ? { ...o, data: { held: o.data.held.length, hasMoreHeld: o.data.hasMoreHeld } } : o)),
    },
  };
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
