import { GroupTally, groupDepthFor } from "../group-totals";

/**
 * Adds one bucket's `groups` hash (keys.ts) to the tallies, at the reader's depth: `h|<b>|<group>`
 * hold counts and `hs|<group>` hold ms (the projector), `s|<b>|<group>` slack counts (renew), each per
 * GROUP_TOTALS_DEPTH group. A group may itself contain '|': it is everything after
 * the field's leading parts.
 */
export function addGroupsHash(hash: Readonly<Record<string, string>>, prefixDepth: number, hold: GroupTally, slack: GroupTally): void {
  const depth = groupDepthFor(prefixDepth);
  for (const [field, raw] of Object.entries(hash)) {
    const value = Number(raw);
    if (field.startsWith("hs|")) {
      // A sum without a count: bucket 0 with n = 0 carries it.
      hold.add(field.slice(3), depth, 0, 0, value);
      continue;
    }
    const kind = field.slice(0, 2);
    if (kind !== "h|" && kind !== "s|") continue;
    const bar = field.indexOf("|", 2);
    if (bar === -1) continue;
    const bucket = Number(field.slice(2, bar));
    const group = field.slice(bar + 1);
    if (kind === "h|") hold.add(group, depth, bucket, value);
    else slack.add(group, depth, bucket, value);
  }
}
