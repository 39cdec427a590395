import { describe, expect, it } from "vitest";
import { TokenBucketLimiter } from "@/lib/console/shared/rate-limit";
import type { AppSession } from "@/lib/auth/session";
import { readLimitFromEnv, respondWithRead, takeRead } from "./api-response";
import { respondWithAuditExport } from "@/lib/console/audit/audit-export";
import { metricsAccessForSession } from "@/lib/console/metrics/metrics-access";

function viewer(id: string): AppSession {
  return { user: { id, email: null, name: id, roles: ["viewer"], scopes: { viewer: { kind: "all" } } }, signedInAt: Date.now(), authTime: null };
}

describe("per-user read rate limit", () => {
  it("answers 429 with Retry-After and a sentence once a user's burst is spent, without reading", async () => {
    const limiter = new TokenBucketLimiter({ capacity: 2, refillPerSecond: 0.5 });
    let reads = 0;
    const read = async () => {
      reads++;
      return { ok: true as const, view: { n: reads } };
    };
    expect((await respondWithRead(viewer("ann"), "leases:read", read, limiter)).status).toBe(200);
    expect((await respondWithRead(viewer("ann"), "leases:read", read, limiter)).status).toBe(200);
    const limited = await respondWithRead(viewer("ann"), "leases:read", read, limiter);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await limited.json()) as { error: string }).error).toMatch(/Too many requests from your account; wait \d+ s/);
    expect(reads).toBe(2);
    // Another user has a bucket of their own.
    expect((await respondWithRead(viewer("bob"), "leases:read", read, limiter)).status).toBe(200);
  });

  it("a request without the permission is 403 and spends no token", async () => {
    const limiter = new TokenBucketLimiter({ capacity: 1, refillPerSecond: 0.1 });
    const read = async () => ({ ok: true as const, view: {} });
    const roleless: AppSession = { ...viewer("cid"), user: { ...viewer("cid").user, roles: [] } };
    expect((await respondWithRead(roleless, "leases:read", read, limiter)).status).toBe(403);
    expect((await respondWithRead(viewer("cid"), "leases:read", read, limiter)).status).toBe(200);
  });

  it("reads the limits from the environment, ignoring values that are not positive numbers", () => {
    expect(readLimitFromEnv({})).toEqual({ capacity: 120, refillPerSecond: 20 });
    expect(readLimitFromEnv({ LEASEWATCH_READ_BURST: "30", LEASEWATCH_READ_RATE_PER_S: "2.5" })).toEqual({ capacity: 30, refillPerSecond: 2.5 });
    expect(readLimitFromEnv({ LEASEWATCH_READ_BURST: "-1", LEASEWATCH_READ_RATE_PER_S: "x" })).toEqual({ capacity: 120, refillPerSecond: 20 });
  });
});

describe("reads outside the /api read routes count against the same per-user limit", () => {
  const spent = (id: string) => {
    const limiter = new TokenBucketLimiter({ capacity: 1, refillPerSecond: 0.1 });
    limiter.take(id);
    return limiter;
  };

  it("/api/metrics with a session: 429 with Retry-After once the user's reads are spent", async () => {
    const access = metricsAccessForSession(viewer("dee"), spent("dee"));
    expect(access.ok).toBe(false);
    if (!access.ok) {
      expect(access.response.status).toBe(429);
      expect(Number(access.response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(((await access.response.json()) as { error: string }).error).toMatch(/Too many requests from your account/);
    }
    expect(metricsAccessForSession(viewer("eve"), spent("dee"))).toEqual({ ok: true, via: "session" });
  });

  it("/api/audit/export: 429 with Retry-After once the user's reads are spent, before reading the log", async () => {
    const response = respondWithAuditExport(viewer("fay"), new URLSearchParams("format=csv"), spent("fay"));
    expect(response.status).toBe(429);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });

  it("a server-rendered page takes from the same bucket as the routes", async () => {
    const limiter = new TokenBucketLimiter({ capacity: 2, refillPerSecond: 0.1 });
    expect(takeRead(viewer("gus"), limiter)).toBeNull();
    const read = async () => ({ ok: true as const, view: {} });
    expect((await respondWithRead(viewer("gus"), "leases:read", read, limiter)).status).toBe(200);
    expect(takeRead(viewer("gus"), limiter)?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });
});
