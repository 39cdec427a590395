/**
 * Server-only read model of the counts above every list: for the list's own
 * filters and window, the top owners, tasks and resources (and kinds, for
 * events) with how many rows each has — "13 of 47 expiries: worker-8@reports-cecb".
 *
 * Counted from the stores' own read paths (list / events, served by their
 * indexes), so the counts are of exactly the rows the list shows. Every read is
 * bounded: events always have a window (24 h unless the URL names one), and each
 * store is read for at most FACET_SCAN_LIMIT rows, newest first; when a store
 * has more, the view says the counts cover only those.
 */
import { z } from "zod";
import type { EventQuery, LeaseEvent, LeaseStore, ListQuery } from "@leasewatch/lease";
import { STUCK_STATES, WINDOW_MS, parseEventsParams, parseLeasesParams, type EventsParams, type LeasesParams, type SearchParamsInput } from "@/lib/console/shared/params";
import { fanOutStores, findUnservableEvents, resolveEntries, selectEntries, type ReadOptions, type StoreRef } from "@/lib/console/shared/fan-out";
import { FACET_SCAN_LIMIT, FACET_VIEWS, type FacetField, type FacetNoun, type FacetValue, type FacetViewName, type FacetsView } from "./facets-types";
import type { ParamProblem, ReadResult } from "@/lib/console/shared/views";

const FACET_PAGE = 1_000;
/** Values shown per facet. */
export const FACET_TOP = 5;

/** One counted row, whatever the list. */
interface FacetRow {
  owner: string | null;
  task: string | null;
  resource: string;
  kind?: string;
}

const ZFacetView = z.enum(FACET_VIEWS, { error: `must be one of ${FACET_VIEWS.join(", ")} (which list the counts are for)` });

/** `/api/facets?view=leases|events&…the list's own parameters`. */
export async function getFacetsFromSearch(search: SearchParamsInput, options: ReadOptions): Promise<ReadResult<FacetsView>> {
  const raw = search instanceof URLSearchParams ? search.getAll("view") : [search.view ?? []].flat();
  const parsed = ZFacetView.safeParse(raw.length === 1 ? raw[0] : raw.length === 0 ? undefined : "");
  if (!parsed.success) return { ok: false, problem: { param: "view", message: parsed.error.issues[0]?.message ?? "is invalid" } };
  return parsed.data === "leases" ? getLeaseFacetsFromSearch(search, options) : getEventFacetsFromSearch(search, options);
}

export async function getLeaseFacetsFromSearch(search: SearchParamsInput, options: ReadOptions): Promise<ReadResult<FacetsView>> {
  const parsed = parseLeasesParams(search, options.nowMs);
  return parsed.ok ? getLeaseFacets(parsed.params, options) : parsed;
}

export async function getEventFacetsFromSearch(search: SearchParamsInput, options: ReadOptions): Promise<ReadResult<FacetsView>> {
  const parsed = parseEventsParams(search, options.nowMs);
  return parsed.ok ? getEventFacets(parsed.params, options) : parsed;
}

/** Counts for `/locks`: current leases, or with state=expired the expiries in the window. */
export async function getLeaseFacets(params: LeasesParams, options: ReadOptions): Promise<ReadResult<FacetsView>> {
  const nowMs = options.nowMs ?? Date.now();
  const depth = prefixDepthFor(params.prefix);
  if (params.state === "expired") {
    const query: EventQuery = {
      kinds: ["expired"],
      ...(params.prefix !== undefined ? { prefix: params.prefix } : {}),
      ...(params.owner !== undefined ? { owner: params.owner } : {}),
      ...(params.task !== undefined ? { task: params.task } : {}),
      from: params.range.from,
      to: params.range.to,
    };
    return countFacets(options, params.store, nowMs, {
      view: "leases",
      noun: "expiries",
      read: (store, signal) => readEventRows(store, query, signal),
      fields: ["owner", "task", "prefix"],
      depth,
      range: { from: params.range.from, to: params.range.to },
    });
  }
  const query: ListQuery = {
    ...(params.prefix !== undefined ? { prefix: params.prefix } : {}),
    ...(params.owner !== undefined ? { owner: params.owner } : {}),
    ...(params.task !== undefined ? { task: params.task } : {}),
  };
  // "stuck" is two store states; each is read on its own and the rows counted together.
  const states = params.state === undefined ? [undefined] : params.state === "stuck" ? STUCK_STATES : [params.state];
  return countFacets(options, params.store, nowMs, {
    view: "leases",
    noun: "leases",
    read: async (store, signal) => {
      const reads = await Promise.all(states.map((state) => readLeaseRows(store, state === undefined ? query : { ...query, state }, signal)));
      return { rows: reads.flatMap((r) => r.rows), isCapped: reads.some((r) => r.isCapped) };
    },
    fields: ["owner", "task", "prefix"],
    depth,
    range: null,
  });
}

