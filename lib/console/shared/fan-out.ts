/**
 * Server-only: reading several stores at once. Each store is read in parallel
 * and bounded by a timeout; a store that fails or hangs becomes
 * `{ ok: false, error }` in the result while the others still return — one
 * store being down must never blank a page.
 */
import type { ViewerScope } from "@/lib/auth/scope";
import type { EventQuery, LeaseStore, PartialRead } from "@leasewatch/lease";
import { isUnreachableError, toPublicStoreError } from "@/lib/server/public-error";
import { withTimeout } from "@/lib/server/timeout";
import { scopeStore } from "./scoped-store";
import type { PageSummary, ParamProblem, StoreFailureCause, StoreOutcome } from "./views";

/** Long enough for a 7-day chart read, short enough that a hung store doesn't stall the page. */
export const STORE_TIMEOUT_MS = 4_000;

/** Anything with a store: registry entries (`{ config, store }`) or a test's own stores. */
export interface StoreRef {
  store: LeaseStore;
}

interface BaseReadOptions {
  timeoutMs?: number;
  /** Server time used for windows; tests pin it. */
  nowMs?: number;
  /**
   * Reuse stats buckets that can no longer change (lib/console/overview/closed-buckets).
   * Default: on for the configured stores, off for stores passed in `entries`.
   */
  reuseClosedBuckets?: boolean;
  /** The request's signal: when it aborts, every store's read is cancelled (Postgres stops the statement). */
  signal?: AbortSignal;
}

/**
 * Reading the configured stores needs the viewer's scope (`scopeFor(session, …)`):
 * the type makes a page or route handler that forgets it fail to compile. Tests
 * that bring their own stores may leave it out (everything).
 */
export type ReadOptions = BaseReadOptions &
  (
    | {
        /** Stores to read; defaults to every configured store (lib/server/store-registry.ts). */
        entries: readonly StoreRef[];
        scope?: ViewerScope;
      }
    | { entries?: undefined; scope: ViewerScope }
  );

/**
 * The stores a read may touch, each seen through the viewer's scope
 * (lib/console/shared/scoped-store): every read model gets them here, so none can read
 * past the scope.
 */
export async function resolveEntries(options: ReadOptions): Promise<readonly StoreRef[]> {
  let entries: readonly StoreRef[];
  if (options.entries) entries = options.entries;
  else {
    // Imported lazily so read models can be tested with their own stores without
    // building the process-wide registry (and its sweep timer).
    const { getStoreEntries } = await import("@/lib/server/store-registry");
    entries = getStoreEntries();
  }
  const { scope } = options;
  if (!scope || scope.kind === "all") return entries;
  return entries.map((entry) => ({ ...entry, store: scopeStore(entry.store, scope) }));
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

/**
 * Runs `read` with a signal that aborts when `parent` does or when `timeoutMs`
 * passes: the store's work is cancelled, not only abandoned.
 */
export async function withDeadline<T>(
  read: (signal: AbortSignal) => Promise<T>,
  timeoutMs: number,
  what: string,
  parent?: AbortSignal,
): Promise<T> {
  const controller = new AbortController();
  const onParentAbort = () => controller.abort(parent?.reason);
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener("abort", onParentAbort, { once: true });
  try {
    return await withTimeout(read(controller.signal), timeoutMs, what);
  } finally {
    parent?.removeEventListener("abort", onParentAbort);
    // On timeout this cancels the store's still-running read; after success it is a no-op.
    controller.abort();
  }
}

/** Run `read` against every store in parallel, isolating failures per store. */
export async function fanOutStores<T>(
  entries: readonly StoreRef[],
  read: (store: LeaseStore, signal: AbortSignal) => Promise<T>,
  timeoutMs = STORE_TIMEOUT_MS,
  signal?: AbortSignal,
): Promise<StoreOutcome<T>[]> {
  const settled = await Promise.allSettled(
    entries.map((entry) => withDeadline((s) => read(entry.store, s), timeoutMs, `store "${entry.store.name}"`, signal)),
  );
  return Promise.all(
    settled.map(async (result, i): Promise<StoreOutcome<T>> => {
      const { store } = entries[i]!;
      const { name, kind } = store;
      if (result.status === "fulfilled") return { store: name, kind, ok: true, data: result.value };
      let cause = causeOf(result.reason);
      // A read that failed otherwise (a timeout, an error) shows the store as down only if its health read fails too.
      // Not when the request went away: nobody reads the answer, and the store is not to blame.
      if (cause === "failed" && !signal?.aborted && !(await isStoreHealthy(store))) cause = "unreachable";
      return { store: name, kind, ok: false, error: toPublicStoreError(result.reason, name), cause };
    }),
  );
}

/** How long the health read after a failed read may take (as the header's health checks). */
export const FAILED_READ_HEALTH_TIMEOUT_MS = 1_500;

async function isStoreHealthy(store: LeaseStore): Promise<boolean> {
  try {
    return (await withTimeout(store.health(), FAILED_READ_HEALTH_TIMEOUT_MS, `store "${store.name}" health`)).ok;
  } catch {
    return false;
  }
}

function causeOf(error: unknown): StoreFailureCause {
  if (isUnreachableError(error)) return "unreachable";
  // The viewer's scope refused the read (lib/console/shared/scoped-store): nothing was counted.
  if (error instanceof Error && (error as { code?: unknown }).code === "out_of_scope") return "refused";
  return "failed";
}

/** The stores a `store=` parameter selects, or a problem naming the stores that exist. */
export function selectEntries(
  entries: readonly StoreRef[],
  storeName: string | undefined,
): { ok: true; entries: readonly StoreRef[] } | { ok: false; problem: ParamProblem } {
  if (storeName === undefined) return { ok: true, entries };
  const match = entries.filter((e) => e.store.name === storeName);
  if (match.length > 0) return { ok: true, entries: match };
  const known = entries.map((e) => e.store.name).join(", ");
  const message = `No store is called "${storeName}". ${known ? `Known stores: ${known}.` : "This console watches no stores."}`;
  return { ok: false, problem: { param: "store", message } };
}

// ---------------------------------------------------------------- multi-store cursors

/**
 * A page across several stores carries one cursor per store. Each store's page is
 * read from its own (opaque) cursor, so paging never skips or repeats a store's
 * rows; within a page the rows of all stores are merged into one order.
 * Per store: a string continues from that cursor, "" starts from the beginning,
 * null means that store has no more rows.
 */
export type StoreCursors = Record<string, string | null>;

function encodeStoreCursors(cursors: StoreCursors): string | null {
  if (Object.values(cursors).every((c) => c === null)) return null;
  return Buffer.from(JSON.stringify(cursors), "utf8").toString("base64url");
}

function decodeStoreCursors(cursor: string | undefined): { ok: true; cursors: StoreCursors | null } | { ok: false; problem: ParamProblem } {
  if (cursor === undefined) return { ok: true, cursors: null };
  const bad = { ok: false as const, problem: { param: "cursor", message: "The cursor parameter is not a page link this console made; start again from the first page." } };
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return bad;
    const cursors: StoreCursors = {};
    for (const [store, value] of Object.entries(parsed)) {
      if (value !== null && typeof value !== "string") return bad;
      cursors[store] = value;
    }
    return { ok: true, cursors };
  } catch {
    return bad;
  }
}

