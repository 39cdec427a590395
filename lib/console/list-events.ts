/**
 * Server-only read model of `/events`: events of every selected store, newest
 * first, filtered by the stores (kind, prefix, owner, resource, time), merged.
 */
import type { EventQuery } from "@/lib/lease/types";
import { fanOutPage, findUnservableEvents, nextCursorOf, openPage, summarisePages, type ReadOptions } from "./fan-out";
import { parseEventsParams, type EventsParams, type SearchParamsInput } from "./params";
import { reshapeEvent } from "./reshape";
import type { EventRetentionNote, EventsView, ReadResult } from "./views";

export async function listEvents(params: EventsParams, options: ReadOptions): Promise<ReadResult<EventsView>> {
  const opened = await openPage(options, params.store, params.cursor);
  if (!opened.ok) return opened;
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
      readAt: new Date(options.nowMs ?? Date.now()).toISOString(),
      storeNames,
      items,
      stores: summarisePages(outcomes),
      nextCursor: nextCursorOf(outcomes, starts),
      from: params.range?.from.toISOString() ?? null,
      to: params.range?.to.toISOString() ?? null,
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
