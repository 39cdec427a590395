import { describe, expect, it } from "vitest";
import { formatRate } from "./format";

describe("formatRate", () => {
  it("keeps one decimal, and never shows a slow rate as 0", () => {
    expect(formatRate(10.64)).toBe("10.6");
    expect(formatRate(0.5)).toBe("0.5");
    expect(formatRate(264 / 10_080)).toBe("0.026");
    expect(formatRate(0)).toBe("0");
  });
});
