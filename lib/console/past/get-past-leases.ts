/**
 * Server-only read model of the past view: `/locks?at=` and the lease page's `?at=`.
 * Each selected store rebuilds what was held at the instant from its own history
 * (`store.heldAt`, indexed on both stores); a store that cannot answer for that
 * instant says why (before its retained history, or after its clock) instead of
 * showing an empty — and wrong — list.
 */
import type { HeldAtResult } from "@leasewatch/lease";
import { fanOutStores, resolveEntries, selectEntries, type ReadOptions } from "@/lib/console/shared/fan-out";
import { parseAtParam, parseLeasesParams, type SearchParamsInput } from "@/lib/console/shared/params";
import type { PastGap, PastLeaseView, PastLeasesView } from "./past-views";
import type { ReadResult } from "@/lib/console/shared/views";

export interface PastLeasesParams {
  at: Date;
  store?: string;
  resource?: string;
  prefix?: string;
  owner?: string;
  task?: string;
  limit: number;
}

export async function getPastLeases(params: PastLeasesParams, options: ReadOptions): Promise<ReadResult<PastLeasesView>> {
  const all = await resolveEntries(options);
  const selected = selectEntries(all, params.store);
  if (!selected.ok) return selected;
  const outcomes = await fanOutStores(
    selected.entries,
    (store, signal): Promise<HeldAtResult> =>
      store.heldAt({
        signal,
        at: params.at,
        limit: params.limit,
        ...(params.resource !== undefined ? { resource: params.resource } : {}),
        ...(params.prefix !== undefined ? { prefix: params.prefix } : {}),
        ...(params.owner !== undefined ? { owner: params.owner } : {}),
        ...(params.task !== undefined ? { task: params.task } : {}),
      }),
    options.timeoutMs,
    options.signal,
  );
  const items: PastLeaseView[] = [];
  const gaps: PastGap[] = [];
  for (const o of outcomes) {
    if (!o.ok) continue;
    const r = o.data;
    if (!r.covered) {
      gaps.push({ store: o.store, reason: r.reason, historyStartsAt: r.historyStartsAt?.toISOString() ?? null, message: describeGap(o.store, r) });
      continue;
    }
    for (const h of r.items) {
      items.push({
        store: h.store,
        storeKind: o.kind,
        resource: h.resource,
        leaseId: h.leaseId,
        owner: h.owner,
        task: h.task,
        fencingToken: h.fencingToken,
        acquiredAt: h.acquiredAt.toISOString(),
        heldForMs: h.heldForMs,
        ending: h.ending,
        endedAt: h.endedAt?.toISOString() ?? null,
      });
    }
  }
  items.sort((a, b) => a.acquiredAt.localeCompare(b.acquiredAt) || a.store.localeCompare(b.store) || a.resource.localeCompare(b.resource));
  const hasMore = items.length > params.limit || outcomes.some((o) => o.ok && o.data.covered && o.data.hasMore);
  return {
    ok: true,
    view: {
      at: params.at.toISOString(),
      readAt: new Date(options.nowMs ?? Date.now()).toISOString(),
      storeNames: all.map((e) => e.store.name),
      items: items.slice(0, params.limit),
      hasMore,
      limit: params.limit,
      stores: outcomes.map((o) =>
        o.ok
          ? {
              store: o.store,
              kind: o.kind,
              ok: true as const,
              data: {
                count: o.data.covered ? o.data.items.length : 0,
                hasMore: o.data.covered && o.data.hasMore,
                ...(o.data.covered && o.data.partial ? { partial: o.data.partial } : {}),
                historyStartsAt: o.data.historyStartsAt?.toISOString() ?? null,
              },
            }
          : o,
      ),
      gaps,
    },
  };
}

function describeGap(store: string, r: Extract<HeldAtResult, { covered: false }>): string {
  if (r.reason === "future") return `this instant is after ${store}'s clock (${r.now.toISOString()}); nothing is known about it yet`;
  if (r.historyStartsAt === null) return `${store} has recorded no history yet, so nothing can be said about this instant`;
  return `history on ${store} starts at ${r.historyStartsAt.toISOString()}; this instant is before it, and what was held then is no longer retained`;
}

/** `/locks?at=` and `/api/past-leases`: the leases page's filters plus `at` (required). */
export async function getPastLeasesFromSearch(search: SearchParamsInput, options: ReadOptions): Promise<ReadResult<PastLeasesView>> {
  const parsed = parseLeasesParams(search, options.nowMs);
  if (!parsed.ok) return parsed;
  const { at, store, prefix, owner, task, limit } = parsed.params;
  if (at === undefined) return { ok: false, problem: { param: "at", message: "is needed: the instant to show, e.g. 2026-04-01T10:00:00Z" } };
  return getPastLeases({ at, store, prefix, owner, task, limit }, options);
}

/** The lease page's `?at=`: who held this one resource then. */
export async function getPastHolder(store: string, resource: string, search: SearchParamsInput, options: ReadOptions): Promise<ReadResult<PastLeasesView> | null> {
  const parsed = parseAtParam(search);
  if (!parsed.ok) return parsed;
  if (parsed.params.at === undefined) return null;
  return getPastLeases({ at: parsed.params.at, store, resource, limit: 10 }, options);
}
