/**
 * Server-only: one store's overview buckets for the resources under a prefix.
 * The rollups count per store (contention alone is kept per prefix, and only to
 * three segments), so a prefix view is rebuilt from the store's own events:
 * Postgres reads them by its (resource, at) index as a range on the prefix,
 * Redis from its capped event streams over the window. Both reads are bounded:
 * windows up to PREFIX_MAX_RANGE_MS (longer ones read the rollups per prefix group) and at most
 * PREFIX_MAX_EVENTS events per store and window; past that the store says so
 * instead of showing a partial count.
 */
import {
  type CounterKind,
  HOLD_HISTOGRAM_BOUNDS_MS,
  holdBucketIndex,
  LEASE_EVENT_KINDS,
  type LeaseEvent,
  type LeaseEventKind,
  type LeaseStore,
  resourcePrefix,
  type StatsBucket,
} from "@leasewatch/lease";
import { MAX_LIST_LIMIT } from "@leasewatch/lease/internal";

/** Events per store and window a prefix view reads at most (a page of the store's maximum size at a time). */
export const PREFIX_MAX_EVENTS = 20_000;
/** Leases under a prefix the "active" tile counts at most. */
export const PREFIX_MAX_ACTIVE = 10_000;
/** The chart rebuilds contention names to this many segments, as deep as the rollups keep. */
const NAME_DEPTH = 3;

export interface PrefixRange {
  from: Date;
  to: Date;
  bucketMs: number;
}

export type PrefixRead<T> = { ok: true; data: T } | { ok: false; limit: number; what: string };

/** Every event under `prefix` in [from, to), oldest first, or a refusal once PREFIX_MAX_EVENTS is passed. */
async function readPrefixEvents(
  store: LeaseStore,
  prefix: string,
  range: PrefixRange,
  kinds: readonly LeaseEventKind[] | undefined,
  maxEvents: number,
  signal: AbortSignal | undefined,
): Promise<PrefixRead<LeaseEvent[]>> {
  const events: LeaseEvent[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.events({ prefix, from: range.from, to: range.to, kinds, order: "asc", limit: MAX_LIST_LIMIT, cursor, signal });
    events.push(...page.items);
    // A store that stopped early (its read budget) would make every total short: refuse instead.
    if (events.length > maxEvents || page.partial) return { ok: false, limit: maxEvents, what: "events" };
    cursor = page.nextCursor;
  } while (cursor);
  return { ok: true, data: events };
}

/** Leases currently stored under `prefix` (held or lapsed-unswept, as `countActive()` counts them). */
export async function countActiveUnder(
  store: LeaseStore,
  prefix: string,
  maxActive = PREFIX_MAX_ACTIVE,
  signal?: AbortSignal,
): Promise<PrefixRead<number>> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await store.list({ prefix, limit: MAX_LIST_LIMIT, cursor, signal });
    count += page.items.length;
    if (count > maxActive || page.partial) return { ok: false, limit: maxActive, what: "active leases" };
    cursor = page.nextCursor;
  } while (cursor);
  return { ok: true, data: count };
}

function emptyBucket(start: number): StatsBucket {
  const counts = Object.fromEntries([...LEASE_EVENT_KINDS, "renewed"].map((k) => [k, 0])) as Record<CounterKind, number>;
  return { start: new Date(start), counts, holdHistogram: new Array<number>(HOLD_HISTOGRAM_BOUNDS_MS.length + 1).fill(0), holdMsSum: 0, contendedByPrefix: {} };
}

/**
 * Events summed into buckets shaped like `stats()`'s: counts per kind, the hold
 * histogram of terminal events (bucketed as the stores bucket holdMs) and
 * contention per depth-3 name. Renewals are counted, not recorded as events, so
 * `renewed` stays 0 here and the view says it is not known per prefix.
 */
export function bucketEvents(events: readonly LeaseEvent[], bucketMs: number): StatsBucket[] {
  const buckets = new Map<number, StatsBucket>();
  for (const e of events) {
    const start = Math.floor(e.at.getTime() / bucketMs) * bucketMs;
    let b = buckets.get(start);
    if (!b) buckets.set(start, (b = emptyBucket(start)));
    b.counts[e.kind] += 1;
    if (e.holdMs !== undefined && e.holdMs !== null && (e.kind === "released" || e.kind === "expired" || e.kind === "force_released")) {
      b.holdHistogram[holdBucketIndex(e.holdMs)]! += 1;
      b.holdMsSum += e.holdMs;
    }
    if (e.kind === "contended") {
      const name = resourcePrefix(e.resource, NAME_DEPTH);
      b.contendedByPrefix[name] = (b.contendedByPrefix[name] ?? 0) + 1;
    }
  }
  return [...buckets.values()].sort((a, b) => a.start.getTime() - b.start.getTime());
}

/** The window's buckets (every kind) and the previous window's contention, both under `prefix`. */
export async function readPrefixBuckets(
  store: LeaseStore,
  prefix: string,
  range: PrefixRange,
  previousRange: PrefixRange,
  maxEvents = PREFIX_MAX_EVENTS,
  signal?: AbortSignal,
): Promise<PrefixRead<{ buckets: StatsBucket[]; previous: StatsBucket[] }>> {
  // The previous window only feeds the contention tables' change column.
  const [current, previous] = await Promise.all([
    readPrefixEvents(store, prefix, range, undefined, maxEvents, signal),
    readPrefixEvents(store, prefix, previousRange, ["contended"], maxEvents, signal),
  ]);
  if (!current.ok) return current;
  if (!previous.ok) return previous;
  return { ok: true, data: { buckets: bucketEvents(current.data, range.bucketMs), previous: bucketEvents(previous.data, range.bucketMs) } };
}
