import type { EventQuery, UnservableFilter } from "../types";
import { KIND_STREAM_KINDS } from "./projector";

/** How far back a Redis event read may go when nothing but the bucket streams can serve its filter. */
export const REDIS_STREAM_FILTER_MAX_WINDOW_MS = 24 * 3_600_000;

/**
 * Which event filters the Redis store can serve without reading its streams in memory:
 * resource (its history list), owner and task (their id lists), lease id and token (the grants
 * hashes name the resource), and kinds that all have a stream of their own. Without one of
 * those a filter is applied to the bucket streams as they are read. That is fine for what most
 * events match (no filter, acquired, released: a page fills at once) but a prefix may match
 * almost nothing, so a prefix read of the streams is allowed over 24 h at most; a longer
 * window is refused, naming what to use instead. Nothing is read to decide.
 */
export function findUnservableRedisEventFilter(q: EventQuery): UnservableFilter | null {
  const isIndexed =
    q.resource !== undefined ||
    q.owner !== undefined ||
    q.task !== undefined ||
    q.leaseId !== undefined ||
    q.fencingToken !== undefined ||
    (q.kinds !== undefined && q.kinds.length > 0 && q.kinds.every((k) => KIND_STREAM_KINDS.includes(k)));
  if (isIndexed || q.prefix === undefined) return null;
  const spanMs = q.from && q.to ? q.to.getTime() - q.from.getTime() : Infinity;
  // +1: a window "up to now" ends a millisecond after now (to is exclusive).
  if (spanMs <= REDIS_STREAM_FILTER_MAX_WINDOW_MS + 1) return null;
  return {
    param: "prefix",
    message:
      "On Redis a prefix filter alone reads the event streams, so it covers at most 24 h: use window=24h or shorter, " +
      `or add an indexed filter beside it: owner, task, resource, lease, token, or kind=${KIND_STREAM_KINDS.join(",")}`,
  };
}
