import { describe, expect, it } from "vitest";
import { findHistoryViolations } from "@leasewatch/lease/testing";
import type { LeaseEvent } from "@leasewatch/lease";
import { createRandom } from "../workload/random";
import { assertValidHistory, generateHistory, toLeaseEvent } from "./history";

const HOUR = 3_600_000;
/** Redis-style tokens (the store clock in µs), as the Redis backfill draws them. */
const microsecondTokens = (n: number, at: number) => String(BigInt(Math.round(at)) * 1000n + BigInt(n % 1000));

function generate(seed: number, tokenFor?: (n: number, at: number) => string): LeaseEvent[] {
  const to = Date.UTC(2026, 10, 26, 6);
  const events = generateHistory({ from: to - 2 * HOUR, to, targetEvents: 2 * 3_600 * 4, random: createRandom(seed), ...(tokenFor ? { tokenFor } : {}) });
  return [...events].map((e, i) => toLeaseEvent(e, i));
}

/** Two consecutive holds of one resource, by index into `events`. */
function consecutiveHolds(events: readonly LeaseEvent[]): { first: number; second: number } {
  const lastAcquired = new Map<string, number>();
  for (const [i, e] of events.entries()) {
    if (e.kind !== "acquired") continue;
    const previous = lastAcquired.get(e.resource);
    const ended = events.find((x) => x.leaseId === events[previous ?? -1]?.leaseId && x.kind === "released");
    if (previous !== undefined && ended && (ended.holdMs ?? 0) > 10) return { first: previous, second: i };
    lastAcquired.set(e.resource, i);
  }
  throw new Error("no resource was held twice with a release");
}

describe("generateHistory", () => {
  it.each([1, 2, 3])("seed %i: a history the live stores could have written (no overlap, tokens up, one end per acquire)", (seed) => {
    for (const events of [generate(seed), generate(seed, microsecondTokens)]) {
      expect(events.length).toBeGreaterThan(10_000);
      for (let i = 1; i < events.length; i++) expect(events[i]!.at >= events[i - 1]!.at).toBe(true);
      expect(findHistoryViolations(events)).toEqual([]);
      const kinds = new Set(events.map((e) => e.kind));
      for (const kind of ["acquired", "released", "expired", "contended", "renew_failed", "lost", "fencing_rejected"] as const) expect(kinds).toContain(kind);
    }
  });
});

describe("assertValidHistory refuses an impossible history", () => {
  it("two holders of one resource at once", () => {
    const events = generate(4);
    assertValidHistory(events, "good");
    const { first, second } = consecutiveHolds(events);
    // The second holder "acquires" one millisecond after the first did: a mutual-exclusion failure on record.
    const overlapped = events.map((e, i) => (i === second ? { ...e, at: new Date(events[first]!.at.getTime() + 1) } : e));
    expect(() => assertValidHistory(overlapped, "overlapped")).toThrow(/overlapped: refusing .* overlapping/);
  });

  it("tokens going down, an acquire never ended, a lease ended twice, holdMs at odds with the times", () => {
    const events = generate(5);
    const { first, second } = consecutiveHolds(events);
    const swapped = events.map((e, i) => (i === second ? { ...e, fencingToken: "0" } : e));
    expect(() => assertValidHistory(swapped, "x")).toThrow(/got token 0 after/);

    const endOf = (i: number) => events.findIndex((e) => e.leaseId === events[i]!.leaseId && e.kind === "released");
    const unended = events.filter((_, i) => i !== endOf(first));
    expect(() => assertValidHistory(unended, "x")).toThrow(/never ended and is not held/);

    const twice = [...events, { ...events[endOf(first)]!, id: "again", kind: "expired" as const }];
    expect(() => assertValidHistory(twice, "x")).toThrow(/ended 2 times/);

    const stretched = events.map((e, i) => (i === endOf(first) ? { ...e, holdMs: (e.holdMs ?? 0) + 5_000 } : e));
    expect(() => assertValidHistory(stretched, "x")).toThrow(/says held/);
  });

  it("a fencing rejection that saw another store's token", () => {
    const events = generate(6);
    const rejection = events.findIndex((e) => e.kind === "fencing_rejected");
    expect(rejection).toBeGreaterThanOrEqual(0);
    const foreign = events.map((e, i) => (i === rejection ? { ...e, detail: { ...e.detail, seenToken: "1795666012345678" } } : e));
    expect(() => assertValidHistory(foreign, "x")).toThrow(/refused at .* having seen 1795666012345678/);
  });
});
