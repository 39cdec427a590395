/**
 * Server-only read model of `/locks`: the current leases of every selected store,
 * filtered and sorted by the stores themselves (indexes, keyset cursors), merged
 * into one table. `state=expired` lists leases that ended by expiry in the window
 * instead — the drill-down behind the expired-to-released alert. `state=stuck` lists
 * the overdue and lapsed leases together, the longest overdue first (one page).
 */
import { OVERDUE_FRACTION, type Lease, type LeaseState } from "@leasewatch/lease";
import { fanOutPage, nextCursorOf, openPage, summarisePages, type PageStart, type ReadOptions } from "@/lib/console/shared/fan-out";
import { parseLeasesParams, STUCK_STATES, type LeasesParams, type SearchParamsInput } from "@/lib/console/shared/params";
import { reshapeLease } from "@/lib/console/shared/reshape";
import type { EndedLeaseView, LeaseView, LeasesView, ReadResult, StoreOutcome } from "@/lib/console/shared/views";

export async function listLeases(params: LeasesParams, options: ReadOptions): Promise<ReadResult<LeasesView>> {
  const opened = await openPage(options, params.store, params.cursor);
  if (!opened.ok) return opened;
  const { storeNames, starts } = opened;
  const readAt = new Date(options.nowMs ?? Date.now()).toISOString();

  if (params.state === "expired") return listExpiredLeases(params, starts, storeNames, readAt, options);
  if (params.state === "stuck") return listStuckLeases(params, starts, storeNames, readAt, options);

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

  return currentLeasesView(outcomes, compareLeases(params.sort), { storeNames, readAt, stores: summarisePages(outcomes), nextCursor: nextCursorOf(outcomes, starts) });
}

/** The current leases' view (the list, or the stuck list): every store's leases merged in `sort`'s order, with each store's clock. */
function currentLeasesView(
  outcomes: readonly StoreOutcome<{ items: LeaseView[]; now: string }>[],
  sort: (a: LeaseView, b: LeaseView) => number,
  page: Pick<LeasesView, "storeNames" | "readAt" | "stores" | "nextCursor">,
): ReadResult<LeasesView> {
  const items = outcomes.flatMap((o) => (o.ok ? o.data.items : []));
  items.sort(sort);
  return {
    ok: true,
    view: {
      mode: "current",
      ...page,
      items,
      storeClocks: Object.fromEntries(outcomes.flatMap((o) => (o.ok ? [[o.store, o.data.now]] : []))),
      expired: [],
      from: null,
      to: null,
      endsAt: null,
    },
  };
}

/**
 * Overdue and lapsed leases, sorted by how long past their renewal they are. The stores
 * index neither "overdue by" nor the union of the two states, so this reads the first
 * `limit` of each state per store (oldest expiry first, which for lapsed leases is the
 * longest overdue) and says so per store when there were more; it has no next page.
 */
async function listStuckLeases(
  params: LeasesParams,
  starts: PageStart[],
  storeNames: string[],
  readAt: string,
  options: ReadOptions,
): Promise<ReadResult<LeasesView>> {
  const outcomes = await fanOutPage(
    starts.map((s) => ({ ...s, cursor: undefined })),
    async (store, _cursor, signal) => {
      const pages = await Promise.all(
        STUCK_STATES.map((state) =>
          store.list({ prefix: params.prefix, owner: params.owner, task: params.task, state, sort: "expires", limit: params.limit, signal }),
        ),
      );
      const now = pages.reduce((latest, page) => (page.now > latest ? page.now : latest), pages[0]!.now);
      const items = pages.flatMap((page) => page.items.map((lease: Lease) => reshapeLease(lease, store.kind, page.now)));
      const hasMore = pages.some((page) => page.nextCursor !== undefined);
      const partial = pages.find((page) => page.partial)?.partial;
      return { items, hasMore, ...(partial ? { partial } : {}), now: now.toISOString() };
    },
    options.timeoutMs,
    options.signal,
  );
  const stores = outcomes.map((o) => {
    if (!o.ok) return o;
    return { ...o, data: { count: o.data.items.length, hasMore: o.data.hasMore, ...(o.data.partial ? { partial: o.data.partial } : {}) } };
  });
  // By the instant each lease became overdue, not by overdueByMs: that is measured when each
  // store was read, and the stores are read at slightly different moments.
  const overdueSince = (l: LeaseView) => Date.parse(l.renewedAt) + l.ttlMs * OVERDUE_FRACTION;
  const longestOverdue = (a: LeaseView, b: LeaseView) => overdueSince(a) - overdueSince(b) || a.store.localeCompare(b.store) || a.resource.localeCompare(b.resource);
  return currentLeasesView(outcomes, longestOverdue, { storeNames, readAt, stores, nextCursor: null });
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
      endsAt: params.range.endsAt?.toISOString() ?? null,
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
  if (!parsed.ok) return parsed;
  // Who held what at a past moment is the past view's read; the live list would silently answer for now.
  if (parsed.params.at !== undefined && parsed.params.state !== "expired") {
    return { ok: false, problem: { param: "at", message: "The at parameter lists the leases held at that moment through /api/past-leases (the past view); here it applies with state=expired only (the expiries of the window ending at at)." } };
  }
  return listLeases(parsed.params, options);
}
