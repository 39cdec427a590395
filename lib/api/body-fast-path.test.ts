import { describe, expect, it } from "vitest";
import { acquireBodyFastPath } from "./body-fast-path";
import { ZAcquireBody } from "./schemas";

/** What the server gets: the fast path's value, or else the schema's value or first message. */
function withFastPath(body: unknown): unknown {
  const fast = acquireBodyFastPath(body);
  return fast !== undefined ? { value: JSON.stringify(fast) } : bySchema(body);
}
function bySchema(body: unknown): unknown {
  const result = ZAcquireBody.safeParse(body);
  return result.success ? { value: JSON.stringify(result.data) } : { error: `${result.error.issues[0]?.path.join(".")}: ${result.error.issues[0]?.message}` };
}

// Around every edge of the rules: byte limits, printable text, whitespace, Unicode, types.
const TEXTS: unknown[] = ["a", "tenant_1:billing-close:2026-04", "x".repeat(256), "x".repeat(257), "x".repeat(512), "x".repeat(513), "é".repeat(128), "é".repeat(129), "a b", " a", "a ", " ", "", "a\tb", "a\nb", "a\u007fb", "a\u0085b", "a\u00a0", "a\u2003", "\ud800", "emoji 🔒", "~", "!", 42, null, undefined, ["a"]];
const TTLS: unknown[] = [99, 100, 100.5, 5_000, 86_400_000, 86_400_001, Number.NaN, Number.POSITIVE_INFINITY, "5000", -1, 0, null, undefined];
const STORES: unknown[] = ["redis", "pg-1", "a_b", "Redis", "-x", "x".repeat(63), "x".repeat(64), "", 7, null, undefined];
const WAITS: unknown[] = [0, 1, 30_000, 30_001, -1, 1.5, "10", null, undefined];

describe("acquire body fast path: accepts exactly what ZAcquireBody does, with the same value; the rest gets the schema's answer", () => {
  it("over a grid of bodies", () => {
    const bodies: unknown[] = [];
    const base = { resource: "ten:r", ownerId: "w1", task: "job", ttlMs: 5_000 };
    for (const text of TEXTS) {
      bodies.push({ ...base, resource: text }, { ...base, ownerId: text }, { ...base, task: text });
    }
    for (const ttlMs of TTLS) bodies.push({ ...base, ttlMs });
    for (const store of STORES) bodies.push({ ...base, store }, { store, ...base });
    for (const waitMs of WAITS) bodies.push({ ...base, waitMs }, { ...base, store: "redis", waitMs });
    bodies.push(
      base,
      { waitMs: 5, ttlMs: 1_000, task: "t", ownerId: "o", resource: "r", store: "s" },
      { ...base, ttlSeconds: 5 },
      { resource: "r", ownerId: "o", task: "t", ttlSeconds: 5 },
      { resource: "r", ownerId: "o", task: "t" },
      { ...base, extra: 1 },
      { ...base, store: "redis", waitMs: 0, extra: 1 },
      { resource: "r", ownerId: "o", task: "t", extra: 1 },
      Object.assign(Object.create({ inherited: 1 }) as object, base),
      Object.assign(Object.create(null) as object, base),
      [],
      "body",
      42,
      null,
      undefined,
    );
    let fast = 0;
    for (const body of bodies) {
      expect(withFastPath(body), JSON.stringify(body) ?? String(body)).toEqual(bySchema(body));
      if (acquireBodyFastPath(body) !== undefined) fast++;
    }
    // The usual bodies did take the fast path.
    expect(fast).toBeGreaterThan(20);
  });
});
