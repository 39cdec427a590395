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

interface StreamSource extends MergeSource<PositionedEvent> {
  key: string;
  bucket: number;
  /** Next read bound: an id (inclusive) or `(id` (exclusive), in the direction of reading. */
  bound: string;
  /** The far end of the range. */
  limitBound: string;
}

export interface EventStreams {
  /** One stream per source: every bucket stream, or just the one resource's stream. */
  streams: readonly { key: string; bucket: number }[];
}

const MAX_SEQ = "18446744073709551615";

/**
 * Reads events newest-first (default) or oldest-first by merging the bucket
 * streams by stream id. The time range maps onto stream ids (the id's ms part is
 * the event time), so `from`/`to` bound the reads themselves; `from` is
 * inclusive and `to` exclusive. Other filters are applied to what is read.
 */
export async function readEvents(ctx: RedisContext, source: EventStreams, query: EventQuery): Promise<Page<LeaseEvent>> {
  const isAscending = query.order === "asc";
  const limit = query.limit ?? DEFAULT_EVENTS_LIMIT;
  const after = readEventCursor(query.cursor);
  const kinds = query.kinds && query.kinds.length > 0 ? new Set<string>(query.kinds) : null;
  const lowId = query.from ? `${query.from.getTime()}-0` : "-";
  const highId = query.to ? `(${query.to.getTime()}-0` : "+";
  const batchSize = Math.min(Math.max(limit + 1, 50), 1000);

  const matches = (e: LeaseEvent) =>
    (kinds === null || kinds.has(e.kind)) &&
    (query.resource === undefined || e.resource === query.resource) &&
    (query.prefix === undefined || e.resource.startsWith(query.prefix)) &&
    (query.owner === undefined || e.owner === query.owner);

  const sources: StreamSource[] = source.streams.map(({ key, bucket }) => {
    let bound = isAscending ? lowId : highId;
    if (after) {
      const cursorId = `${after.ms}-${after.seq}`;
      // The cursor is a position in the (ms, seq, bucket) order: a bucket that sorts
      // before the cursor's bucket may still have an entry with the same stream id.
      const isInclusive = isAscending ? bucket > after.bucket : bucket < after.bucket;
      const cursorBound = isInclusive ? cursorId : `(${cursorId}`;
      bound = pickInnerBound(bound, cursorBound, isAscending);
    }
    return { key, bucket, bound, limitBound: isAscending ? highId : lowId, buffer: [], isExhausted: false };
  });

  const refill = async (needy: readonly StreamSource[]) => {
    const replies = await execPipeline(ctx, "events", (p) => {
      for (const s of needy) {
        if (isAscending) p.xrange(s.key, s.bound, s.limitBound, "COUNT", batchSize);
        else p.xrevrange(s.key, s.bound, s.limitBound, "COUNT", batchSize);
      }
    });
    needy.forEach((s, i) => {
      const entries = (replies[i] as [string, string[]][]) ?? [];
      if (entries.length < batchSize) s.isExhausted = true;
      const last = entries[entries.length - 1];
      if (last) s.bound = `(${last[0]}`;
      for (const entry of entries) {
        const event = toLeaseEvent(ctx.storeName, s.bucket, streamEntryToRaw(entry));
        if (!event || !matches(event)) continue;
        s.buffer.push({ ...parseStreamId(entry[0]), bucket: s.bucket, event });
      }
    });
  };

  const compare = (a: PositionedEvent, b: PositionedEvent) => (isAscending ? compareEventPositions(a, b) : compareEventPositions(b, a));
  const taken = await takeMerged<PositionedEvent, StreamSource>(sources, refill, compare, limit + 1);
  const items = taken.slice(0, limit).map((t) => t.event);
  const page: Page<LeaseEvent> = { items };
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
  const idOrder = a.ms - b.ms || (BigInt(a.seq) < BigInt(b.seq) ? -1 : BigInt(a.seq) > BigInt(b.seq) ? 1 : 0);
  // On equal ids an exclusive bound is the tighter one either way.
  if (idOrder === 0) return a.isExclusive ? rangeBound : cursorBound;
  // Ascending: the larger lower bound wins; descending: the smaller upper bound wins.
  if (isAscending) return idOrder > 0 ? rangeBound : cursorBound;
  return idOrder < 0 ? rangeBound : cursorBound;
}

function boundPosition(bound: string): { ms: number; seq: string; isExclusive: boolean } {
  const isExclusive = bound.startsWith("(");
  const [ms, seq] = (isExclusive ? bound.slice(1) : bound).split("-");
  return { ms: Number(ms), seq: seq ?? (isExclusive ? MAX_SEQ : "0"), isExclusive };
}