/** Counts for `/events`: the filtered events in the window (24 h when the URL has none). */
export async function getEventFacets(params: EventsParams, options: ReadOptions): Promise<ReadResult<FacetsView>> {
  const nowMs = options.nowMs ?? Date.now();
  const range = params.range ?? { from: new Date(nowMs - WINDOW_MS["24h"]), to: new Date(nowMs + 1) };
  const query: EventQuery = {
    ...(params.kinds !== undefined ? { kinds: params.kinds } : {}),
    ...(params.prefix !== undefined ? { prefix: params.prefix } : {}),
    ...(params.owner !== undefined ? { owner: params.owner } : {}),
    ...(params.task !== undefined ? { task: params.task } : {}),
    ...(params.lease !== undefined ? { leaseId: params.lease } : {}),
    ...(params.token !== undefined ? { fencingToken: params.token } : {}),
    ...(params.resource !== undefined ? { resource: params.resource } : {}),
    from: range.from,
    to: range.to,
  };
  const isOnlyExpiries = params.kinds?.length === 1 && params.kinds[0] === "expired";
  return countFacets(options, params.store, nowMs, {
    view: "events",
    noun: isOnlyExpiries ? "expiries" : "events",
    read: (store, signal) => readEventRows(store, query, signal),
    fields: ["owner", "task", "resource", "kind"],
    refuse: (entries) => findUnservableEvents(entries, query),
    depth: 0,
    range: { from: range.from, to: range.to },
  });
}

interface CountPlan {
  view: FacetViewName;
  noun: FacetNoun;
  read: (store: LeaseStore, signal: AbortSignal) => Promise<{ rows: FacetRow[]; isCapped: boolean }>;
  /** A filter a store would scan for: refused, as the list itself refuses it. */
  refuse?: (entries: readonly StoreRef[]) => ParamProblem | null;
  fields: FacetField[];
  /** For prefix groups: how many leading ":" segments make a group. */
  depth: number;
  range: { from: Date; to: Date } | null;
}

async function countFacets(options: ReadOptions, storeName: string | undefined, nowMs: number, plan: CountPlan): Promise<ReadResult<FacetsView>> {
  const selected = selectEntries(await resolveEntries(options), storeName);
  if (!selected.ok) return selected;
  const refused = plan.refuse?.(selected.entries);
  if (refused) return { ok: false, problem: refused };
  const outcomes = await fanOutStores(selected.entries, plan.read, options.timeoutMs, options.signal);
  const rows = outcomes.flatMap((o) => (o.ok ? o.data.rows : []));
  return {
    ok: true,
    view: {
      readAt: new Date(nowMs).toISOString(),
      view: plan.view,
      noun: plan.noun,
      total: rows.length,
      isCapped: outcomes.some((o) => o.ok && o.data.isCapped),
      groups: plan.fields.map((field) => ({ field, values: topValues(rows, (r) => valueOf(r, field, plan.depth)) })),
      from: plan.range?.from.toISOString() ?? null,
      to: plan.range?.to.toISOString() ?? null,
      stores: outcomes.map((o) => (o.ok ? { ...o, data: { counted: o.data.rows.length, isCapped: o.data.isCapped } } : o)),
    },
  };
}

function valueOf(row: FacetRow, field: FacetField, depth: number): string | null {
  switch (field) {
    case "owner":
      return row.owner;
    case "task":
      return row.task;
    case "resource":
      return row.resource;
    case "prefix":
      return prefixOf(row.resource, depth);
    case "kind":
      return row.kind ?? null;
  }
}

/** Most frequent first; ties by value so the order holds still between polls. */
export function topValues<T>(rows: readonly T[], pick: (row: T) => string | null, top = FACET_TOP): FacetValue[] {
  const counts = new Map<string, number>();
  for (const row of rows) {
    const value = pick(row);
    if (value !== null && value !== "") counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  return [...counts.entries()]
    .map(([value, count]) => ({ value, count }))
    .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
    .slice(0, top);
}

/**
 * Resources of current leases are all different, so they are grouped by prefix:
 * one ":" segment deeper than the prefix filter (at least two), ending in ":" so
 * the group is itself a prefix filter.
 */
export function prefixDepthFor(prefix: string | undefined): number {
  const segments = prefix ? prefix.split(":").filter((s) => s !== "").length : 0;
  return Math.max(2, segments + 1);
}

export function prefixOf(resource: string, depth: number): string {
  const parts = resource.split(":");
  return parts.length > depth ? `${parts.slice(0, depth).join(":")}:` : resource;
}

async function readEventRows(store: LeaseStore, query: EventQuery, signal: AbortSignal): Promise<{ rows: FacetRow[]; isCapped: boolean }> {
  const rows: FacetRow[] = [];
  let cursor: string | undefined;
  while (rows.length < FACET_SCAN_LIMIT) {
    const page = await store.events({ ...query, limit: Math.min(FACET_PAGE, FACET_SCAN_LIMIT - rows.length), signal, ...(cursor ? { cursor } : {}) });
    rows.push(...page.items.map(toRow));
    // A store that answered in part counted only some rows: the counts say so.
    if (page.partial) return { rows, isCapped: true };
    cursor = page.nextCursor;
    if (!cursor) return { rows, isCapped: false };
  }
  return { rows, isCapped: true };
}

function toRow(e: LeaseEvent): FacetRow {
  return { owner: e.owner, task: e.task, resource: e.resource, kind: e.kind };
}

async function readLeaseRows(store: LeaseStore, query: ListQuery, signal: AbortSignal): Promise<{ rows: FacetRow[]; isCapped: boolean }> {
  const rows: FacetRow[] = [];
  let cursor: string | undefined;
  while (rows.length < FACET_SCAN_LIMIT) {
    const page = await store.list({ ...query, limit: Math.min(FACET_PAGE, FACET_SCAN_LIMIT - rows.length), signal, ...(cursor ? { cursor } : {}) });
    for (const lease of page.items) rows.push({ owner: lease.owner, task: lease.task, resource: lease.resource });
    if (page.partial) return { rows, isCapped: true };
    cursor = page.nextCursor;
    if (!cursor) return { rows, isCapped: false };
  }
  return { rows, isCapped: true };
}
