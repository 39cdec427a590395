import { describe, expect, it } from "vitest";
import { leaseHref, withParams } from "./links";
import { selectEntries } from "@/lib/console/shared/fan-out";
import { parseAtParam, parseEventsParams, parseLeaseDetailParams, parseLeasesParams, parseOverviewParams, toProblemSentence } from "./params";

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

  it("reads 30 days in whole UTC days, today included, and custom ranges past 7 days in days, up to 31", () => {
    const month = parseOverviewParams({ window: "30d" }, now);
    expect(month.ok && month.params.range).toMatchObject({ window: "30d", bucketMs: 86_400_000, from: new Date("2026-03-03T00:00:00Z"), to: new Date(now + 1) });
    const fortnight = parseOverviewParams({ from: "2026-03-18T00:00", to: "2026-04-01T00:00" }, now);
    expect(fortnight.ok && fortnight.params.range).toEqual({ window: "custom", bucketMs: 86_400_000, from: new Date("2026-03-18T00:00Z"), to: new Date("2026-04-01T00:00Z") });
    const longer = parseOverviewParams({ from: "2026-03-02T00:00", to: "2026-04-01T00:00" }, now);
    expect(longer.ok && longer.params.range).toMatchObject({ window: "custom", bucketMs: 86_400_000 });
    expect(parseOverviewParams({ from: "2026-02-28T23:00", to: "2026-04-01T00:00" }, now)).toMatchObject({ ok: false, problem: { param: "from" } });
    // The event pages read events, not rollups: neither 30d nor a range past 14 days.
    expect(parseEventsParams({ window: "30d" }, now)).toMatchObject({ ok: false, problem: { param: "window" } });
    expect(parseEventsParams({ from: "2026-03-02T00:00", to: "2026-04-01T00:00" }, now)).toMatchObject({
      ok: false,
      problem: { message: "The from parameter must be at most 14 days before to (a custom window spans at most 14 days)." },
    });
  });

  it("keeps hours up to 7 days, custom or not, and days from just past 7 days", () => {
    const week = parseOverviewParams({ from: "2026-03-25T12:00", to: "2026-04-01T12:00" }, now);
    expect(week.ok && week.params.range).toEqual({ window: "custom", bucketMs: 3_600_000, from: new Date("2026-03-25T12:00Z"), to: new Date("2026-04-01T12:00Z") });
    const past = parseOverviewParams({ from: "2026-03-25T11:59", to: "2026-04-01T12:00" }, now);
    expect(past.ok && past.params.range.bucketMs).toBe(86_400_000);
    // The event pages keep their range as given whatever its length: they read events, not day rollups.
    const events = parseEventsParams({ from: "2026-03-20T10:30", to: "2026-03-31T09:15" }, now);
    expect(events.ok && events.params.range).toMatchObject({ from: new Date("2026-03-20T10:30Z"), to: new Date("2026-03-31T09:15Z") });
    expect(events.ok && events.params.range?.requested).toBeUndefined();
  });

  it("widens a custom range past 7 days to the whole UTC days it touches, and keeps what was asked", () => {
    const range = parseOverviewParams({ from: "2026-03-20T10:30", to: "2026-03-31T09:15" }, now);
    expect(range.ok && range.params.range).toEqual({
      window: "custom",
      bucketMs: 86_400_000,
      from: new Date("2026-03-20T00:00Z"),
      to: new Date("2026-04-01T00:00Z"),
      requested: { from: new Date("2026-03-20T10:30Z"), to: new Date("2026-03-31T09:15Z") },
    });
    // Ending today: today so far, as window=30d counts it (to is exclusive).
    const today = parseOverviewParams({ from: "2026-03-20T10:30", to: "2026-04-01T06:00" }, now);
    expect(today.ok && today.params.range).toMatchObject({ from: new Date("2026-03-20T00:00Z"), to: new Date(now + 1), requested: { to: new Date("2026-04-01T06:00Z") } });
    // Up to now from a midnight: nothing to widen, nothing to say.
    const upToNow = parseOverviewParams({ window: "custom", from: "2026-03-20T00:00" }, now);
    expect(upToNow.ok && upToNow.params.range).toEqual({ window: "custom", bucketMs: 86_400_000, from: new Date("2026-03-20T00:00Z"), to: new Date(now + 1) });
    // A future end cannot widen past today.
    const future = parseOverviewParams({ from: "2026-03-22T00:00", to: "2026-04-03T00:00" }, now);
    expect(future.ok && future.params.range.to).toEqual(new Date(now + 1));
  });

  it("refuses a custom range whose whole UTC days exceed 31, saying which days they are", () => {
    // 30.75 days asked, 32 days touched: the previous window would reach past what Redis keeps.
    expect(parseOverviewParams({ from: "2026-02-27T12:00", to: "2026-03-30T06:00" }, now)).toMatchObject({
      ok: false,
      problem: {
        param: "from",
        message:
          "The from parameter must be at most 31 days before to, counted in whole UTC days (longer than 7 days, a custom window covers the whole UTC days it touches: 2026-02-27 to 2026-03-30).",
      },
    });
    // 30.5 days touching 31 days is fine.
    expect(parseOverviewParams({ from: "2026-02-28T12:00", to: "2026-03-31T00:00" }, now)).toMatchObject({ ok: true });
  });

  it("explains what is wrong", () => {
    expect(parseOverviewParams({ window: "1h", from: "2026-03-30T00:00Z" }, now)).toMatchObject({
      ok: false,
      problem: { param: "from", message: "The from parameter only applies with window=custom (window is 1h)." },
    });
    expect(parseOverviewParams({ window: "custom", from: "2026-01-01T00:00Z" }, now)).toMatchObject({
      ok: false,
      problem: { param: "from", message: "The from parameter must be at most 31 days before to (a custom window spans at most 31 days)." },
    });
    expect(parseOverviewParams({ window: ["1h", "6h"] }, now)).toMatchObject({ ok: false, problem: { param: "window" } });
  });
});

