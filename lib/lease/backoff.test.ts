import { describe, expect, it } from "vitest";
import { computeBackoffCeiling, computeBackoffDelay, jitterAround } from "./backoff";

describe("backoff", () => {
  const policy = { baseMs: 10, capMs: 300 };

  it("doubles the ceiling per attempt up to the cap", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 100, 5000].map((a) => computeBackoffCeiling(policy, a))).toEqual([10, 20, 40, 80, 160, 300, 300, 300, 300]);
  });

  it("full jitter spans [0, ceiling) and never exceeds the time left", () => {
    expect(computeBackoffDelay(policy, 3, 1_000, () => 0)).toBe(0);
    expect(computeBackoffDelay(policy, 3, 1_000, () => 0.5)).toBe(40);
    expect(computeBackoffDelay(policy, 3, 1_000, () => 0.999)).toBeCloseTo(79.92);
    expect(computeBackoffDelay(policy, 9, 25, () => 0.999)).toBe(25);
    expect(computeBackoffDelay(policy, 9, -5, () => 0.5)).toBe(0);
  });

  it("heartbeat jitter stays within ±fraction", () => {
    expect(jitterAround(300, 0.1, () => 0)).toBeCloseTo(270);
    expect(jitterAround(300, 0.1, () => 0.5)).toBeCloseTo(300);
    expect(jitterAround(300, 0.1, () => 1)).toBeCloseTo(330);
  });
});
