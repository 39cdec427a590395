import { compareBytes } from "./codec";

/**
 * K-way merge over per-bucket sources that each yield items in the same order.
 * An item is taken only when every source that could still produce something
 * has at least one buffered item, so the merged order is exact (no gaps or
 * duplicates across pages). Sources are refilled together, so one refill is one
 * pipelined round trip however many buckets need it.
 */
export interface MergeSource<T> {
  buffer: T[];
  isExhausted: boolean;
}

export async function takeMerged<T, S extends MergeSource<T>>(
  sources: readonly S[],
  refill: (needy: readonly S[]) => Promise<void>,
  compare: (a: T, b: T) => number,
  count: number,
): Promise<T[]> {
  const taken: T[] = [];
  while (taken.length < count) {
    // Refill until each live source has a head (a filtered batch can come back empty).
    for (;;) {
      const needy = sources.filter((s) => s.buffer.length === 0 && !s.isExhausted);
      if (needy.length === 0) break;
      await refill(needy);
    }
    let best: S | undefined;
    for (const source of sources) {
      const head = source.buffer[0];
      if (head === undefined) continue;
      if (!best || compare(head, best.buffer[0]!) < 0) best = source;
    }
    if (!best) break;
    taken.push(best.buffer.shift()!);
  }
  return taken;
}

/**
 * Where a sorted set read in batches stands: the furthest entry read, and how many entries read
 * share its score. The next batch starts at that score (inclusive) and drops what sorts at or
 * before that entry, instead of skipping by offset: an entry removed meanwhile (a lease ending
 * while the read pages through) would shift an offset past entries not read yet.
 */
export interface ZsetPosition {
  score: number;
  member: string;
  ties: number;
}

/** The next batch's start score (inclusive) and size: `start` for the first, else the position's score, re-reading its ties. */
export function nextZsetBatch(position: ZsetPosition | undefined, start: number | string, batch: number): { from: number | string; count: number } {
  return position ? { from: position.score, count: position.ties + batch } : { from: start, count: batch };
}

/**
 * Folds one batch (a WITHSCORES reply of ZRANGEBYSCORE, or ZREVRANGEBYSCORE when `isDescending`,
 * asked for `count` entries) into the position: the entries after the old position, the new
 * position, how many entries the reply held, and whether the set has nothing further.
 */
export function advanceZsetPosition(
  position: ZsetPosition | undefined,
  reply: unknown,
  count: number,
  isDescending: boolean,
): { entries: { member: string; score: number }[]; position: ZsetPosition | undefined; read: number; isExhausted: boolean } {
  const flat = (reply as string[] | null) ?? [];
  const sign = isDescending ? -1 : 1;
  const isAfter = (e: { member: string; score: number }, p: ZsetPosition) => sign * (e.score - p.score || compareBytes(e.member, p.member)) > 0;
  const all: { member: string; score: number }[] = [];
  for (let j = 0; j + 1 < flat.length; j += 2) all.push({ member: flat[j]!, score: Number(flat[j + 1]) });
  const entries = position ? all.filter((e) => isAfter(e, position)) : all;
  const last = all[all.length - 1];
  const furthest = last && (!position || isAfter(last, position)) ? last : position;
  const next = furthest && { score: furthest.score, member: furthest.member, ties: all.filter((e) => e.score === furthest.score).length };
  return { entries, position: next, read: all.length, isExhausted: all.length < count };
}
