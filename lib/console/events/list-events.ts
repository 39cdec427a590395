/**
 * Server-only read model of `/events`: events of every selected store, newest
 * first, filtered by the stores (kind, prefix, owner, resource, time), merged.
 */
import type { EventQuery } from "@leasewatch/lease";
import { SCOPE_ALL } from "@/lib/auth/scope";
import { describeError, fanOutPage, findUnservableEvents, nextCursorOf, openPage, summarisePages, type ReadOptions } from "@/lib/console/shared/fan-out";
import { listObservedEvents, observedStoreNames, type ObservedEventsSection } from "@/lib/console/shared/observed-history";
import { parseEventsParams, type EventsParams, type SearchParamsInput } from "@/lib/console/shared/params";
import { reshapeEvent } from "@/lib/console/shared/reshape";
import type { EventRetentionNote, EventsView, ReadResult } from "@/lib/console/shared/views";

export async function listEvents(params: EventsParams, options: ReadOptions): Promise<ReadResult<EventsView>> {
  const observedNames = options.entries === undefined ? observedStoreNames() : [];
  // `store=` naming an observed store lists its observed events only.
  const isObservedStore = params.store !== undefined && observedNames.includes(params.store);
  const observed = options.entries === undefined ? readObservedEvents(params, options) : Promise.resolve(null);
  const opened = await openPage(options, isObservedStore ? undefined : params.store, params.cursor);
  if (!opened.ok) {
    await observed;
    return opened;
  }
  if (isObservedStore) return { ok: true, view: { ...emptyEventsView(params, options, opened.storeNames), observed: await observed } };
  const { storeNames, starts } = opened;
  const query = toEventQuery(params);
  // A filter a store would have to scan for is refused before any store is read.
  const unservable = findUnservableEvents(starts.map((s) => s.entry), query);
  if (unservable) return { ok: false, problem: unservable };

  const outcomes = await fanOutPage(
    starts,
    async (store, cursor, signal) => {
      // Read beside the page (its own bounded read), so the page can say what the store no longer keeps.
      const [page, retention] = await Promise.all([
        store.events({ ...query, limit: params.limit, cursor, signal }),
        store.eventRetention?.({ signal }) ?? null,
      ]);
      return { items: page.items.map(reshapeEvent), nextCursor: page.nextCursor, partial: page.partial, retention };
    },
    options.timeoutMs,
    options.signal,
  );

  const items = outcomes.flatMap((o) => (o.ok ? o.data.items : []));
  // ISO strings of one format sort as times; ids break ties within a store.
  items.sort((a, b) => b.at.localeCompare(a.at) || a.store.localeCompare(b.store) || b.id.localeCompare(a.id));
  return {
    ok: true,
    view: {
      ...emptyEventsView(params, options, storeNames),
      items,
      stores: summarisePages(outcomes),
      nextCursor: nextCursorOf(outcomes, starts),
      observed: await observed,
      retention: outcomes.flatMap((o): EventRetentionNote[] => {
        const r = o.ok ? o.data.retention : null;
        if (!r || (r.retentionDays === null && r.retainedFrom === null)) return [];
        const windowFrom = params.range?.from.getTime() ?? Number.NEGATIVE_INFINITY;
        return [{
          store: o.store,
          retentionDays: r.retentionDays,
          retainedFrom: r.retainedFrom?.toISOString() ?? null,
          isWindowCut: r.retainedFrom !== null && windowFrom < r.retainedFrom.getTime(),
        }];
      }),
    },
  };
}

function emptyEventsView(params: EventsParams, options: ReadOptions, storeNames: string[]): EventsView {
  return {
    readAt: new Date(options.nowMs ?? Date.now()).toISOString(),
    storeNames,
    items: [],
    stores: [],
    nextCursor: null,
    from: params.range?.from.toISOString() ?? null,
    to: params.range?.to.toISOString() ?? null,
    endsAt: params.range?.endsAt?.toISOString() ?? null,
    retention: [],
    observed: null,
  };
}

/**
 * The observed part of `/events`, with the same store, prefix, resource and
 * window; filters only lease events have (kind, owner, task, lease, token) skip
 * it, saying so. Its first page only: a busy window asks for a narrower one.
 */
function readObservedEvents(params: EventsParams, options: ReadOptions): Promise<ObservedEventsSection | null> {
  const leaseOnly = [
    params.kinds ? "lease event kinds" : null,
    params.owner ? "owner" : null,
    params.task ? "task" : null,
    params.lease ? "lease id" : null,
    params.token ? "fencing token" : null,
  ].filter((f): f is string => f !== null);
  return listObservedEvents(
    { store: params.store, prefix: params.prefix, resource: params.resource, from: params.range?.from, to: params.range?.to, limit: params.limit, leaseOnly },
    { scope: options.scope ?? SCOPE_ALL },
  ).catch((error: unknown) => ({ storeNames: [], items: [], hasMore: false, limit: params.limit, skipped: null, error: describeError(error) }));
}

/** The store query of `/events`' filters (without paging). */
export function toEventQuery(params: EventsParams): EventQuery {
  return {
    kinds: params.kinds,
    prefix: params.prefix,
    owner: params.owner,
    task: params.task,
    leaseId: params.lease,
    fencingToken: params.token,
    resource: params.resource,
    from: params.range?.from,
    to: params.range?.to,
  };
}

/** `/events` and `/api/events`: parse the URL parameters, then read. */
export async function listEventsFromSearch(search: SearchParamsInput, options: ReadOptions): Promise<ReadResult<EventsView>> {
  const parsed = parseEventsParams(search, options.nowMs);
  return parsed.ok ? listEvents(parsed.params, options) : parsed;
}
