import { describe, expect, it } from "vitest";
import { leaseHref, withParams } from "./links";
import { parseLeaseDetailParams, parseOverviewParams } from "./params";

/** What the app router hands a page for a path: the segments after /locks/, still percent-encoded. */
function routeOf(href: string): { store: string; resource: string[] } {
  const [store, ...resource] = href.replace(/^\/locks\//, "").split("/");
  return { store: store!, resource };
}

describe("lease links", () => {
  it.each(["tenant_1:billing:2026-04", "a/b:c", "a//b", "/leading", "trailing/", "100%:done", "spaces ok?#&=", "ünïcode:ключ"])(
    "round-trips %j through the URL",
    (resource) => {
      const parsed = parseLeaseDetailParams(routeOf(leaseHref("pg-main", resource)));
      expect(parsed).toEqual({ ok: true, params: { store: "pg-main", resource } });
    },
  );

  it("rejects a bad store name or resource with the parameter named", () => {
    expect(parseLeaseDetailParams({ store: "Bad Store", resource: ["x"] })).toMatchObject({ ok: false, problem: { param: "store" } });
    expect(parseLeaseDetailParams({ store: "pg", resource: ["%E0%A4%A"] })).toMatchObject({ ok: false, problem: { param: "resource" } });
    expect(parseLeaseDetailParams({ store: "pg", resource: ["x".repeat(600)] })).toMatchObject({ ok: false, problem: { param: "resource" } });
  });
});

describe("windows", () => {
  const now = Date.parse("2026-04-01T12:00:30Z");
  it("picks minute buckets up to 6 hours and hours beyond", () => {
    const hour = parseOverviewParams({ window: "1h" }, now);
    expect(hour.ok && hour.params.range).toMatchObject({ window: "1h", bucketMs: 60_000 });
    const six = parseOverviewParams({ window: "6h" }, now);
    expect(six.ok && six.params.range.bucketMs).toBe(60_000);
    const day = parseOverviewParams({ window: "24h" }, now);
    expect(day.ok && day.params.range.bucketMs).toBe(3_600_000);
    const week = parseOverviewParams({ window: "7d" }, now);
    expect(week.ok && week.params.range.bucketMs).toBe(3_600_000);
    const custom = parseOverviewParams({ from: "2026-03-30T00:00", to: "2026-04-01T00:00" }, now);
    expect(custom.ok && custom.params.range).toMatchObject({ window: "custom", bucketMs: 3_600_000 });
    expect(custom.ok && custom.params.range.from.toISOString()).toBe("2026-03-30T00:00:00.000Z");
  });

  it("explains what is wrong", () => {
    expect(parseOverviewParams({ window: "1h", from: "2026-03-30T00:00Z" }, now)).toMatchObject({
      ok: false,
      problem: { param: "from", message: "only applies with window=custom (window is 1h)" },
    });
    expect(parseOverviewParams({ window: "custom", from: "2026-01-01T00:00Z" }, now)).toMatchObject({
      ok: false,
      problem: { param: "from", message: "a custom window can span at most 14 days" },
    });
    expect(parseOverviewParams({ window: ["1h", "6h"] }, now)).toMatchObject({ ok: false, problem: { param: "window" } });
  });
});

describe("withParams", () => {
  it("changes filters and drops paging unless asked to keep it", () => {
    expect(withParams("prefix=a&cursor=c1&prev=c0", { state: "held" })).toBe("?prefix=a&state=held");
    expect(withParams("prefix=a", { prefix: null })).toBe("");
    expect(withParams("prefix=a&cursor=c1", { sort: "newest" }, true)).toBe("?prefix=a&cursor=c1&sort=newest");
  });
});
