import { HOLD_HISTOGRAM_BOUNDS_MS, SLACK_BUCKET_COUNT, SLACK_PREFIX_DEPTH, type GroupHistogram } from "./types";
import { resourcePrefix } from "./resource-prefix";

/**
 * Lifetime histograms are kept per prefix group this many segments deep (as renewal slack is
 * recorded); a shallower group is the sum of the groups it contains. Not deeper: a third
 * segment is often the resource itself (`tenant:job:2026-04`), and lifetime rows per resource
 * would grow without bound.
 */
export const GROUP_TOTALS_DEPTH = SLACK_PREFIX_DEPTH;
export const HOLD_BUCKETS = HOLD_HISTOGRAM_BOUNDS_MS.length + 1;

/** The depth lifetime histograms are read at for a requested prefix depth: at most GROUP_TOTALS_DEPTH. */
export function groupDepthFor(prefixDepth: number): number {
  return Math.min(prefixDepth, GROUP_TOTALS_DEPTH);
}

/** Per-group bucket counts (and sums) being added up, keyed by group at the reader's depth. */
export class GroupTally {
  private readonly groups = new Map<string, { counts: number[]; sum: number }>();

  constructor(private readonly buckets: number) {}

  add(deepGroup: string, depth: number, bucket: number, n: number, sum = 0): void {
    if (!Number.isInteger(bucket) || bucket < 0 || bucket >= this.buckets || !Number.isFinite(n)) return;
    const group = resourcePrefix(deepGroup, depth);
    let g = this.groups.get(group);
    if (!g) this.groups.set(group, (g = { counts: new Array<number>(this.buckets).fill(0), sum: 0 }));
    g.counts[bucket] = (g.counts[bucket] ?? 0) + n;
    if (Number.isFinite(sum)) g.sum += sum;
  }

  /**
   * The `maxGroups` groups with the most samples (ties by name, so every reader names the same
   * ones), then the rest summed under `group: null` when there is any. Chosen by lifetime counts,
   * which only grow, so a group's series does not come and go between scrapes.
   */
  top(maxGroups: number, withSum: boolean): GroupHistogram[] {
    const total = (counts: number[]) => counts.reduce((a, b) => a + b, 0);
    const ranked = [...this.groups.entries()]
      .map(([group, g]) => ({ group, ...g, n: total(g.counts) }))
      .sort((a, b) => b.n - a.n || (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
    const named: GroupHistogram[] = ranked.slice(0, maxGroups).map((g) => ({ group: g.group, counts: g.counts, ...(withSum ? { sum: g.sum } : {}) }));
    const rest = ranked.slice(maxGroups);
    if (rest.length > 0) {
      const counts = new Array<number>(this.buckets).fill(0);
      let sum = 0;
      for (const g of rest) {
        g.counts.forEach((n, i) => (counts[i] = (counts[i] ?? 0) + n));
        sum += g.sum;
      }
      named.push({ group: null, counts, ...(withSum ? { sum } : {}) });
    }
    return named;
  }
}

export function newHoldTally(): GroupTally {
  return new GroupTally(HOLD_BUCKETS);
}
export function newSlackTally(): GroupTally {
  return new GroupTally(SLACK_BUCKET_COUNT);
}
