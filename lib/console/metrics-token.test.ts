import { describe, expect, it } from "vitest";
import { requireMetricsAccess } from "./metrics-access";
import { FailureLimiter, isSameToken, MetricsTokenError, readMetricsToken } from "./metrics-token";

const TOKEN = "0123456789abcdef0123456789abcdef-scrape";
const scrape = (authorization: string, ip = "10.0.0.7") =>
  new Request("http://127.0.0.1/api/metrics", { headers: { authorization, "x-forwarded-for": `${ip}, 10.9.9.9` } });

describe("METRICS_TOKEN", () => {
  it("refuses tokens shorter than 32 characters at start-up", () => {
    expect(() => readMetricsToken({ METRICS_TOKEN: "x".repeat(31) })).toThrow(MetricsTokenError);
    expect(() => readMetricsToken({ METRICS_TOKEN: "x".repeat(31) })).toThrow(/at least|32-256/);
    expect(readMetricsToken({ METRICS_TOKEN: "x".repeat(32) })).toBe("x".repeat(32));
  });

  it("compares by digest, so tokens of any length compare without throwing", () => {
    expect(isSameToken(TOKEN, TOKEN)).toBe(true);
    expect(isSameToken(`${TOKEN}x`, TOKEN)).toBe(false);
    expect(isSameToken("", TOKEN)).toBe(false);
    expect(isSameToken("é".repeat(500), TOKEN)).toBe(false);
  });
});

describe("repeated wrong tokens", () => {
  it("answer 429 for that address after ten failures in a minute, and only for that address", async () => {
    let now = 1_000_000;
    const limiter = new FailureLimiter(() => now);
    const env = { METRICS_TOKEN: TOKEN };
    for (let i = 0; i < 10; i++) {
      const access = await requireMetricsAccess(scrape("Bearer wrong"), env, limiter);
      expect(access.ok ? 200 : access.response.status).toBe(401);
    }
    const blocked = await requireMetricsAccess(scrape(`Bearer ${TOKEN}`), env, limiter);
    expect(blocked.ok).toBe(false);
    if (!blocked.ok) {
      expect(blocked.response.status).toBe(429);
      expect(Number(blocked.response.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    // Another address is not held up by the guesser.
    expect(await requireMetricsAccess(scrape(`Bearer ${TOKEN}`, "10.0.0.8"), env, limiter)).toEqual({ ok: true, via: "token" });
    // The window ends and the address may try again.
    now += 60_000;
    expect(await requireMetricsAccess(scrape(`Bearer ${TOKEN}`), env, limiter)).toEqual({ ok: true, via: "token" });
  });

  it("stop everyone guessing past the global cap, and remember a bounded number of addresses", () => {
    const now = 5_000_000;
    const limiter = new FailureLimiter(() => now);
    for (let i = 0; i < 100; i++) limiter.recordFailure(`192.0.2.${i}`);
    expect(limiter.retryAfterS("198.51.100.1")).toBe(60);
    const wide = new FailureLimiter(() => now);
    for (let i = 0; i < 20_000; i++) wide.recordFailure(`a-${i}`);
    expect(wide.trackedClients).toBeLessThanOrEqual(10_000);
  });
});
