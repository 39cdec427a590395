/**
 * Server-only read model of `/locks/[store]/[...resource]`: one resource's
 * current lease, its holders over time, its events, who is waiting for it and
 * the fencing tokens it handed out.
 */
import { isResourceInScope } from "@/lib/auth/scope";
import type { LeaseEvent, LeaseStore, TerminalEventKind } from "@leasewatch/lease";
import { toPublicStoreError } from "@/lib/server/public-error";
import { resolveEntries, selectEntries, withDeadline, STORE_TIMEOUT_MS, type ReadOptions } from "@/lib/console/shared/fan-out";
import { parseLeaseDetailParams, type LeaseDetailParams } from "@/lib/console/shared/params";
import { reshapeEvent, reshapeLease } from "@/lib/console/shared/reshape";
import type { HoldBar, LeaseDetailView, ReadResult, ResourceElsewhere, StoreOutcome, TokenView, WaiterView } from "@/lib/console/shared/views";

/** Latest events shown on the lease page; the rest are one click away on /events. */
export const DETAIL_EVENTS_LIMIT = 50;
export const TIMELINE_LIMIT = 200;
/** Refused acquires read for "who is waiting". */
export const WAITING_EVENTS_LIMIT = 500;
/** "Who is waiting": requesters refused in this last stretch of store time. */
export const WAITING_WINDOW_MS = 60_000;
export const LEASE_NOT_FOUND = { param: "resource", message: "No such lease.", isNotFound: true } as const;
const TERMINAL_KINDS: readonly TerminalEventKind[] = ["released", "expired", "force_released"];

export async function getLeaseDetail(
  params: LeaseDetailParams,
  options: ReadOptions,
): Promise<ReadResult<StoreOutcome<LeaseDetailView>>> {
  // Outside the viewer's scope: not found, decided on the name alone so existence never leaks.
  if (options.scope && !isResourceInScope(options.scope, params.resource)) return { ok: false, problem: LEASE_NOT_FOUND };
  const selected = selectEntries(await resolveEntries(options), params.store);
  if (!selected.ok) return selected;
  const store = selected.entries[0]!.store;
  const timeoutMs = options.timeoutMs ?? STORE_TIMEOUT_MS;
  const others = (await resolveEntries(options)).map((e) => e.store).filter((s) => s.name !== store.name);
  const elsewhere = findElsewhere(others, params.resource, Math.min(timeoutMs, ELSEWHERE_TIMEOUT_MS), options.signal);
  try {
    const view = await withDeadline((signal) => readDetail(store, params.resource, options.nowMs, signal), timeoutMs, `store "${store.name}"`, options.signal);
    return { ok: true, view: { store: store.name, kind: store.kind, ok: true, data: { ...view, elsewhere: await elsewhere } } };
  } catch (error) {
    return { ok: true, view: { store: store.name, kind: store.kind, ok: false, error: toPublicStoreError(error, store.name) } };
  }
}

/**
 * The hint "also in redis-main" is secondary: a slow or down other store must
 * not hold the page up for long, and is simply not mentioned.
 */
const ELSEWHERE_TIMEOUT_MS = 1_500;

/** Other stores where `resource` is held now or has any recorded event. Two bounded reads per store, in parallel. */
export async function findElsewhere(
  others: readonly LeaseStore[],
  resource: string,
  timeoutMs: number,
  parent?: AbortSignal,
): Promise<ResourceElsewhere[]> {
  const found = await Promise.allSettled(
    others.map(async (other): Promise<ResourceElsewhere | null> => {
      const [lease, events] = await withDeadline(
        (signal) => Promise.all([other.get(resource, { signal }), other.events({ resource, limit: 1, signal })]),
        timeoutMs,
        `store "${other.name}"`,
        parent,
      );
      return lease || events.items.length > 0 ? { store: other.name, kind: other.kind, isHeld: lease !== null } : null;
    }),
  );
  return found.flatMap((r) => (r.status === "fulfilled" && r.value ? [r.value] : []));
}