describe("problem messages", () => {
  // Shown on their own under "Can't show …", so each must read as a sentence that names the parameter.
  const isSentence = (message: string) => /^[A-Z].*[.!?]$/s.test(message);

  it("say which store is unknown and which stores exist", () => {
    const entries = ["pg-main", "redis-main"].map((name) => ({ store: { name } })) as unknown as Parameters<typeof selectEntries>[0];
    expect(selectEntries(entries, "x")).toEqual({
      ok: false,
      problem: { param: "store", message: 'No store is called "x". Known stores: pg-main, redis-main.' },
    });
    expect(selectEntries([], "x")).toMatchObject({ problem: { message: 'No store is called "x". This console watches no stores.' } });
  });

  it.each([
    [{ window: "2h" }, "window", /^The window parameter must be one of 15m, 1h, 6h, 24h, 7d, custom\.$/],
    [{ window: "custom" }, "from", /^The from parameter is needed for a custom window/],
    [{ from: "yesterday" }, "from", /^The from parameter must be an ISO 8601 date-time/],
    [{ prefix: " x" }, "prefix", /^Prefix must not start or end with whitespace\.$/],
    [{ store: "Bad Store" }, "store", /^Store name must be 1-63 chars/],
    [{ owner: "a", task: "b", kind: "exploded" }, "kind", /^The kind parameter has "exploded", which is not an event kind/],
  ] as const)("%j reads as a sentence about %s", (search, param, message) => {
    const result = parseEventsParams(search, Date.parse("2026-04-01T12:00:30Z"));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem.param).toBe(param);
    expect(result.problem.message).toMatch(message);
    expect(isSentence(result.problem.message), result.problem.message).toBe(true);
    expect(result.problem.message).not.toMatch(new RegExp(`^the URL parameter|parameter ${param} ${param}`, "i"));
  });

  it("quote zod's own wording as a reason rather than run it into the sentence", () => {
    expect(toProblemSentence("cursor", "Too big: expected string to have <=2048 characters")).toBe(
      "The cursor parameter is not valid (Too big: expected string to have <=2048 characters).",
    );
    expect(toProblemSentence("owner", "owner must not be empty")).toBe("Owner must not be empty.");
  });
});

describe("withParams", () => {
  it("changes filters and drops paging unless asked to keep it", () => {
    expect(withParams("prefix=a&cursor=c1&prev=c0", { state: "held" })).toBe("?prefix=a&state=held");
    expect(withParams("prefix=a", { prefix: null })).toBe("");
    expect(withParams("prefix=a&cursor=c1", { sort: "newest" }, true)).toBe("?prefix=a&cursor=c1&sort=newest");
  });
});

describe("at (the past view's instant)", () => {
  it("reads an ISO time, UTC when it has no zone, and names the parameter when it is not one", () => {
    expect(parseLeasesParams({ at: "2026-04-01T10:00:00.123Z", prefix: "tenant_1:" })).toMatchObject({
      ok: true,
      params: { at: new Date("2026-04-01T10:00:00.123Z"), prefix: "tenant_1:" },
    });
    expect(parseAtParam({ at: "2026-04-01T10:00" })).toEqual({ ok: true, params: { at: new Date("2026-04-01T10:00:00Z") } });
    expect(parseAtParam({})).toEqual({ ok: true, params: { at: undefined } });
    expect(parseLeasesParams({ at: "yesterday" })).toMatchObject({ ok: false, problem: { param: "at" } });
    expect(parseOverviewParams({ at: ["2026-04-01T10:00:00Z", "2026-04-01T11:00:00Z"] })).toMatchObject({ ok: false, problem: { param: "at" } });
  });
});

