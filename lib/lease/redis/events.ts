import { LeaseError } from "../errors";
import type { EventQuery, LeaseEvent, Page, PartialRead } from "../types";
import {
  compareEventPositions,
  formatEventId,
  parseEventId,
  parseStreamId,
  streamEntryToRaw,
  toLeaseEvent,
  type EventPosition,
} from "./codec";
import { execPipeline, type RedisContext } from "./connection";
import { takeMerged, type MergeSource } from "./merge";
import type { ReadBudget } from "./read-budget";

export const DEFAULT_EVENTS_LIMIT = 100;

interface PositionedEvent extends EventPosition {
  /** null: read from an id stream, its entry not fetched yet. */
  event: LeaseEvent | null;
}

interface EventSource extends MergeSource<PositionedEvent> {
  /** The stream the entries (or, for an id stream, the ids) are read from. */
  key: string;
  /** An id stream: its entries name events (id and kind) whose entries are in this bucket stream. */
  eventsKey?: string;
  bucket: number;
  /** Range reads: next bound, an id (inclusive) or `(id` (exclusive), in reading direction. */
  bound: string;
  /** Range reads: the far end of the range. */
  limitBound: string;
  /** Id-list reads: ids still to fetch, in reading order, already inside range and cursor. */
  pendingIds?: string[];
  /**
   * Id-list reads: how many of them the next round trip fetches, one XRANGE each. It starts at
   * what the page needs and doubles while filters drop what was fetched, so a one-event page
   * (does this resource have any history?) costs two reads, not a batch.
   */
  idBatch?: number;
  /** The last entry read, in reading direction: everything of this source before it has been read. */
  frontier: EventPosition | null;
}

/** One list of event ids, newest first, whose entries live in a bucket stream (a read model, see projector.ts). */
export interface IdListSource {
  listKey: string;
  streamKey: string;
  bucket: number;
}

/** One bucket's id stream (an owner's or a task's, see projector.ts) and what it may be read for. */
export interface IdStreamSource {
  key: string;
  /** The bucket stream holding the entries. */
  eventsKey: string;
  bucket: number;
  /** The oldest id the bucket stream still holds (null: it holds none): older ids name trimmed events. */
  retainedFrom: string | null;
}

/**
 * Where a query's events come from:
 * - `streams`: whole streams read by id range (the bucket streams, or the per-kind streams);
 * - `idStreams`: an owner's or a task's id stream per bucket, read by id range like a stream;
 *   only the entries of the ids the merge takes are fetched from their bucket streams.
 *   `isIndexBuilding`: some bucket's id streams do not reach its newest projected events yet;
 * - `idLists`: lists of ids (a resource's history), whose entries are fetched from their bucket streams.
 */
export type EventSourcePlan =
  | { streams: readonly { key: string; bucket: number }[] }
  | { idStreams: readonly IdStreamSource[]; isIndexBuilding: boolean }
  | { idLists: readonly IdListSource[] };

export interface ReadEventsOptions {
  budget: ReadBudget;
  /** How many ids an id list keeps (a full list may have lost older ids to its cap). */
  idListCap: number;
}

/**
 * Reads events newest-first (default) or oldest-first by merging sources by
 * stream id. The id's ms part is the event time, so `from` (inclusive) and `to`
 * (exclusive) bound the reads themselves; other filters (owner, task, lease id,
 * token) apply to what is read, so callers bound those reads with a window or an index.
 * Events are totally ordered by (ms, seq, bucket); the cursor is the last
 * returned position, so pages have no gaps or repeats.
 *
 * Id streams are read like streams (one range per bucket per round trip, COUNT-limited, pipelined
 * across buckets); the merge takes the page's ids first and only their entries are fetched, one
 * round trip per page, so an owner or task read fetches about a page of entries whatever the
 * window holds.
 *
 * Bounded: every id and entry read counts against `budget`, and its signal is checked before
 * each round trip. When the budget runs out the read keeps only what it can vouch for — the
 * matches ahead of every source's read frontier — and answers with `partial`.
 */
