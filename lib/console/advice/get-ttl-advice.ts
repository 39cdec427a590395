/**
 * Server-only read models of renewal slack and TTL advice: every selected store
 * is asked for its own measurements (`renewalSlack`, `ttlAdvice`), in parallel,
 * a store that is down becoming a row of its own. Advice only: nothing here
 * changes a TTL.
 */
import { summariseSlack, type LeaseStore, type TtlAdvice } from "@leasewatch/lease";
import { parseAdviceParams, type AdviceParams, type AdviceWindow } from "./advice-params";
import { fanOutStores, resolveEntries, selectEntries, type ReadOptions } from "@/lib/console/shared/fan-out";
import type { SearchParamsInput } from "@/lib/console/shared/params";
import type { ParamProblem, ReadResult, StoreOutcome } from "@/lib/console/shared/views";

/** One advice row as the page shows it (what `store.ttlAdvice` returns, with the store named). */
export type TtlAdviceRowView = TtlAdvice & { store: string };

export interface TtlAdviceView {
  readAt: string;
  window: AdviceWindow;
  from: string;
  to: string;
  prefix: string | null;
  selectedStore: string | null;
  /** Per store: its group rows, and whether its event scan hit the cap. */
  stores: StoreOutcome<{ groups: number; isPartial: boolean }>[];
  /** The stores' groups, most renewals first, at most ADVICE_PAGE_ROWS. */
  rows: TtlAdviceRowView[];
  /** All groups the stores advised on (rows may show fewer). */
  totalRows: number;
}

/** Rows one advice page shows: enough for the groups that matter; a prefix narrows the rest. */
export const ADVICE_PAGE_ROWS = 50;

export interface RenewalSlackView {
  readAt: string;
  window: AdviceWindow;
  from: string;
  to: string;
  prefix: string | null;
  /** SLACK_BUCKET_COUNT counts over every selected store. */
  histogram: number[];
  renewals: number;
  closeCalls: number;
  stores: StoreOutcome<{ renewals: number; closeCalls: number }>[];
}

/** Asks every store `params` selects, in parallel, for `read` over the advice's window and prefix. */
async function fanOutAdvice<T>(
  params: AdviceParams,
  options: ReadOptions,
  read: (store: LeaseStore, query: { prefix?: string; from: Date; to: Date; signal: AbortSignal }) => Promise<T>,
): Promise<{ ok: true; outcomes: StoreOutcome<T>[] } | { ok: false; problem: ParamProblem }> {
  const selected = selectEntries(await resolveEntries(options), params.store);
  if (!selected.ok) return selected;
  const outcomes = await fanOutStores(
    selected.entries,
    (store, signal) => read(store, { ...(params.prefix ? { prefix: params.prefix } : {}), from: params.from, to: params.to, signal }),
    options.timeoutMs,
    options.signal,
  );
  return { ok: true, outcomes };
}

export async function getTtlAdvice(params: AdviceParams, options: ReadOptions): Promise<ReadResult<TtlAdviceView>> {
  const read = await fanOutAdvice(params, options, (store, query) => store.ttlAdvice(query));
  if (!read.ok) return read;
  const { outcomes } = read;
  const rows = outcomes.flatMap((o) => (o.ok ? o.data.groups.map((g) => ({ ...g, store: o.store })) : []));
  rows.sort((a, b) => b.renewals - a.renewals || b.renewalsLost - a.renewalsLost || a.prefix.localeCompare(b.prefix) || a.store.localeCompare(b.store));
  return {
    ok: true,
    view: {
      ...frame(params),
      selectedStore: params.store ?? null,
      stores: outcomes.map((o) => (o.ok ? { ...o, data: { groups: o.data.groups.length, isPartial: o.data.isPartial } } : o)),
      rows: rows.slice(0, ADVICE_PAGE_ROWS),
      totalRows: rows.length,
    },
  };
}

export async function getRenewalSlack(params: AdviceParams, options: ReadOptions): Promise<ReadResult<RenewalSlackView>> {
  const read = await fanOutAdvice(params, options, (store, query) => store.renewalSlack(query));
  if (!read.ok) return read;
  const { outcomes } = read;
  const all = summariseSlack(outcomes.flatMap((o) => (o.ok ? o.data : [])));
  return {
    ok: true,
    view: {
      ...frame(params),
      ...all,
      stores: outcomes.map((o) => {
        if (!o.ok) return o;
        const s = summariseSlack(o.data);
        return { ...o, data: { renewals: s.renewals, closeCalls: s.closeCalls } };
      }),
    },
  };
}

function frame(params: AdviceParams) {
  return {
    readAt: new Date().toISOString(),
    window: params.window,
    from: params.from.toISOString(),
    to: params.to.toISOString(),
    prefix: params.prefix ?? null,
  };
}

export async function getTtlAdviceFromSearch(input: SearchParamsInput, options: ReadOptions): Promise<ReadResult<TtlAdviceView>> {
  const parsed = parseAdviceParams(input, options.nowMs);
  return parsed.ok ? getTtlAdvice(parsed.params, options) : { ok: false, problem: parsed.problem };
}

export async function getRenewalSlackFromSearch(input: SearchParamsInput, options: ReadOptions): Promise<ReadResult<RenewalSlackView>> {
  const parsed = parseAdviceParams(input, options.nowMs);
  return parsed.ok ? getRenewalSlack(parsed.params, options) : { ok: false, problem: parsed.problem };
}
