import { HOLD_HISTOGRAM_BOUNDS_MS, SLACK_BUCKET_COUNT, SLACK_PREFIX_DEPTH, type GroupHistogram } from "./types";
import { resourcePrefix } from "./resource-prefix";

/**
 * Hold durations are kept per prefix group this many segments deep (the deepest a reader may
 * ask for); a shallower group is the sum of the deeper groups it contains.
 */
export const GROUP_TOTALS_DEPTH = 3;
export const HOLD_BUCKETS = HOLD_HISTOGRAM_BOUNDS_MS.length + 1;

/** Slack is recorded per SLACK_PREFIX_DEPTH group, so it can be read at most that deep. */
export function slackDepthFor(prefixDepth: number): number {
  return Math.min(prefixDepth, SLACK_PREFIX_DEPTH);
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
