import { isResourceInScope, type ViewerScope } from "@/lib/auth/scope";
import { parseObservedConfig, type TObservedConfig } from "@/lib/observed/config";
import type { ObservedEventKind, ObservedLock } from "@/lib/observed/observer";
import { toPublicStoreError } from "@/lib/server/public-error";
import { observedLockHref, observedStoreHref, unescapeDotPart } from "@/lib/console/shared/links";
import {
  getObservedCounts,
  getObservedLockHistory,
  inScopeSql,
  isNoHistory,
  isSampleStale,
  openObservedRead,
  readObservedState,
  scopePrefixes,
  type ObservedEventView,
  type ObservedReadOptions,
  type ObservedStoreCounts,
} from "./observed";

/**
 * Observed locks in the rest of the console — the overview's counts, `/events`,
 * the jump box, one observed lock's page and `?at=` — all read from the
 * observer's record in the console's Postgres, never from the observed system.
 * Every read is bounded (an index range with a LIMIT) and scoped: a viewer
 * limited to prefixes reads only names under them, filtered in SQL.
 */

type Scoped = ObservedReadOptions & { scope: ViewerScope };
type StoreKind = TObservedConfig["kind"];

/** openObservedRead, with the schema quoted at once. */
function opened(options: ObservedReadOptions) {
  const read = openObservedRead(options);
  return { ...read, s: read.schema() };
}