describe("at: the moment a page reads as of", () => {
  const now = Date.parse("2026-04-01T12:00:30Z");
  const at = "2026-04-01T09:15:00Z";
  const atMs = Date.parse(at);

  it("ends every named window at at, as it ends at now without it, on all three pages", () => {
    const events = parseEventsParams({ kind: "expired", window: "1h", at }, now);
    expect(events.ok && events.params.range).toEqual({ window: "1h", from: new Date(atMs - 3_600_000), to: new Date(atMs + 1), bucketMs: 60_000, endsAt: new Date(at) });
    const leases = parseLeasesParams({ state: "expired", window: "1h", at, store: "pg-main" }, now);
    expect(leases.ok && leases.params).toMatchObject({ state: "expired", store: "pg-main", at: new Date(at), range: { from: new Date(atMs - 3_600_000), to: new Date(atMs + 1) } });
    const overview = parseOverviewParams({ window: "6h", depth: "2", at }, now);
    expect(overview.ok && overview.params.range).toMatchObject({ window: "6h", from: new Date(atMs - 6 * 3_600_000), to: new Date(atMs + 1), endsAt: new Date(at) });
    // Without at, the same windows end now and say nothing about an end.
    const live = parseEventsParams({ window: "1h" }, now);
    expect(live.ok && live.params.range).toEqual({ window: "1h", from: new Date(now - 3_600_000), to: new Date(now + 1), bucketMs: 60_000 });
  });

  it("takes each page's default window when the link names none", () => {
    const events = parseEventsParams({ at }, now);
    expect(events.ok && events.params.range).toMatchObject({ window: "24h", from: new Date(atMs - 86_400_000), to: new Date(atMs + 1) });
    const leases = parseLeasesParams({ state: "expired", at }, now);
    expect(leases.ok && leases.params.range).toMatchObject({ window: "1h", from: new Date(atMs - 3_600_000), to: new Date(atMs + 1) });
    const overview = parseOverviewParams({ at }, now);
    expect(overview.ok && overview.params.range).toMatchObject({ window: "1h", to: new Date(atMs + 1) });
  });

  it("keeps a custom range with to where it is, and runs one without to up to at", () => {
    const fixed = parseOverviewParams({ window: "custom", from: "2026-04-01T08:00:00Z", to: "2026-04-01T10:00:00Z", at }, now);
    expect(fixed.ok && fixed.params.range).toEqual({ window: "custom", from: new Date("2026-04-01T08:00:00Z"), to: new Date("2026-04-01T10:00:00Z"), bucketMs: 60_000 });
    expect(fixed.ok && fixed.params.at).toEqual(new Date(at));
    const open = parseEventsParams({ from: "2026-04-01T08:00:00Z", at }, now);
    expect(open.ok && open.params.range).toEqual({ window: "custom", from: new Date("2026-04-01T08:00:00Z"), to: new Date(at), bucketMs: 60_000, endsAt: new Date(at) });
  });

  it("counts whole UTC days up to at for day buckets", () => {
    const month = parseOverviewParams({ window: "30d", at }, now);
    expect(month.ok && month.params.range).toMatchObject({ bucketMs: 86_400_000, from: new Date("2026-03-03T00:00:00Z"), to: new Date(atMs + 1) });
  });

  it("keeps every other filter of an alert link", () => {
    const leases = parseLeasesParams({ store: "redis-main", prefix: "tenant_1:billing", state: "overdue", sort: "held_longest", window: "6h", at }, now);
    expect(leases).toMatchObject({ ok: true, params: { store: "redis-main", prefix: "tenant_1:billing", state: "overdue", sort: "held_longest", at: new Date(at), range: { window: "6h" } } });
    const events = parseEventsParams({ store: "pg-main", kind: "renew_failed,lost", prefix: "tenant_1:", window: "1h", at }, now);
    expect(events).toMatchObject({ ok: true, params: { store: "pg-main", kinds: ["renew_failed", "lost"], prefix: "tenant_1:", at: new Date(at) } });
  });

  it("names at when it is not a time, on every page", () => {
    for (const parse of [parseEventsParams, parseLeasesParams, parseOverviewParams]) {
      expect(parse({ window: "1h", at: "an hour ago" }, now)).toMatchObject({ ok: false, problem: { param: "at" } });
    }
  });
});
