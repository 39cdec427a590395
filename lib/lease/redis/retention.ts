import { execPipeline, parseTimeReply, type RedisContext } from "./connection";
import { buildKindStreamKey, type BucketKeys } from "./keys";
import { KIND_STREAM_KINDS } from "./projector";

/**
 * Event retention off the hot path: the scripts only cap each bucket stream by length (about
 * eventsMaxLen projected entries, see append_event in scripts.ts); a time (`days`) and a memory budget (`maxBytes`) are applied here,
 * by the sweep after it has projected. Each bucket stream and per-kind stream is trimmed from its
 * oldest end with an exact `XTRIM MINID`, never at or past the bucket's projection cursor, so every
 * trimmed event has reached the read models and the lifetime totals first. The per-kind streams
 * only ever hold projected entries (same ids), so the same bound holds for them.
 *
 * The owner / task / resource id lists and the grants hashes are left to their own caps and TTLs
 * (15 days): an id whose event was trimmed simply resolves to nothing.
 */

/** Entries one run removes from one stream at most: bounds each run; a backlog goes over several sweeps. */
export const RETENTION_TRIM_BATCH = 2_000;
/** Trim to this share of the memory budget, so a stream node left partly deleted does not keep it over. */
const MEMORY_HEADROOM = 0.9;
const DAY_MS = 86_400_000;

export interface RetentionPolicy {
  days: number | null;
  maxBytes: number | null;
}

export interface TrimResult {
  /** Entries removed from the bucket and per-kind streams by this run. */
  trimmed: number;
  /** Nothing was left to trim at the end of this run (the caps did not stop it). */
  isDone: boolean;
}

interface StreamTarget {
  key: string;
  /** The bucket's projection cursor: entries at or after it are kept. */
  cursor: string;
}

/** Compares two stream ids (`ms-seq`) as ids, not strings. */
export function compareStreamIds(a: string, b: string): number {
  const [am, as = "0"] = a.split("-");
  const [bm, bs = "0"] = b.split("-");
  const byMs = Number(am) - Number(bm);
  return byMs !== 0 ? Math.sign(byMs) : Math.sign(Number(as) - Number(bs));
}

function minId(a: string, b: string): string {
  return compareStreamIds(a, b) <= 0 ? a : b;
}

/** One retention run over a store's buckets (see above). */
export async function trimEventStreams(ctx: RedisContext, bucketKeys: readonly BucketKeys[], policy: RetentionPolicy): Promise<TrimResult> {
  if (policy.days === null && policy.maxBytes === null) return { trimmed: 0, isDone: true };
  const head = await execPipeline(ctx, "trimEvents", (p) => {
    p.time();
    for (const keys of bucketKeys) p.hget(keys.proj, "last");
  });
  const nowMs = parseTimeReply(head[0]);
  // Only projected entries may go: a bucket that was never projected keeps everything.
  const targets: StreamTarget[] = [];
  bucketKeys.forEach((keys, b) => {
    const cursor = head[b + 1] as string | null;
    if (!cursor) return;
    targets.push({ key: keys.events, cursor });
    for (const kind of KIND_STREAM_KINDS) targets.push({ key: buildKindStreamKey(keys, kind), cursor });
  });
  if (targets.length === 0) return { trimmed: 0, isDone: true };

  // Per stream: the exclusive bound entries may be trimmed below, and how many may go.
  const bounds = targets.map((t) => ({ key: t.key, below: t.cursor, remove: RETENTION_TRIM_BATCH }));
  let trimmed = 0;
  let isDone = true;
  if (policy.days !== null) {
    const boundary = `${nowMs - policy.days * DAY_MS}-0`;
    const dayBounds = bounds.map((b) => ({ ...b, below: minId(b.below, boundary) }));
    const result = await trimBelow(ctx, dayBounds);
    trimmed += result.trimmed;
    isDone &&= result.isDone;
  }
  if (policy.maxBytes !== null) {
    const result = await trimToMemory(ctx, bounds, policy.maxBytes);
    trimmed += result.trimmed;
    isDone &&= result.isDone;
  }
  return { trimmed, isDone };
}

/**
 * Removes, from each stream, its oldest entries below `below`, at most `remove` of them: the ids
 * are read first (XRANGE … COUNT remove+1) so the exact MINID removes no more than that.
 */
async function trimBelow(ctx: RedisContext, bounds: { key: string; below: string; remove: number }[]): Promise<TrimResult> {
  const wanted = bounds.filter((b) => b.remove > 0);
  if (wanted.length === 0) return { trimmed: 0, isDone: true };
  const ranges = (await execPipeline(ctx, "trimEvents", (p) => {
    for (const b of wanted) p.xrange(b.key, "-", `(${b.below}`, "COUNT", b.remove + 1);
  })) as ([string, string[]][] | null)[];
  let isDone = true;
  const trims: { key: string; minid: string }[] = [];
  wanted.forEach((b, i) => {
    const entries = ranges[i] ?? [];
    if (entries.length === 0) return;
    if (entries.length > b.remove) {
      // More are due than this run may remove: stop at the first one kept.
      isDone = false;
      trims.push({ key: b.key, minid: entries[b.remove]![0] });
    } else {
      trims.push({ key: b.key, minid: b.below });
    }
  });
  if (trims.length === 0) return { trimmed: 0, isDone };
  const removed = await execPipeline(ctx, "trimEvents", (p) => {
    for (const t of trims) p.xtrim(t.key, "MINID", t.minid);
  });
  return { trimmed: removed.reduce<number>((n, r) => n + Number(r ?? 0), 0), isDone };
}

/**
 * Brings the streams' memory (MEMORY USAGE, sampled) under `maxBytes`: when over, every stream
 * gives up the same share of its oldest entries, so each keeps about the same span of time.
 */
async function trimToMemory(ctx: RedisContext, bounds: { key: string; below: string; remove: number }[], maxBytes: number): Promise<TrimResult> {
  const sizes = await measureStreams(ctx, bounds.map((b) => b.key));
  const total = sizes.reduce((n, s) => n + s.bytes, 0);
  if (total <= maxBytes) return { trimmed: 0, isDone: true };
  const keepShare = (maxBytes * MEMORY_HEADROOM) / total;
  const plan = bounds.map((b, i) => {
    const length = sizes[i]!.length;
    const due = length - Math.floor(length * keepShare);
    return { ...b, remove: Math.min(due, b.remove) };
  });
  const isCapped = plan.some((p, i) => p.remove < sizes[i]!.length - Math.floor(sizes[i]!.length * keepShare));
  const result = await trimBelow(ctx, plan);
  return { trimmed: result.trimmed, isDone: result.isDone && !isCapped };
}

/** Bytes (sampled) and length of each stream; a missing stream is 0 and 0. */
export async function measureStreams(ctx: RedisContext, keys: readonly string[]): Promise<{ bytes: number; length: number }[]> {
  const replies = await execPipeline(ctx, "trimEvents", (p) => {
    for (const key of keys) {
      p.memory("USAGE", key);
      p.xlen(key);
    }
  });
  return keys.map((_, i) => ({ bytes: Number(replies[2 * i] ?? 0), length: Number(replies[2 * i + 1] ?? 0) }));
}
