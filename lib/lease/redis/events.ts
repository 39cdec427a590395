import { LeaseError } from "../errors";
import type { EventQuery, LeaseEvent, Page } from "../types";
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

export const DEFAULT_EVENTS_LIMIT = 100;

interface PositionedEvent extends EventPosition {
  event: LeaseEvent;
}

interface EventSource extends MergeSource<PositionedEvent> {
  /** The stream the entries are read from. */
  key: string;
  bucket: number;
  /** Range reads: next bound, an id (inclusive) or `(id` (exclusive), in reading direction. */
  bound: string;
  /** Range reads: the far end of the range. */
  limitBound: string;
  /** Id-list reads: ids still to fetch, in reading order, already inside range and cursor. */
  pendingIds?: string[];
}

/**
 * Where a query's events come from:
 * - `streams`: whole streams read by id range (the bucket streams, or the per-kind streams);
 * - `idList`: one resource's history list of ids, whose entries are fetched from its bucket stream.
 */
export type EventSourcePlan =
  | { streams: readonly { key: string; bucket: number }[] }
  | { idList: { listKey: string; streamKey: string; bucket: number } };

/**
 * Reads events newest-first (default) or oldest-first by merging sources by
 * stream id. The id's ms part is the event time, so `from` (inclusive) and `to`
 * (exclusive) bound the reads themselves; other filters (owner, task, lease id,
 * token) apply to what is read, so callers bound those reads with a window.
 * Events are totally ordered by (ms, seq, bucket); the cursor is the last
 * returned position, so pages have no gaps or repeats.
 */
export async function readEvents(ctx: RedisContext, plan: EventSourcePlan, query: EventQuery): Promise<Page<LeaseEvent>> {
  const isAscending = query.order === "asc";
  const limit = query.limit ?? DEFAULT_EVENTS_LIMIT;
  const after = readEventCursor(query.cursor);
  const kinds = query.kinds && query.kinds.length > 0 ? new Set<string>(query.kinds) : null;
  const fromMs = query.from?.getTime();
  const toMs = query.to?.getTime();
  const batchSize = Math.min(Math.max(limit + 1, 50), 1000);

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

  let sources: EventSource[];
  if ("streams" in plan) {
    sources = plan.streams.map(({ key, bucket }) => ({
      key,
      bucket,
      bound: startBound(bucket),
      limitBound: isAscending ? highId : lowId,
      buffer: [],
      isExhausted: false,
    }));
  } else {
    const { listKey, streamKey, bucket } = plan.idList;
    const [listed] = await execPipeline(ctx, "events", (p) => p.lrange(listKey, 0, -1));
    // The list is newest first; keep the ids inside the time range and after the cursor.
    const isInside = (id: string) => {
      const position = { ...parseStreamId(id), bucket };
      if (fromMs !== undefined && position.ms < fromMs) return false;
      if (toMs !== undefined && position.ms >= toMs) return false;
      if (!after) return true;
      const order = compareEventPositions(position, after);
      return isAscending ? order > 0 : order < 0;
    };
    const ids = [...new Set((listed as string[]) ?? [])].filter(isInside);
    if (isAscending) ids.reverse();
    sources = [{ key: streamKey, bucket, bound: "", limitBound: "", pendingIds: ids, buffer: [], isExhausted: ids.length === 0 }];
  }

  const refill = async (needy: readonly EventSource[]) => {
    const reads: Array<{ source: EventSource; isRange: boolean }> = [];
    const replies = await execPipeline(ctx, "events", (p) => {
      for (const s of needy) {
        if (s.pendingIds) {
          for (const id of s.pendingIds.splice(0, batchSize)) {
            p.xrange(s.key, id, id);
            reads.push({ source: s, isRange: false });
          }
          if (s.pendingIds.length === 0) s.isExhausted = true;
        } else {
          if (isAscending) p.xrange(s.key, s.bound, s.limitBound, "COUNT", batchSize);
          else p.xrevrange(s.key, s.bound, s.limitBound, "COUNT", batchSize);
          reads.push({ source: s, isRange: true });
        }
      }
    });
    reads.forEach(({ source: s, isRange }, i) => {
      const entries = (replies[i] as [string, string[]][]) ?? [];
      if (isRange) {
        if (entries.length < batchSize) s.isExhausted = true;
        const last = entries[entries.length - 1];
        if (last) s.bound = `(${last[0]}`;
      }
      // An id whose entry was trimmed from the capped bucket stream reads as nothing.
      for (const entry of entries) {
        const event = toLeaseEvent(ctx.storeName, s.bucket, streamEntryToRaw(entry));
        if (!event || !matches(event)) continue;
        s.buffer.push({ ...parseStreamId(entry[0]), bucket: s.bucket, event });
      }
    });
  };

  const compare = (a: PositionedEvent, b: PositionedEvent) => (isAscending ? compareEventPositions(a, b) : compareEventPositions(b, a));
  const taken = await takeMerged<PositionedEvent, EventSource>(sources, refill, compare, limit + 1);
  const page: Page<LeaseEvent> = { items: taken.slice(0, limit).map((t) => t.event) };
  const last = taken[limit - 1];
  if (taken.length > limit && last) page.nextCursor = formatEventId(`${last.ms}-${last.seq}`, last.bucket);
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