async function readDetail(store: LeaseStore, resource: string, nowMs: number | undefined, signal: AbortSignal): Promise<Omit<LeaseDetailView, "elsewhere">> {
  // list() is the one read that reports the store's clock; everything time-relative uses it.
  const [lease, clock, recent, holds] = await Promise.all([
    store.get(resource, { signal }),
    store.list({ prefix: resource, limit: 1, signal }),
    store.events({ resource, limit: DETAIL_EVENTS_LIMIT, signal }),
    store.events({ resource, kinds: ["acquired", ...TERMINAL_KINDS], limit: TIMELINE_LIMIT, signal }),
  ]);
  const storeNow = clock.now;
  const contended = await store.events({
    signal,
    resource,
    kinds: ["contended"],
    from: new Date(storeNow.getTime() - WAITING_WINDOW_MS),
    limit: WAITING_EVENTS_LIMIT,
  });

  const timeline = buildTimeline(holds.items, lease?.leaseId ?? null);
  return {
    store: store.name,
    storeKind: store.kind,
    resource,
    readAt: new Date(nowMs ?? Date.now()).toISOString(),
    storeNow: storeNow.toISOString(),
    lease: lease ? reshapeLease(lease, store.kind, storeNow) : null,
    timeline,
    timelineFrom: timeline[0]?.start ?? null,
    events: recent.items.map(reshapeEvent),
    hasMoreEvents: recent.nextCursor !== undefined,
    waiting: summariseWaiting(contended.items),
    hasHistory: recent.items.length > 0,
    tokens: holds.items
      .filter((e) => e.kind === "acquired" && e.fencingToken !== null)
      .map((e): TokenView => ({ fencingToken: String(e.fencingToken), leaseId: e.leaseId, owner: e.owner, at: e.at.toISOString() })),
  };
}

/**
 * One bar per hold, oldest first: from its `acquired` event to the terminal event
 * with the same lease id. Events are taken in the store's own order (ids; the
 * store returns newest first), which is exact even within one millisecond. A hold
 * whose start fell out of the fetched history starts at `end − holdMs` (terminal
 * events carry the hold time); a hold with no end is "held" if it is the current
 * lease, else its end is not recorded yet ("unknown": lapsed, not yet swept).
 */
export function buildTimeline(newestFirst: readonly LeaseEvent[], currentLeaseId: string | null): HoldBar[] {
  const bars: HoldBar[] = [];
  const byLease = new Map<string, HoldBar>();
  /** A bar of its own for `event`'s lease, spanning `span`. */
  const addBar = (event: LeaseEvent, fencingToken: string | null, span: Pick<HoldBar, "start" | "end" | "ending" | "holdMs">) => {
    const bar: HoldBar = { leaseId: event.leaseId ?? "", owner: event.owner, task: event.task, fencingToken, ...span };
    bars.push(bar);
    if (event.leaseId) byLease.set(event.leaseId, bar);
  };
  for (const event of [...newestFirst].reverse()) {
    const token = event.fencingToken === null ? null : String(event.fencingToken);
    const existing = event.leaseId ? byLease.get(event.leaseId) : undefined;
    if (event.kind === "acquired") {
      if (existing) {
        existing.start = event.at.toISOString();
        continue;
      }
      addBar(event, token, { start: event.at.toISOString(), end: null, ending: event.leaseId !== null && event.leaseId === currentLeaseId ? "held" : "unknown", holdMs: null });
      continue;
    }
    const holdMs = typeof event.holdMs === "number" ? event.holdMs : null;
    if (existing) {
      existing.end = event.at.toISOString();
      existing.ending = event.kind as TerminalEventKind;
      existing.holdMs = holdMs ?? event.at.getTime() - Date.parse(existing.start);
      continue;
    }
    addBar(event, token, { start: new Date(event.at.getTime() - (holdMs ?? 0)).toISOString(), end: event.at.toISOString(), ending: event.kind as TerminalEventKind, holdMs });
  }
  // Stable: holds that started in the same millisecond keep the store's order.
  return bars.map((bar, i) => ({ bar, i })).sort((a, b) => a.bar.start.localeCompare(b.bar.start) || a.i - b.i).map((x) => x.bar);
}

export function summariseWaiting(contended: readonly LeaseEvent[]): WaiterView[] {
  const byOwner = new Map<string, WaiterView>();
  for (const event of contended) {
    if (!event.owner) continue;
    const at = event.at.toISOString();
    const waiter = byOwner.get(event.owner);
    if (!waiter) {
      byOwner.set(event.owner, { owner: event.owner, task: event.task, attempts: 1, lastAt: at });
    } else {
      waiter.attempts += 1;
      if (at > waiter.lastAt) {
        waiter.lastAt = at;
        waiter.task = event.task;
      }
    }
  }
  return [...byOwner.values()].sort((a, b) => b.lastAt.localeCompare(a.lastAt));
}

/** `/locks/[store]/[...resource]` and its API twin: parse the route segments, then read. */
export async function getLeaseDetailFromRoute(
  route: { store: string; resource: string[] },
  options: ReadOptions,
): Promise<ReadResult<StoreOutcome<LeaseDetailView>>> {
  const parsed = parseLeaseDetailParams(route);
  return parsed.ok ? getLeaseDetail(parsed.params, options) : parsed;
}
