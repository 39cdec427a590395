import { describe, expect, it } from "vitest";
import { formatDuration, parseDuration } from "./duration";
import { LeaseError } from "./errors";

describe("parseDuration", () => {
  it.each([
    ["500ms", 500],
    ["10s", 10_000],
    ["1.5s", 1_500],
    ["2m", 120_000],
    ["1h", 3_600_000],
    [" 5s ", 5_000],
    ["0", 0],
    ["0s", 0],
  ])("%s is %i ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["10", "10 s", "s", "-1s", "1.0005s", "5d", ""])("refuses %j", (text) => {
    expect(() => parseDuration(text)).toThrow(LeaseError);
  });

  it("formats back to the shortest exact text", () => {
    expect([5_000, 1_500, 120_000, 3_600_000, 90_000].map(formatDuration)).toEqual(["5s", "1500ms", "2m", "1h", "90s"]);
  });
});
