import { describe, expect, it } from "vitest";
import type { ViewerScope } from "@/lib/auth/scope";
import type { AppSession } from "@/lib/auth/session";
import { TokenBucketLimiter } from "@/lib/console/shared/rate-limit";
import { metricsAccessForSession, MetricsTokenError, readMetricsToken, requireMetricsAccess } from "./metrics-access";

const TOKEN = "a-scrape-token-that-is-long-enough-1234";
const scrape = (authorization: string) => new Request("http://127.0.0.1/api/metrics", { headers: { authorization } });

describe("metrics access by bearer token", () => {
  it("accepts exactly METRICS_TOKEN", async () => {
    expect(await requireMetricsAccess(scrape(`Bearer ${TOKEN}`), { METRICS_TOKEN: TOKEN })).toEqual({ ok: true, via: "token" });
  });

  it("refuses a wrong token, and any token when none is configured, with 401", async () => {
    for (const [header, env] of [
      [`Bearer ${TOKEN}x`, { METRICS_TOKEN: TOKEN }],
      [`Bearer ${TOKEN}`, {}],
      ["Bearer ", { METRICS_TOKEN: TOKEN }],
    ] as const) {
      const access = await requireMetricsAccess(scrape(header), env);
      expect(access.ok).toBe(false);
      if (!access.ok) {
        expect(access.response.status).toBe(401);
        expect(await access.response.json()).toEqual({ error: "invalid metrics token" });
      }
    }
  });

  it("rejects a weak METRICS_TOKEN with a message that says what to set", () => {
    expect(() => readMetricsToken({ METRICS_TOKEN: "short" })).toThrow(MetricsTokenError);
    expect(() => readMetricsToken({ METRICS_TOKEN: "has spaces in it but is long enough" })).toThrow(/32-256 printable characters/);
    expect(readMetricsToken({})).toBeNull();
  });
});

describe("metrics access by session", () => {
  const session = (scope: ViewerScope): AppSession => ({
    user: { id: "dee", email: null, name: "dee", roles: ["viewer"], scopes: { viewer: scope } },
    signedInAt: Date.now(),
    authTime: null,
  });
  const reads = () => new TokenBucketLimiter({ capacity: 10, refillPerSecond: 1 });

  it("refuses an account limited to some prefixes: every series, observed locks included, counts every tenant", async () => {
    const access = metricsAccessForSession(session({ kind: "prefixes", prefixes: ["tenant_1:"] }), reads());
    expect(access.ok).toBe(false);
    if (access.ok) return;
    expect(access.response.status).toBe(403);
    expect(((await access.response.json()) as { error: string }).error).toMatch(/cover every tenant; your account is limited to/);
    expect(metricsAccessForSession(session({ kind: "all" }), reads())).toEqual({ ok: true, via: "session" });
  });
});
