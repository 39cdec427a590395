import { describe, expect, it } from "vitest";
import { ZAcquireInput, ZReleaseInput } from "../validation";
import { readPlainAcquireInput, readPlainReleaseInput } from "./hot-input";

const TEXTS = ["a", "tenant_1:billing:2026-04", " lead", "trail ", "in side", "tab\there", "", "ü-umlaut", "x".repeat(256), "x".repeat(257), "y".repeat(512), "y".repeat(513), "\u0007bell", "~"];
const TTLS: unknown[] = [100, 99, 30_000, 86_400_000, 86_400_001, 1.5, "1000", Number.NaN, null];

describe("plain-input pre-check", () => {
  it("accepts acquire input only when zod accepts it, with the same values", () => {
    let accepted = 0;
    for (const resource of TEXTS)
      for (const owner of TEXTS.slice(0, 6))
        for (const ttlMs of TTLS) {
          const input = { resource, owner, task: owner, ttlMs };
          const fast = readPlainAcquireInput(input);
          const zod = ZAcquireInput.safeParse(input);
          if (fast !== null) {
            accepted += 1;
            expect(zod.success).toBe(true);
            expect(fast).toEqual(zod.data);
          }
        }
    expect(accepted).toBeGreaterThan(0);
  });

  it("leaves extra or missing keys, and non-plain objects, to zod", () => {
    const base = { resource: "r", owner: "o", task: "t", ttlMs: 1000 };
    expect(readPlainAcquireInput(base)).toEqual(base);
    expect(readPlainAcquireInput({ ...base, extra: 1 })).toBeNull();
    expect(readPlainAcquireInput({ resource: "r", owner: "o", task: "t" })).toBeNull();
    expect(readPlainAcquireInput(Object.assign(Object.create({ ttlMs: 1000 }) as object, { resource: "r", owner: "o", task: "t" }))).toBeNull();
    expect(readPlainAcquireInput(null)).toBeNull();
    expect(readPlainReleaseInput({ resource: "r", leaseId: "id", ttlMs: 1 })).toBeNull();
  });

  it("accepts release input only when zod accepts it", () => {
    for (const resource of TEXTS)
      for (const leaseId of [...TEXTS, "0f8fad5b-d9cb-469f-a165-70867728950e"]) {
        const input = { resource, leaseId };
        const fast = readPlainReleaseInput(input);
        if (fast !== null) expect(ZReleaseInput.safeParse(input)).toEqual({ success: true, data: fast });
      }
  });
});
