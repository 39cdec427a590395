import { describe, expect, it } from "vitest";
import { parseObservedConfig } from "./config";
import { shownOf, ZObservedReleaseForm } from "./release-form";

describe("shownOf: what the release form sends for a lock as the observer recorded it", () => {
  it("takes locked_by and locked_at of a ShedLock row", () => {
    const lock = { holder: "host-a · locked at 2026-01-01T00:00:00.000Z", detail: { lockedBy: "host-a", lockedAt: "2026-01-01T00:00:00.000Z", lockUntil: "2026-01-01T00:10:00.000Z" } };
    expect(shownOf("shedlock", lock)).toEqual({ kind: "shedlock", lockedBy: "host-a", lockedAt: "2026-01-01T00:00:00.000Z" });
  });

  it("takes the value of a Redis key with one holder, and offers nothing for a semaphore with several", () => {
    expect(shownOf("redis-keys", { holder: "abc123", detail: { type: "string", ttlMs: 9_000, holders: 1 } })).toEqual({ kind: "redis-keys", type: "string", value: "abc123" });
    expect(shownOf("redis-keys", { holder: "a, b", detail: { type: "zset", ttlMs: 9_000, holders: 2 } })).toBeNull();
  });

  it("takes pid and backend start of an advisory lock with one holder, and offers nothing for a shared one or one without a start time", () => {
    expect(shownOf("pg-advisory", { holder: "pid 42 · psql", detail: { pids: [42], backendStart: "2026-01-01T00:00:00.000Z" } })).toEqual({ kind: "pg-advisory", pid: 42, backendStart: "2026-01-01T00:00:00.000Z" });
    expect(shownOf("pg-advisory", { holder: "pid 42 · a, pid 43 · b", detail: { pids: [42, 43], backendStart: "2026-01-01T00:00:00.000Z" } })).toBeNull();
    expect(shownOf("pg-advisory", { holder: "pid 42 · psql", detail: { pids: [42], backendStart: null } })).toBeNull();
  });

  it("a form whose shown kind does not fit its fields is refused with the field named", () => {
    const parsed = ZObservedReleaseForm.safeParse({ store: "s", resource: "r", shown: { kind: "pg-advisory", pid: "42", backendStart: "x" }, reason: "long enough reason" });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((i) => i.path.join("."))).toEqual(["shown.pid", "shown.backendStart"]);
  });
});

describe("releaseUrl in LEASEWATCH_OBSERVED", () => {
  it("is optional per store and checked like url", () => {
    const env = { NODE_ENV: "test" as const, LEASEWATCH_OBSERVED: JSON.stringify([{ name: "shed", kind: "shedlock", url: "postgres://r@db/app", releaseUrl: "postgres://w@db/app" }, { name: "redis", kind: "redis-keys", url: "redis://c:6379", patterns: ["locks:*"] }]) };
    expect(parseObservedConfig(env).map((c) => c.releaseUrl)).toEqual(["postgres://w@db/app", undefined]);
    expect(() => parseObservedConfig({ NODE_ENV: "test", LEASEWATCH_OBSERVED: JSON.stringify([{ name: "shed", kind: "shedlock", url: "postgres://r@db/app", releaseUrl: "mysql://w@db" }]) })).toThrow(/at 0\.releaseUrl: needs a postgres:\/\/ url/);
  });
});
