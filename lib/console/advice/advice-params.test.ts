import { describe, expect, it } from "vitest";
import { parseAdviceParams } from "./advice-params";
import { adviceWindowWithin, MAX_ADVICE_SPAN_MS } from "./advice-windows";

const NOW = Date.parse("2026-11-26T08:00:00Z");

describe("advice URL parameters", () => {
  it("defaults to the last hour and keeps store and prefix", () => {
    const r = parseAdviceParams(new URLSearchParams("store=pg-main&prefix=tenant_1:billing&depth=2"), NOW);
    expect(r).toEqual({
      ok: true,
      params: { store: "pg-main", prefix: "tenant_1:billing", window: "1h", from: new Date(NOW + 1 - 3_600_000), to: new Date(NOW + 1) },
    });
  });

  it("takes a custom window of up to 7 days", () => {
    const r = parseAdviceParams({ window: "custom", from: "2026-11-25T08:00:00Z", to: "2026-11-26T08:00:00Z" }, NOW);
    expect(r.ok && r.params.from.toISOString()).toBe("2026-11-25T08:00:00.000Z");
    expect(parseAdviceParams({ from: "2026-11-01T00:00:00Z" }, NOW)).toEqual({ ok: false, problem: { param: "from", message: "The from parameter must be at most 7 days before to (TTL advice covers at most 7 days)." } });
  });

  it("names the bad parameter", () => {
    expect(parseAdviceParams({ window: "3y" }, NOW)).toMatchObject({ ok: false, problem: { param: "window", message: "The window parameter must be one of 15m, 1h, 6h, 24h, 7d, custom." } });
    expect(parseAdviceParams({ prefix: ["a", "b"] }, NOW)).toMatchObject({ ok: false, problem: { param: "prefix", message: "The prefix parameter was given more than once; give it once." } });
    expect(parseAdviceParams({ window: "custom" }, NOW)).toMatchObject({ ok: false, problem: { param: "from" } });
    expect(parseAdviceParams({ from: "2026-11-26T09:00:00Z", to: "2026-11-26T08:30:00Z" }, NOW)).toMatchObject({ ok: false, problem: { param: "to" } });
  });

  it("window=7d spans exactly 7 days, which the stores accept (1 ms more and they refuse)", () => {
    const r = parseAdviceParams({ window: "7d" }, NOW);
    expect(r.ok && r.params.to.getTime() - r.params.from.getTime()).toBe(MAX_ADVICE_SPAN_MS);
  });

  it("a longer page window becomes its last 7 days for the slack panel, flagged", () => {
    expect(adviceWindowWithin({ window: "24h" }, NOW)).toEqual({ window: "24h", isClamped: false });
    expect(adviceWindowWithin({ window: "30d" }, NOW)).toEqual({ window: "7d", isClamped: true });
    expect(adviceWindowWithin({ window: "custom", from: "2026-11-01T00:00:00Z", to: "2026-11-20T00:00:00Z" }, NOW)).toEqual({
      window: "custom",
      from: "2026-11-13T00:00:00.000Z",
      to: "2026-11-20T00:00:00Z",
      isClamped: true,
    });
    expect(adviceWindowWithin({ window: "custom", from: "2026-11-10T00:00:00Z" }, NOW)).toEqual({ window: "custom", from: "2026-11-19T08:00:00.000Z", isClamped: true });
    const clamped = adviceWindowWithin({ window: "custom", from: "2026-11-01T00:00:00Z", to: "2026-11-20T00:00:00Z" }, NOW);
    expect(parseAdviceParams({ window: clamped.window, from: clamped.from, to: clamped.to }, NOW).ok).toBe(true);
    expect(adviceWindowWithin({ window: "custom", from: "2026-11-19T00:00:00Z", to: "2026-11-20T00:00:00Z" }, NOW).isClamped).toBe(false);
  });
});
