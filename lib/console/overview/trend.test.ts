import { describe, expect, it } from "vitest";
import { downsample } from "./get-overview";
import { describeChange } from "./trend";

describe("change against the previous window", () => {
  it("says the direction in words and the size with a sign", () => {
    expect(describeChange(29, 12)).toEqual({ direction: "up", text: "+142 %", label: "up 142 % on the previous window (12 → 29)" });
    expect(describeChange(7, 10)).toEqual({ direction: "down", text: "\u221230 %", label: "down 30 % on the previous window (10 → 7)" });
    expect(describeChange(0, 10).direction).toBe("down");
    expect(describeChange(5, 0)).toMatchObject({ direction: "new", text: "new" });
    expect(describeChange(0, 0)).toMatchObject({ direction: "same", text: "±0 %" });
    expect(describeChange(1001, 1000)).toMatchObject({ direction: "same" });
  });

  it("groups thousands in the counts", () => {
    expect(describeChange(25_000, 1_200).label).toBe("up 1,983 % on the previous window (1,200 → 25,000)");
  });
});

describe("sparklines", () => {
  it("sum neighbouring buckets into at most the given number of points, keeping the total", () => {
    const values = Array.from({ length: 169 }, (_, i) => i % 7);
    const spark = downsample(values, 24);
    expect(spark.length).toBeLessThanOrEqual(24);
    expect(spark.reduce((a, b) => a + b, 0)).toBe(values.reduce((a, b) => a + b, 0));
    expect(downsample([1, 2, 3], 24)).toEqual([1, 2, 3]);
    expect(downsample([1, 2, 3, 4, 5], 2)).toEqual([6, 9]);
  });
});
