import { describe, expect, it } from "vitest";
import { parseOverviewParams } from "./params";
import { bucketEventsHref, buildTimeScale, drillDownWindow, formatBucketLabel, MAX_TICKS, tickLabels, timeTicks } from "./time-scale";
import { bucketAxis } from "@/lib/console/overview/get-overview";

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const iso = (t: number) => new Date(t).toISOString();

/** The overview's axis for a named window ending at `now`, as the read model builds it. */
function axisFor(window: string, now: number): { axis: number[]; bucketMs: number } {
  const parsed = parseOverviewParams({ window }, now);
  if (!parsed.ok) throw new Error(parsed.problem.message);
  const { from, to, bucketMs } = parsed.params.range;
  return { axis: bucketAxis(from.getTime(), to.getTime(), bucketMs), bucketMs };
}

describe("buckets per window", () => {
  const now = Date.parse("2026-11-26T08:17:42.123Z");
  it("uses minute buckets up to 6 h, hour buckets beyond and UTC days for 30 days, each aligned to UTC", () => {
    for (const [window, bucketMs, count] of [
      ["15m", MIN, 16],
      ["1h", MIN, 61],
      ["6h", MIN, 361],
      ["24h", HOUR, 25],
      ["7d", HOUR, 169],
      ["30d", DAY, 30],
    ] as const) {
      const { axis, bucketMs: size } = axisFor(window, now);
      expect(size, window).toBe(bucketMs);
      expect(axis.length, window).toBe(count);
      expect(axis.every((t) => t % bucketMs === 0), window).toBe(true);
      expect(axis.at(-1)! <= now && now < axis.at(-1)! + bucketMs, `${window}: the last bucket holds now`).toBe(true);
    }
  });
});

describe("shared time ticks", () => {
  it("spaces ticks evenly on round UTC times inside the window, never closer than a bucket", () => {
    const now = Date.parse("2026-11-26T08:17:00Z");
    for (const window of ["15m", "1h", "6h", "24h", "7d", "30d"]) {
      const { axis, bucketMs } = axisFor(window, now);
      const ticks = timeTicks(axis[0]!, axis.at(-1)!, bucketMs);
      expect(ticks.length, window).toBeGreaterThanOrEqual(3);
      expect(ticks.length, window).toBeLessThanOrEqual(MAX_TICKS);
      expect(ticks[0]! >= axis[0]! && ticks.at(-1)! <= axis.at(-1)!, window).toBe(true);
      const steps = new Set(ticks.slice(1).map((t, i) => t - ticks[i]!));
      expect(steps.size, window).toBe(1);
      const step = [...steps][0]!;
      expect(step, window).toBeGreaterThanOrEqual(bucketMs);
      expect(ticks.every((t) => t % step === 0), `${window} ticks on multiples of the step`).toBe(true);
    }
  });

  it("gives the 1 h window ticks every 10 minutes and the 7 d window one per UTC day", () => {
    const now = Date.parse("2026-11-26T08:17:00Z");
    const hour = axisFor("1h", now);
    expect(timeTicks(hour.axis[0]!, hour.axis.at(-1)!, hour.bucketMs).map(iso)).toEqual(
      ["07:20", "07:30", "07:40", "07:50", "08:00", "08:10"].map((hhmm) => `2026-11-26T${hhmm}:00.000Z`),
    );
    const week = axisFor("7d", now);
    const days = timeTicks(week.axis[0]!, week.axis.at(-1)!, week.bucketMs);
    expect(days.map(iso)).toEqual(["20", "21", "22", "23", "24", "25", "26"].map((d) => `2026-11-${d}T00:00:00.000Z`));
  });

  it("names the date on the first tick of a new UTC day, and only there", () => {
    // 24 h ending at 08:00: 6-hourly ticks cross one midnight.
    const start = Date.parse("2026-11-25T08:00:00Z");
    const ticks = timeTicks(start, start + 24 * HOUR, HOUR);
    const labels = tickLabels(ticks, start);
    expect(ticks.map((t) => labels.get(t))).toEqual(["12:00", "18:00", "Nov 26", "06:00"]);
    // A midnight that falls between ticks puts the date on the next one.
    const odd = [Date.parse("2026-11-25T22:30:00Z"), Date.parse("2026-11-26T01:30:00Z")];
    expect([...tickLabels(odd, odd[0]!).values()]).toEqual(["22:30", "Nov 26 01:30"]);
    // A window inside one day shows no dates.
    const morning = timeTicks(Date.parse("2026-11-26T07:00:00Z"), Date.parse("2026-11-26T08:00:00Z"), MIN);
    expect([...tickLabels(morning, morning[0]!).values()].every((l) => /^\d\d:\d\d$/.test(l))).toBe(true);
    // Daily ticks are all dates.
    const week = buildTimeScale([Date.parse("2026-11-19T09:00:00Z"), Date.parse("2026-11-26T08:00:00Z")], HOUR);
    expect([...week.labels.values()]).toEqual(["Nov 20", "Nov 21", "Nov 22", "Nov 23", "Nov 24", "Nov 25", "Nov 26"]);
  });
});

describe("a bucket's events", () => {
  it("links from the bucket start to the next bucket's start (exclusive), keeping the store", () => {
    const t = Date.parse("2026-11-26T07:05:00Z");
    const href = new URL(bucketEventsHref(t, MIN, { store: "pg-main", kind: "contended" }), "http://x");
    expect(href.pathname).toBe("/events");
    expect(Object.fromEntries(href.searchParams)).toEqual({
      store: "pg-main",
      kind: "contended",
      from: "2026-11-26T07:05:00.000Z",
      to: "2026-11-26T07:06:00.000Z",
    });
    expect(formatBucketLabel(t, MIN)).toBe("2026-11-26 07:05–07:06 UTC");
    expect(formatBucketLabel(Date.parse("2026-11-25T23:00:00Z"), HOUR)).toBe("2026-11-25 23:00–00:00 UTC");
  });
});

describe("day buckets", () => {
  it("names a day bucket by its UTC date, and links drill-downs of a month to its newest 14 days", () => {
    expect(formatBucketLabel(Date.parse("2026-11-26T00:00:00Z"), DAY)).toBe("2026-11-26 (UTC day)");
    const month = { window: "30d", from: "2026-10-28T00:00:00.000Z", to: "2026-11-26T08:17:00.001Z" };
    expect(drillDownWindow(month, 14 * DAY)).toEqual({ window: "custom", from: "2026-11-12T08:17:00.001Z", to: month.to });
    expect(drillDownWindow({ window: "7d", from: "2026-11-19T08:17:00.000Z", to: "2026-11-26T08:17:00.001Z" }, 14 * DAY)).toEqual({ window: "7d" });
    const custom = { window: "custom", from: "2026-11-20T00:00:00.000Z", to: "2026-11-26T00:00:00.000Z" };
    expect(drillDownWindow(custom, 14 * DAY)).toEqual(custom);
  });
});
