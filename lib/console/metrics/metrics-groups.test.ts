/**
 * Prefix-group label cardinality on /api/metrics: bounded by configuration, with the
 * groups holding the oldest leases named first and the rest in "other".
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "@/lib/server/store-config";
import { oldestByGroup, OTHER_GROUP, readMetricsConfig } from "./get-metrics-text";
import type { Lease } from "@leasewatch/lease";

const NOW = Date.parse("2026-11-26T08:00:00Z");
function lease(resource: string, heldSeconds: number): Lease {
  const acquiredAt = new Date(NOW - heldSeconds * 1000);
  return {
    store: "pg-main", resource, leaseId: `id-${resource}`, owner: "w", task: "t", fencingToken: "1",
    acquiredAt, renewedAt: acquiredAt, expiresAt: new Date(NOW + 10_000), ttlMs: 30_000, renewals: 0,
  };
}

describe("prefix groups on /api/metrics", () => {
  // Longest-held first, as list({ sort: "held_longest" }) returns them.
  const leases = [
    lease("t1:billing:a", 900),
    lease("t2:export:x", 600),
    lease("t1:billing:b", 500),
    lease("t3:report:y", 300),
    lease("t4:sync:z", 120),
    lease("t5:sync:q", 60),
  ];

  it("names each group by its first N segments with its oldest lease's age", () => {
    expect(oldestByGroup(leases, NOW, { prefixDepth: 2, maxGroups: 20 })).toEqual(
      new Map([["t1:billing", 900], ["t2:export", 600], ["t3:report", 300], ["t4:sync", 120], ["t5:sync", 60]]),
    );
    expect(oldestByGroup(leases, NOW, { prefixDepth: 1, maxGroups: 20 }).get("t1")).toBe(900);
  });

  it("keeps at most maxGroups named groups; the rest share 'other', never older than a named one", () => {
    const groups = oldestByGroup(leases, NOW, { prefixDepth: 2, maxGroups: 2 });
    expect(groups).toEqual(new Map([["t1:billing", 900], ["t2:export", 600], [OTHER_GROUP, 300]]));
    expect(groups.size).toBeLessThanOrEqual(3);
  });

  it("reads its bounds from the environment and refuses bad ones with the variable's name", () => {
    expect(readMetricsConfig({})).toEqual({ prefixDepth: 2, maxGroups: 20 });
    expect(readMetricsConfig({ LEASEWATCH_METRICS_PREFIX_DEPTH: "3", LEASEWATCH_METRICS_MAX_GROUPS: "50" })).toEqual({ prefixDepth: 3, maxGroups: 50 });
    expect(() => readMetricsConfig({ LEASEWATCH_METRICS_PREFIX_DEPTH: "4" })).toThrow(ConfigError);
    expect(() => readMetricsConfig({ LEASEWATCH_METRICS_PREFIX_DEPTH: "4" })).toThrow(/LEASEWATCH_METRICS_PREFIX_DEPTH must be 1, 2 or 3/);
    expect(() => readMetricsConfig({ LEASEWATCH_METRICS_MAX_GROUPS: "many" })).toThrow(/LEASEWATCH_METRICS_MAX_GROUPS must be a whole number from 1 to 200/);
    expect(() => readMetricsConfig({ LEASEWATCH_METRICS_MAX_GROUPS: "0" })).toThrow(/LEASEWATCH_METRICS_MAX_GROUPS/);
  });
});