/** The observed stores' names; none when LEASEWATCH_OBSERVED is unset or invalid (the observed page says what is wrong). */
export function observedStoreNames(env?: NodeJS.ProcessEnv): string[] {
  try {
    return parseObservedConfig(env).map((c) => c.name);
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------- overview

export interface ObservedOverviewStore extends ObservedStoreCounts {
  /** The store's section on /observed. */
  href: string;
}

export interface ObservedOverview {
  intervalMs: number;
  /** The instant counted (a past view), or null: the last sample. */
  at: string | null;
  stores: ObservedOverviewStore[];
}

/**
 * The overview's observed section: per observed store, the locks held, their
 * waiters and the oldest hold — at the last sample, or with `at` as rebuilt for
 * that instant (getObservedAt). Null with no observed store configured.
 */
export async function getObservedOverview(options: Scoped & { at?: Date; nowMs?: number }): Promise<ObservedOverview | null> {
  if (options.at) {
    const past = await getObservedAt(options.at, options);
    if (past.stores.length === 0) return null;
    const atMs = options.at.getTime();
    const ageAt = (locks: ObservedHeldAt[]) => {
      const starts = locks.flatMap((l) => (l.since ? [Date.parse(l.since)] : []));
      return starts.length > 0 ? Math.max(0, (atMs - Math.min(...starts)) / 1000) : null;
    };
    return {
      intervalMs: past.intervalMs,
      at: past.at,
      stores: past.stores.map((s) => ({
        name: s.name,
        kind: s.kind,
        ok: s.error === null,
        sampleAgeSeconds: null,
        held: s.locks.length,
        waiters: s.locks.reduce((sum, l) => sum + l.waiters, 0),
        oldestHoldSeconds: ageAt(s.locks),
        oldestBlockingHoldSeconds: ageAt(s.locks.filter((l) => l.waiters > 0)),
        partial: s.hasMore,
        href: `/observed?at=${encodeURIComponent(past.at)}`,
      })),
    };
  }
  const counts = await getObservedCounts(options);
  if (counts.stores.length === 0) return null;
  return { intervalMs: counts.intervalMs, at: null, stores: counts.stores.map((s) => ({ ...s, href: observedStoreHref(s.name) })) };
}

// ---------------------------------------------------------------- events

export interface ObservedEventRow extends ObservedEventView {
  store: string;
  storeKind: StoreKind;
  /** The observed lock's page. */
  href: string;
}

export interface ObservedEventsSection {
  storeNames: string[];
  /** Newest first. */
  items: ObservedEventRow[];
  /** More matched than `limit`: narrow the window or the prefix. */
  hasMore: boolean;
  limit: number;
  /** Why observed events were not read for these filters (they filter on what observed events do not have). */
  skipped: string | null;
  error: string | null;
}

export interface ObservedEventsQuery {
  /** One store by name; a lease store's name selects no observed store. */
  store?: string;
  prefix?: string;
  resource?: string;
  from?: Date;
  to?: Date;
  limit: number;
  /** Filters observed events cannot answer (lease kinds, owner, task, lease id, token): named, the section is skipped. */
  leaseOnly?: string[];
}

/** `/events`' observed part: the observer's recorded changes matching the filters, newest first; null with no observed store configured. */
export async function listObservedEvents(query: ObservedEventsQuery, options: Scoped): Promise<ObservedEventsSection | null> {
  const { configs, s, pool } = opened(options);
  if (configs.length === 0) return null;
  const storeNames = configs.map((c) => c.name);
  const empty = { storeNames, items: [], hasMore: false, limit: query.limit, skipped: null, error: null };
  const selected = configs.filter((c) => query.store === undefined || c.name === query.store);
  if (selected.length === 0) return empty;
  if (query.leaseOnly && query.leaseOnly.length > 0) return { ...empty, skipped: `observed events have no ${query.leaseOnly.join(", ")}` };
  const kinds = new Map(configs.map((c) => [c.name, c.kind]));
  try {
    const { rows } = await pool().query<EventRow>(
      `SELECT id::text, store, resource, kind, holder, previous_holder, waiters, at FROM ${s}.observed_events
        WHERE store = ANY($1::text[]) AND ($2::text IS NULL OR starts_with(resource, $2)) AND ($3::text IS NULL OR resource = $3)
          AND ($4::timestamptz IS NULL OR at >= $4) AND ($5::timestamptz IS NULL OR at < $5) AND ${inScopeSql(6)}
        ORDER BY at DESC, id DESC LIMIT $7`,
      [selected.map((c) => c.name), query.prefix ?? null, query.resource ?? null, query.from ?? null, query.to ?? null, scopePrefixes(options.scope), query.limit + 1],
    );
    const items = rows.slice(0, query.limit).map((r) => ({ ...toEventView(r), store: r.store, storeKind: kinds.get(r.store)!, href: observedLockHref(r.store, r.resource) }));
    return { ...empty, items, hasMore: rows.length > query.limit };
  } catch (error) {
    if (isNoHistory(error)) return empty;
    return { ...empty, error: toPublicStoreError(error, "observed history") };
  }
}

interface EventRow {
  id: string;
  store: string;
  resource: string;
  kind: ObservedEventKind;
  holder: string | null;
  previous_holder: string | null;
  waiters: number;
  at: Date;
}

const toEventView = (r: EventRow): ObservedEventView => ({
  id: r.id,
  resource: r.resource,
  kind: r.kind,
  holder: r.holder,
  previousHolder: r.previous_holder,
  waiters: r.waiters,
  at: r.at.toISOString(),
});

// ---------------------------------------------------------------- jump box

export interface ObservedJumpMatch {
  store: string;
  resource: string;
  /** Held at the last sample (else only in the recorded history). */
  isHeld: boolean;
  href: string;
}

/** An observed lock named exactly `name` (held at the last sample first, else one with recorded history); null: none, or outside the scope. */
export async function findObservedLock(name: string, options: Scoped): Promise<ObservedJumpMatch | null> {
  const { configs, s, pool } = opened(options);
  if (configs.length === 0 || !isResourceInScope(options.scope, name)) return null;
  try {
    // One probe per store: the state row's lock list (containment), and the (store, resource, at) index.
    const { rows } = await pool().query<{ store: string; held: boolean; seen: boolean }>(
      `SELECT c.store,
              EXISTS (SELECT 1 FROM ${s}.observed_state st WHERE st.store = c.store AND st.locks @> jsonb_build_array(jsonb_build_object('resource', $2::text))) AS held,
              EXISTS (SELECT 1 FROM ${s}.observed_events e WHERE e.store = c.store AND e.resource = $2) AS seen
         FROM unnest($1::text[]) WITH ORDINALITY AS c(store, n) ORDER BY c.n`,
      [configs.map((c) => c.name), name],
    );
    const match = rows.find((r) => r.held) ?? rows.find((r) => r.seen);
    return match ? { store: match.store, resource: name, isHeld: match.held, href: observedLockHref(match.store, name) } : null;
  } catch (error) {
    if (isNoHistory(error)) return null;
    throw error;
  }
}

// ---------------------------------------------------------------- one observed lock

export interface WaitLink {
  resource: string;
  holder: string;
  waiters: number;
  href: string;
}

export interface ObservedLockPage {
  store: string;
  kind: StoreKind;
  resource: string;
  intervalMs: number;
  readAt: string;
  /** Null: the observer has not sampled this store yet. */
  sampledAt: string | null;
  stale: boolean;
  partial: boolean;
  /** Held at the last sample; null: not held then. */
  current: (ObservedLock & { since: string | null }) | null;
  /**
   * Advisory locks only (the other stores do not say who waits): the locks this
   * holder itself waits for, nearest first, and the locks held by the sessions
   * waiting here. Null where the store cannot tell.
   */
  waitChain: { holderWaitsFor: WaitLink[]; waitersHold: Array<WaitLink & { pid: number }>; waiterPids: number[] } | null;
  /** Recorded changes, newest first. */
  timeline: ObservedEventView[];
  /** The timeline shows the newest TIMELINE_LIMIT changes only. */
  hasMoreHistory: boolean;
}

export const TIMELINE_LIMIT = 200;
/** Hops followed up a chain of waits (a cycle is a deadlock Postgres breaks itself). */
const MAX_CHAIN = 10;

/** An observed lock's page path (observedLockHref) back to its store and name; null when it does not decode. */
export function parseObservedLockRoute(route: { store: string; resource: string[] }): { store: string; resource: string } | null {
  try {
    const store = decodeURIComponent(route.store);
    const resource = route.resource.map((s) => unescapeDotPart(decodeURIComponent(s))).join("/");
    return store.length > 0 && resource.length > 0 && resource.length <= 1024 ? { store, resource } : null;
  } catch {
    return null;
  }
}

/** One observed lock's page; null when the store is not configured or the name is outside the viewer's scope. */
export async function getObservedLock(input: { store: string; resource: string }, options: Scoped): Promise<ObservedLockPage | null> {
  const { configs, intervalMs, s, pool } = opened(options);
  const config = configs.find((c) => c.name === input.store);
  if (!config || !isResourceInScope(options.scope, input.resource)) return null;
  const [state, history] = await Promise.all([
    readObservedState(pool(), s, config.name).catch((error: unknown) => (isNoHistory(error) ? undefined : Promise.reject(error))),
    getObservedLockHistory({ ...options, store: input.store, resource: input.resource, limit: TIMELINE_LIMIT + 1 }).catch((error: unknown) => (isNoHistory(error) ? [] : Promise.reject(error))),
  ]);
  const timeline = (history ?? []).slice(0, TIMELINE_LIMIT);
  const lock = state?.locks.find((l) => l.resource === input.resource) ?? null;
  const since = timeline.find((e) => e.kind === "appeared" || e.kind === "holder_changed")?.at ?? null;
  const visible = state ? state.locks.filter((l) => isResourceInScope(options.scope, l.resource)) : [];
  return {
    store: config.name,
    kind: config.kind,
    resource: input.resource,
    intervalMs,
    readAt: new Date().toISOString(),
    sampledAt: state?.sampled_at.toISOString() ?? null,
    stale: state ? isSampleStale(state, intervalMs) : true,
    partial: state ? !state.complete : false,
    current: lock ? { ...lock, since } : null,
    waitChain: config.kind === "pg-advisory" && lock ? waitChainOf(config.name, lock, visible) : null,
    timeline,
    hasMoreHistory: (history ?? []).length > TIMELINE_LIMIT,
  };
}

const pidsOf = (lock: ObservedLock, key: "pids" | "waiterPids"): number[] => {
  const value = lock.detail?.[key];
  return Array.isArray(value) ? value.filter((v): v is number => typeof v === "number") : [];
};

/** From the last sample alone (pids recorded with each advisory lock): who this holder waits for, and what the waiters hold. */
export function waitChainOf(store: string, lock: ObservedLock, locks: readonly ObservedLock[]): NonNullable<ObservedLockPage["waitChain"]> {
  const link = (l: ObservedLock): WaitLink => ({ resource: l.resource, holder: l.holder, waiters: l.waiters, href: observedLockHref(store, l.resource) });
  const holderWaitsFor: WaitLink[] = [];
  const visited = new Set([lock.resource]);
  let current = lock;
  for (let hop = 0; hop < MAX_CHAIN; hop++) {
    const pids = new Set(pidsOf(current, "pids"));
    const next = locks.find((l) => !visited.has(l.resource) && pidsOf(l, "waiterPids").some((p) => pids.has(p)));
    if (!next) break;
    visited.add(next.resource);
    holderWaitsFor.push(link(next));
    current = next;
  }
  const waiterPids = pidsOf(lock, "waiterPids");
  const waitersHold = waiterPids.flatMap((pid) => locks.filter((l) => l.resource !== lock.resource && pidsOf(l, "pids").includes(pid)).map((l) => ({ ...link(l), pid })));
  return { holderWaitsFor, waitersHold, waiterPids };
}

// ---------------------------------------------------------------- ?at=

export interface ObservedHeldAt {
  resource: string;
  holder: string;
  waiters: number;
  /** When the observer first recorded this holder (at or before the instant). */
  since: string | null;
  href: string;
}

export interface ObservedAtStore {
  name: string;
  kind: StoreKind;
  locks: ObservedHeldAt[];
  /** More were held than AT_LIMIT: the rest are not listed. */
  hasMore: boolean;
  /** The observer's first record of this store; null: none yet. */
  historyStartsAt: string | null;
  /** Why the record cannot answer for the instant (before its history, or in the future). */
  gap: string | null;
  error: string | null;
}

export interface ObservedAtView {
  at: string;
  readAt: string;
  intervalMs: number;
  stores: ObservedAtStore[];
}

export const AT_LIMIT = 500;

/**
 * The observed locks held at an instant, rebuilt from the recorded changes: per
 * lock, its last change at or before the instant, held unless that was `gone`.
 * Only what the observer sampled: holds shorter than its interval may be missing.
 */
export async function getObservedAt(at: Date, options: Scoped & { nowMs?: number }): Promise<ObservedAtView> {
  const { configs, intervalMs, s, pool } = opened(options);
  const nowMs = options.nowMs ?? Date.now();
  const base = { at: at.toISOString(), readAt: new Date(nowMs).toISOString(), intervalMs };
  if (configs.length === 0) return { ...base, stores: [] };
  const db = pool();
  const prefixes = scopePrefixes(options.scope);
  const stores = await Promise.all(
    configs.map(async (config): Promise<ObservedAtStore> => {
      const empty = { name: config.name, kind: config.kind, locks: [], hasMore: false, historyStartsAt: null, gap: null, error: null };
      if (at.getTime() > nowMs) return { ...empty, gap: "this instant is in the future" };
      try {
        const start = await db.query<{ first: Date | null }>(
          `SELECT least((SELECT min(at) FROM ${s}.observed_events WHERE store = $1), (SELECT min(at) FROM ${s}.observed_checkpoints WHERE store = $1)) AS first`,
          [config.name],
        );
        const first = start.rows[0]?.first ?? null;
        const historyStartsAt = first?.toISOString() ?? null;
        if (first === null || at < first) {
          return { ...empty, historyStartsAt, gap: first === null ? "the observer has recorded nothing here yet" : `the observer's record of this store starts at ${historyStartsAt}` };
        }
        // The last checkpoint at or before the instant, then the last change per lock after it (all
        // changes when the history predates checkpoints); then, for those held, when that holder was first recorded.
        const { rows } = await db.query<{ resource: string; holder: string; waiters: number; since: Date | null }>(
          `WITH checkpoint AS (
             SELECT at, locks FROM ${s}.observed_checkpoints WHERE store = $1 AND at <= $2 ORDER BY at DESC LIMIT 1
           ), changed AS (
             SELECT DISTINCT ON (resource) resource, kind, holder, waiters FROM ${s}.observed_events
              WHERE store = $1 AND at > coalesce((SELECT at FROM checkpoint), '-infinity') AND at <= $2 AND ${inScopeSql(3)}
              ORDER BY resource, at DESC, id DESC
           ), last AS (
             SELECT resource, kind, holder, waiters FROM changed
             UNION ALL
             SELECT l.resource, 'appeared', l.holder, l.waiters
               FROM checkpoint, jsonb_to_recordset(checkpoint.locks) AS l(resource text, holder text, waiters int)
              WHERE ${inScopeSql(3, "l.resource")} AND NOT EXISTS (SELECT 1 FROM changed c WHERE c.resource = l.resource)
           )
           SELECT last.resource, last.holder, last.waiters,
                  (SELECT max(e.at) FROM ${s}.observed_events e
                    WHERE e.store = $1 AND e.resource = last.resource AND e.at <= $2 AND e.kind IN ('appeared', 'holder_changed')) AS since
             FROM last
            WHERE last.kind <> 'gone'
            ORDER BY last.resource LIMIT $4`,
          [config.name, at, prefixes, AT_LIMIT + 1],
        );
        const locks = rows.slice(0, AT_LIMIT).map((r) => ({ resource: r.resource, holder: r.holder, waiters: r.waiters, since: r.since?.toISOString() ?? null, href: observedLockHref(config.name, r.resource) }));
        return { ...empty, historyStartsAt, locks, hasMore: rows.length > AT_LIMIT };
      } catch (error) {
        if (isNoHistory(error)) return { ...empty, gap: "the observer has recorded nothing here yet" };
        return { ...empty, error: toPublicStoreError(error, config.name) };
      }
    }),
  );
  return { ...base, stores };
}