export interface PageStart {
  entry: StoreRef;
  cursor: string | undefined;
}

/**
 * Where each store continues on this page: from the decoded cursor, or from the
 * start on the first page. Exhausted stores (null) are not read at all; neither
 * are stores a later-page cursor does not mention (exhausted earlier, or
 * configured since the first page) — restarting them would repeat their rows.
 */
function pageStarts(entries: readonly StoreRef[], cursors: StoreCursors | null): PageStart[] {
  const starts: PageStart[] = [];
  for (const entry of entries) {
    const c = cursors ? (cursors[entry.store.name] ?? null) : "";
    if (c === null) continue;
    starts.push({ entry, cursor: c === "" ? undefined : c });
  }
  return starts;
}

/**
 * The first step of a paged read: every configured store's name (for the store
 * filter) and where each store that `store=` selects continues on this page.
 */
export async function openPage(
  options: ReadOptions,
  storeName: string | undefined,
  cursor: string | undefined,
): Promise<{ ok: true; storeNames: string[]; starts: PageStart[] } | { ok: false; problem: ParamProblem }> {
  const all = await resolveEntries(options);
  const selected = selectEntries(all, storeName);
  if (!selected.ok) return selected;
  const decoded = decodeStoreCursors(cursor);
  if (!decoded.ok) return decoded;
  return { ok: true, storeNames: all.map((e) => e.store.name), starts: pageStarts(selected.entries, decoded.cursors) };
}

/** fanOutStores over a page: each store is read from its own cursor. */
export function fanOutPage<T>(
  starts: readonly PageStart[],
  read: (store: LeaseStore, cursor: string | undefined, signal: AbortSignal) => Promise<T>,
  timeoutMs?: number,
  signal?: AbortSignal,
): Promise<StoreOutcome<T>[]> {
  const cursors = new Map(starts.map((s) => [s.entry.store, s.cursor]));
  return fanOutStores(
    starts.map((s) => s.entry),
    (store, storeSignal) => read(store, cursors.get(store), storeSignal),
    timeoutMs,
    signal,
  );
}

/**
 * Next page: stores that answered continue from their own cursor (or are done);
 * a store that failed on this page is retried from where it was.
 */
export function nextCursorOf(
  outcomes: StoreOutcome<{ nextCursor?: string }>[],
  starts: PageStart[],
): string | null {
  const cursors: StoreCursors = {};
  for (const outcome of outcomes) {
    if (outcome.ok) {
      cursors[outcome.store] = outcome.data.nextCursor ?? null;
    } else {
      const start = starts.find((s) => s.entry.store.name === outcome.store);
      cursors[outcome.store] = start?.cursor ?? "";
    }
  }
  // Only failed stores left to retry: no "next" link (retrying is a refresh, not a page).
  if (outcomes.every((o) => !o.ok || o.data.nextCursor === undefined)) return null;
  return encodeStoreCursors(cursors);
}

/** Per store: how many rows this page holds from it, whether it has more, and whether it answered in part. */
export function summarisePages<T>(
  outcomes: StoreOutcome<{ items: T[]; nextCursor?: string; partial?: PartialRead }>[],
): StoreOutcome<PageSummary>[] {
  return outcomes.map((o) => {
    if (!o.ok) return o;
    const data: PageSummary = { count: o.data.items.length, hasMore: o.data.nextCursor !== undefined };
    if (o.data.partial) data.partial = o.data.partial;
    return { ...o, data };
  });
}

/**
 * The first store (of those selected) that would not serve this event query from an index, as
 * a problem to answer with (a 400) instead of reading: nothing is read to decide.
 */
export function findUnservableEvents(entries: readonly StoreRef[], query: EventQuery): ParamProblem | null {
  for (const { store } of entries) {
    const problem = store.findUnservableEventFilter?.(query);
    if (problem) return { param: problem.param, message: `${problem.message} (store ${store.name}).` };
  }
  return null;
}
