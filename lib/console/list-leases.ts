/**
 * Server-only read model of `/locks`: the current leases of every selected store,
 * filtered and sorted by the stores themselves (indexes, keyset cursors), merged
 * into one table. `state=expired` lists leases that ended by expiry in the window
 * instead — the drill-down behind the expired-to-released alert.
 */
import type { Lease, LeaseState } from "@/lib/lease/types";
import { fanOutPage, nextCursorOf, openPage, summarisePages, type PageStart, type ReadOptions } from "./fan-out";
import { parseLeasesParams, type LeasesParams, type SearchParamsInput } from "./params";
import { reshapeLease } from "./reshape";
import type { EndedLeaseView, LeaseView, LeasesView, ReadResult } from "./views";

export async function listLeases(params: LeasesParams, options: ReadOptions): Promise<ReadResult<LeasesView>> {
  const opened = await openPage(options, params.store, params.cursor);
  if (!opened.ok) return opened;
  const { storeNames, starts } = opened;
  const readAt = new Date(options.nowMs ?? Date.now()).toISOString();

  if (params.state === "expired") return listExpiredLeases(params, starts, storeNames, readAt, options);

  const state: LeaseState | undefined = params.state;
  const outcomes = await fanOutPage(
    starts,
    async (store, cursor, signal) => {
      const page = await store.list({
        prefix: params.prefix,
        owner: params.owner,
        task: params.task,
        state,
        sort: params.sort,
        limit: params.limit,
        cursor,
        signal,
      });
      return {
        items: page.items.map((lease: Lease) => reshapeLease(lease, store.kind, page.now)),
        nextCursor: page.nextCursor,
        partial: page.partial,
        now: page.now.toISOString(),
      };
    },
    options.timeoutMs,
    options.signal,
  );

  const items = outcomes.flatMap((o) => (o.ok ? o.data.items : []));
  items.sort(compareLeases(params.sort));
  return {
    ok: true,
    view: {
      mode: "current",
      storeNames,
      readAt,
      items,
      storeClocks: Object.fromEntries(outcomes.flatMap((o) => (o.ok ? [[o.store, o.data.now]] : []))),
      expired: [],
      stores: summarisePages(outcomes),
      nextCursor: nextCursorOf(outcomes, starts),
      from: null,
      to: null,
    },
  };
}

async function listExpiredLeases(
  params: LeasesParams,
  starts: PageStart[],
  storeNames: string[],
  readAt: string,
  options: ReadOptions,
): Promise<ReadResult<LeasesView>> {
  const outcomes = await fanOutPage(
    starts,
    async (store, cursor, signal) => {
      const page = await store.events({
        kinds: ["expired"],
        prefix: params.prefix,
        owner: params.owner,
        task: params.task,
        from: params.range.from,
        to: params.range.to,
        limit: params.limit,
        cursor,
        signal,
      });
      const ended: EndedLeaseView[] = page.items.map((e) => ({
        store: e.store,
        eventId: e.id,
        resource: e.resource,
        leaseId: e.leaseId,
        owner: e.owner,
        task: e.task,
        fencingToken: e.fencingToken === null ? null : String(e.fencingToken),
        endedAt: e.at.toISOString(),
        holdMs: typeof e.holdMs === "number" ? e.holdMs : null,
      }));
      return { items: ended, nextCursor: page.nextCursor, partial: page.partial };
    },
    options.timeoutMs,
    options.signal,
  );
  const expired = outcomes.flatMap((o) => (o.ok ? o.data.items : []));
  expired.sort((a, b) => b.endedAt.localeCompare(a.endedAt) || a.store.localeCompare(b.store) || a.resource.localeCompare(b.resource));
  return {
    ok: true,
    view: {
      mode: "expired",
      storeNames,
      readAt,
      items: [],
      storeClocks: {},
      expired,
      stores: summarisePages(outcomes),
      nextCursor: nextCursorOf(outcomes, starts),
      from: params.range.from.toISOString(),
      to: params.range.to.toISOString(),
    },
  };
}

function compareLeases(sort: LeasesParams["sort"]): (a: LeaseView, b: LeaseView) => number {
  const tie = (a: LeaseView, b: LeaseView) => a.store.localeCompare(b.store) || a.resource.localeCompare(b.resource);
  switch (sort) {
    case "expires":
      return (a, b) => a.expiresInMs - b.expiresInMs || tie(a, b);
    case "held_longest":
      return (a, b) => b.heldForMs - a.heldForMs || tie(a, b);
    case "newest":
      return (a, b) => a.heldForMs - b.heldForMs || tie(a, b);
  }
}

/** `/locks` and `/api/leases`: parse the URL parameters, then read. */
export async function listLeasesFromSearch(search: SearchParamsInput, options: ReadOptions): Promise<ReadResult<LeasesView>> {
  const parsed = parseLeasesParams(search, options.nowMs);
  return parsed.ok ? listLeases(parsed.params, options) : parsed;
}