export async function readEvents(ctx: RedisContext, plan: EventSourcePlan, query: EventQuery, options: ReadEventsOptions): Promise<Page<LeaseEvent>> {
  // One history list read newest first (a resource's): a page usually comes from its newest ids,
  // so those are read first, and only a page they cannot fill reads the whole list, as it would
  // have at once. A one-event read of a hot resource then decodes tens of ids, not a thousand.
  if ("idLists" in plan && plan.idLists.length === 1 && query.order !== "asc") {
    const head = Math.min(options.idListCap, Math.max(2 * ((query.limit ?? DEFAULT_EVENTS_LIMIT) + 1), 32));
    if (head < options.idListCap) {
      const page = await readEventsOnce(ctx, plan, query, options, head);
      if (page) return page;
    }
  }
  return (await readEventsOnce(ctx, plan, query, options, options.idListCap))!;
}

/**
 * readEvents with id lists read up to `listHead` ids: null when a list held that many (it may
 * hold more) and the page was not filled from them.
 */
async function readEventsOnce(
  ctx: RedisContext,
  plan: EventSourcePlan,
  query: EventQuery,
  options: ReadEventsOptions,
  listHead: number,
): Promise<Page<LeaseEvent> | null> {
  const { budget } = options;
  const isAscending = query.order === "asc";
  const limit = query.limit ?? DEFAULT_EVENTS_LIMIT;
  const after = readEventCursor(query.cursor);
  const kinds = query.kinds && query.kinds.length > 0 ? new Set<string>(query.kinds) : null;
  const fromMs = query.from?.getTime();
  const toMs = query.to?.getTime();
  const batchSize = Math.min(Math.max(limit + 1, 50), 1000);
  let partial: PartialRead["reason"] | null = null;

  const matches = (e: LeaseEvent) =>
    (kinds === null || kinds.has(e.kind)) &&
    (query.resource === undefined || e.resource === query.resource) &&
    (query.prefix === undefined || e.resource.startsWith(query.prefix)) &&
    (query.owner === undefined || e.owner === query.owner) &&
    (query.task === undefined || e.task === query.task) &&
    (query.leaseId === undefined || e.leaseId === query.leaseId) &&
    (query.fencingToken === undefined || e.fencingToken === query.fencingToken);

  const lowId = fromMs !== undefined ? `${fromMs}-0` : "-";
  const highId = toMs !== undefined ? `(${toMs}-0` : "+";
  const startBound = (bucket: number) => {
    let bound = isAscending ? lowId : highId;
    if (after) {
      const cursorId = `${after.ms}-${after.seq}`;
      // A bucket that sorts before the cursor's bucket may still hold an entry with the same stream id.
      const isInclusive = isAscending ? bucket > after.bucket : bucket < after.bucket;
      bound = pickInnerBound(bound, isInclusive ? cursorId : `(${cursorId}`, isAscending);
    }
    return bound;
  };
  /** Reading order: negative when `a` comes first. */
  const compareOrder = (a: EventPosition, b: EventPosition) => (isAscending ? compareEventPositions(a, b) : compareEventPositions(b, a));

  let sources: EventSource[];
  /** Id lists cut by their cap: events before the newest of their oldest ids may be missing. */
  let listedFrom = null as EventPosition | null;
  /** Some id list was read only to `listHead`, and holds at least that many ids. */
  let isListHeadOnly = false;
  if ("idStreams" in plan) {
    sources = plan.idStreams.map(({ key, eventsKey, bucket, retainedFrom }) => {
      // Ids older than what the bucket stream keeps name nothing: the range stops there.
      let limitBound = isAscending ? highId : lowId;
      let bound = startBound(bucket);
      if (retainedFrom !== null) {
        if (isAscending) bound = pickInnerBound(bound, retainedFrom, true);
        else limitBound = lowId === "-" ? retainedFrom : pickInnerBound(lowId, retainedFrom, true);
      }
      return { key, eventsKey, bucket, bound, limitBound, buffer: [], isExhausted: retainedFrom === null, frontier: null };
    });
  } else if ("streams" in plan) {
    sources = plan.streams.map(({ key, bucket }) => ({
      key,
      bucket,
      bound: startBound(bucket),
      limitBound: isAscending ? highId : lowId,
      buffer: [],
      isExhausted: false,
      frontier: null,
    }));
  } else {
    budget.checkpoint();
    const listed = (await execPipeline(ctx, "events", (p) => {
      for (const l of plan.idLists) p.lrange(l.listKey, 0, listHead - 1);
    })) as (string[] | null)[];
    // Lists are newest first; keep the ids inside the time range and after the cursor.
    const isInside = (position: EventPosition) => {
      if (fromMs !== undefined && position.ms < fromMs) return false;
      if (toMs !== undefined && position.ms >= toMs) return false;
      if (!after) return true;
      const order = compareEventPositions(position, after);
      return isAscending ? order > 0 : order < 0;
    };
    sources = plan.idLists.map(({ streamKey, bucket }, i) => {
      const all = listed[i] ?? [];
      budget.spend(all.length + 1);
      if (listHead < options.idListCap && all.length >= listHead) isListHeadOnly = true;
      const oldest = all.at(-1);
      if (oldest !== undefined && all.length >= options.idListCap) {
        const position = { ...parseStreamId(oldest), bucket };
        if (!listedFrom || compareEventPositions(position, listedFrom) > 0) listedFrom = position;
      }
      const ids = [...new Set(all)].filter((id) => isInside({ ...parseStreamId(id), bucket }));
      if (isAscending) ids.reverse();
      return { key: streamKey, bucket, bound: "", limitBound: "", pendingIds: ids, idBatch: limit + 1, buffer: [], isExhausted: ids.length === 0, frontier: null };
    });
  }

  /** The budget ran out: keep the buffered matches no unread entry can come before, and stop reading. */
  const stopAtFrontier = () => {
    partial = "read_budget";
    let first: EventPosition | null = null;
    for (const s of sources) {
      if (s.isExhausted || !s.frontier) continue;
      if (!first || compareOrder(s.frontier, first) < 0) first = s.frontier;
    }
    for (const s of sources) {
      if (first) s.buffer = s.buffer.filter((e) => compareOrder(e, first!) <= 0);
      s.isExhausted = true;
    }
  };

  const refill = async (needy: readonly EventSource[]) => {
    budget.checkpoint();
    const reads: Array<{ source: EventSource; isRange: boolean }> = [];
    // A round trip reads no more than the budget has left, shared by the sources it reads.
    const count = Math.min(batchSize, Math.ceil(budget.remaining / needy.length));
    const replies = await execPipeline(ctx, "events", (p) => {
      for (const s of needy) {
        if (s.pendingIds) {
          const take = Math.min(count, s.idBatch ?? count);
          s.idBatch = Math.min(batchSize, take * 2);
          for (const id of s.pendingIds.splice(0, take)) {
            p.xrange(s.key, id, id);
            reads.push({ source: s, isRange: false });
          }
          if (s.pendingIds.length === 0) s.isExhausted = true;
        } else {
          if (isAscending) p.xrange(s.key, s.bound, s.limitBound, "COUNT", count);
          else p.xrevrange(s.key, s.bound, s.limitBound, "COUNT", count);
          reads.push({ source: s, isRange: true });
        }
      }
    });
    reads.forEach(({ source: s, isRange }, i) => {
      const entries = (replies[i] as [string, string[]][]) ?? [];
      budget.spend(Math.max(1, entries.length));
      if (isRange) {
        if (entries.length < count) s.isExhausted = true;
        const last = entries[entries.length - 1];
        if (last) s.bound = `(${last[0]}`;
      }
      // An id whose entry was trimmed from the capped bucket stream reads as nothing.
      for (const entry of entries) {
        const position = { ...parseStreamId(entry[0]), bucket: s.bucket };
        s.frontier = position;
        if (s.eventsKey) {
          // An id stream entry is `k <kind>`: a kind filter applies before anything is fetched.
          if (kinds === null || kinds.has(entry[1][1] ?? "")) s.buffer.push({ ...position, event: null });
          continue;
        }
        const event = toLeaseEvent(ctx.storeName, s.bucket, streamEntryToRaw(entry));
        if (!event || !matches(event)) continue;
        s.buffer.push({ ...position, event });
      }
    });
    if (budget.isSpent && sources.some((s) => !s.isExhausted)) stopAtFrontier();
  };

  let taken: PositionedEvent[] = [];
  if ("idStreams" in plan) {
    const eventsKeys = new Map(plan.idStreams.map((s) => [s.bucket, s.eventsKey]));
    // Take ids in order, fetch the entries of those taken, keep the matches; again until a page is full.
    while (taken.length <= limit) {
      const ids = await takeMerged<PositionedEvent, EventSource>(sources, refill, compareOrder, limit + 1 - taken.length);
      if (ids.length === 0) break;
      budget.checkpoint();
      const replies = (await execPipeline(ctx, "events", (p) => {
        for (const t of ids) p.xrange(eventsKeys.get(t.bucket)!, `${t.ms}-${t.seq}`, `${t.ms}-${t.seq}`);
      })) as ([string, string[]][] | null)[];
      budget.spend(ids.length);
      ids.forEach((t, i) => {
        // Trimmed from the bucket stream since its id was read: nothing to show.
        const entry = replies[i]?.[0];
        const event = entry ? toLeaseEvent(ctx.storeName, t.bucket, streamEntryToRaw(entry)) : null;
        if (event && matches(event)) taken.push({ ...t, event });
      });
    }
    if (plan.isIndexBuilding) partial ??= "index_building";
  } else {
    taken = await takeMerged<PositionedEvent, EventSource>(sources, refill, compareOrder, limit + 1);
  }
  if (isListHeadOnly && taken.length <= limit && partial === null) return null;
  let items = taken;
  if (listedFrom) {
    // Past the oldest id a full list still holds, that list may be missing events: what lies
    // there is not shown, and a window reaching back that far is answered in part.
    const cut = listedFrom;
    const isWindowDeeper = fromMs === undefined || fromMs < cut.ms;
    items = taken.filter((t) => compareEventPositions(t, cut) >= 0);
    if (isWindowDeeper && (isAscending || items.length <= limit)) partial ??= "index_depth";
  }
  const page: Page<LeaseEvent> = { items: items.slice(0, limit).map((t) => t.event!) };
  const last = items[limit - 1];
  if (partial) page.partial = { reason: partial, examined: budget.examined };
  else if (items.length > limit && last) page.nextCursor = formatEventId(`${last.ms}-${last.seq}`, last.bucket);
  return page;
}

function readEventCursor(cursor: string | undefined): EventPosition | null {
  if (!cursor) return null;
  const position = parseEventId(cursor);
  if (!position) throw new LeaseError("events: cursor is not one this store issued");
  return position;
}

/** Of the range start and the cursor bound, the one further along the reading direction. */
function pickInnerBound(rangeBound: string, cursorBound: string, isAscending: boolean): string {
  if (rangeBound === "-" || rangeBound === "+") return cursorBound;
  const a = boundPosition(rangeBound);
  const b = boundPosition(cursorBound);
  const idOrder = a.ms - b.ms || a.seq - b.seq;
  // On equal ids an exclusive bound is the tighter one either way.
  if (idOrder === 0) return a.isExclusive ? rangeBound : cursorBound;
  // Ascending: the larger lower bound wins; descending: the smaller upper bound wins.
  if (isAscending) return idOrder > 0 ? rangeBound : cursorBound;
  return idOrder < 0 ? rangeBound : cursorBound;
}

function boundPosition(bound: string): { ms: number; seq: number; isExclusive: boolean } {
  const isExclusive = bound.startsWith("(");
  const { ms, seq } = parseStreamId(isExclusive ? bound.slice(1) : bound);
  return { ms, seq, isExclusive };
}
