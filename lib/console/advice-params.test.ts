import { describe, expect, it } from "vitest";
import { parseAdviceParams } from "./advice-params";

const NOW = Date.parse("2026-11-26T08:00:00Z");

describe("advice URL parameters", () => {
  it("defaults to the last hour and keeps store and prefix", () => {
    const r = parseAdviceParams(new URLSearchParams("store=pg-main&prefix=tenant_1:billing&depth=2"), NOW);
    expect(r).toEqual({
      ok: true,
      params: { store: "pg-main", prefix: "tenant_1:billing", window: "1h", from: new Date(NOW - 3_600_000), to: new Date(NOW + 1) },
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
});
