import { HOLD_HISTOGRAM_BOUNDS_MS, LEASE_EVENT_KINDS, type CounterKind, type StatsBucket } from "./types";

/**
 * Hourly counts per prefix group, so a view under a prefix reads rollups instead of events.
 * A resource's group is its first PREFIX_GROUP_DEPTH segments followed by ":" when it has
 * more ("tenant_1:billing:2026-04" → "tenant_1:billing:"), or the resource itself when it has
 * no more ("tenant_1:nightly"). Every group is then itself a prefix filter, and a prefix
 * covers a group wholly or not at all as long as it reaches no deeper than the groups do
 * (isPrefixServedByGroups): its counts are the sum of the groups that start with it, exactly.
 * Not deeper: a third segment is often the resource itself, and rows per resource per hour
 * would grow with the resources.
 */
export const PREFIX_GROUP_DEPTH = 2;

export function prefixGroupOf(resource: string): string {
  const parts = resource.split(":");
  return parts.length > PREFIX_GROUP_DEPTH ? `${parts.slice(0, PREFIX_GROUP_DEPTH).join(":")}:` : resource;
}

/**
 * Whether the group counts answer `prefix` exactly: it has at most PREFIX_GROUP_DEPTH ":" and,
 * with that many, ends at the last one ("tenant_1:", "tenant_1:billing", "tenant_1:billing:"),
 * so no group holds resources both under it and not.
 */
export function isPrefixServedByGroups(prefix: string): boolean {
  const colons = prefix.split(":").length - 1;
  return colons < PREFIX_GROUP_DEPTH || (colons === PREFIX_GROUP_DEPTH && prefix.endsWith(":"));
}

/** A group's counts belong to a prefix view when the group starts with the prefix. */
export function isGroupUnder(group: string, prefix: string): boolean {
  return group.startsWith(prefix);
}

export function emptyStatsBucket(start: number): StatsBucket {
  const counts = Object.fromEntries([...LEASE_EVENT_KINDS, "renewed"].map((k) => [k, 0])) as Record<CounterKind, number>;
  return { start: new Date(start), counts, holdHistogram: new Array<number>(HOLD_HISTOGRAM_BOUNDS_MS.length + 1).fill(0), holdMsSum: 0, contendedByPrefix: {} };
}
