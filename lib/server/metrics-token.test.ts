import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startPeerServer, type PeerServer } from "@/test/support/peer-server";
import { requireMetricsAccess } from "@/lib/console/metrics/metrics-access";
import { FailureLimiter } from "@/lib/auth/failure-limiter";
import { isSameToken, MetricsTokenError, readMetricsToken } from "./metrics-token";

const TOKEN = "0123456789abcdef0123456789abcdef-scrape";

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
  const env = { METRICS_TOKEN: TOKEN };
  let server: PeerServer;
  let limiter: FailureLimiter;
  let now = 1_000_000;
  beforeAll(async () => {
    server = await startPeerServer(async (request) => {
      const access = await requireMetricsAccess(request, env, limiter);
      return access.ok ? new Response("metrics") : access.response;
    });
  });
  afterAll(() => server?.close());
  beforeEach(() => {
    limiter = new FailureLimiter(() => now);
  });

  it("never lock out the right token: eleven wrong tokens from the scraper's own machine, then the right one is 200", async () => {
    for (let i = 0; i < 11; i++) expect((await server.get("127.0.0.2", { authorization: "Bearer wrong" })).status).toBe(i < 10 ? 401 : 429);
    expect((await server.get("127.0.0.2", { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
  });

  it("answer 429 to the socket address that guessed, whatever X-Forwarded-For it claims, and to no other address", async () => {
    for (let i = 0; i < 10; i++) {
      const guess = await server.get("127.0.0.2", { authorization: "Bearer wrong", "x-forwarded-for": `198.51.100.${i}` });
      expect(guess.status).toBe(401);
    }
    const blocked = await server.get("127.0.0.2", { authorization: "Bearer wrong", "x-forwarded-for": "198.51.100.99" });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers["retry-after"])).toBeGreaterThan(0);
    expect(JSON.parse(blocked.body)).toEqual({ error: "too many invalid metrics tokens; try again later" });
    // Another machine with a stale token hears that its token is wrong, not that someone else guessed.
    expect((await server.get("127.0.0.3", { authorization: "Bearer old-token" })).status).toBe(401);
    // The window ends and the address may try again.
    now += 60_000;
    expect((await server.get("127.0.0.2", { authorization: "Bearer wrong" })).status).toBe(401);
  });

  it("key on the forwarded client only behind a TRUSTED_PROXY", async () => {
    const proxied = { ...env, TRUSTED_PROXY: "127.0.0.4" };
    const behindProxy = await startPeerServer(async (request) => {
      const access = await requireMetricsAccess(request, proxied, limiter);
      return access.ok ? new Response("metrics") : access.response;
    });
    try {
      for (let i = 0; i < 10; i++) await behindProxy.get("127.0.0.4", { authorization: "Bearer wrong", "x-forwarded-for": "203.0.113.5" });
      expect((await behindProxy.get("127.0.0.4", { authorization: "Bearer wrong", "x-forwarded-for": "203.0.113.5" })).status).toBe(429);
      // Another client behind the same proxy is its own address.
      expect((await behindProxy.get("127.0.0.4", { authorization: "Bearer wrong", "x-forwarded-for": "203.0.113.6" })).status).toBe(401);
      // A client forging the header from outside the proxy is keyed on its socket.
      expect((await behindProxy.get("127.0.0.5", { authorization: "Bearer wrong", "x-forwarded-for": "203.0.113.5" })).status).toBe(401);
    } finally {
      await behindProxy.close();
    }
  });

  it("has no global cap an outsider could fill, and remembers a bounded number of addresses", () => {
    const wide = new FailureLimiter(() => now);
    for (let i = 0; i < 20_000; i++) wide.recordFailure(`a-${i}`);
    expect(wide.retryAfterS("198.51.100.1")).toBe(0);
    expect(wide.trackedClients).toBeLessThanOrEqual(10_000);
  });
});
