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
