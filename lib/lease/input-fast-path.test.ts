import { describe, expect, it } from "vitest";
import { LeaseError } from "./errors";
import { parseAcquireInput, parseReleaseInput, parseRenewInput } from "./input-fast-path";
import { parseOrThrow, ZAcquireInput, ZReleaseInput, ZRenewInput } from "./validation";

/** What a parse gives: the value, or the error's class and message. */
function outcome(parse: () => unknown): unknown {
  try {
    return { value: parse() };
  } catch (error) {
    return { error: error instanceof LeaseError ? `LeaseError: ${error.message}` : String(error) };
  }
}

// Strings around every edge the rules have: length limits in bytes, printable text, whitespace, Unicode.
const TEXTS: unknown[] = [
  "a",
  "tenant_1:billing-close:2026-04",
  "x".repeat(128),
  "x".repeat(129),
  "x".repeat(256),
  "x".repeat(257),
  "x".repeat(512),
  "x".repeat(513),
  "é".repeat(128),
  "é".repeat(129),
  "a b",
  " a",
  "a ",
  " ",
  "",
  "a\tb",
  "a\nb",
  "a\u007fb",
  "a\u0085b",
  "a\u00a0",
  "\u00a0a",
  "a\u2003",
  "\ud800",
  "emoji 🔒",
  "~",
  "!",
  42,
  null,
  undefined,
];
const TTLS: unknown[] = [99, 100, 100.5, 5_000, 86_400_000, 86_400_001, Number.NaN, Number.POSITIVE_INFINITY, "5000", -1, 0, undefined];

function inherited<T extends object>(fields: T): T {
  return Object.assign(Object.create({ extra: 1 }) as T, fields);
}

describe("input fast path: accepts and refuses exactly what the schemas do, with the same values and messages", () => {
  it("acquire", () => {
    const inputs: unknown[] = [];
    for (const text of TEXTS) {
      inputs.push({ resource: text, owner: "o", task: "t", ttlMs: 5_000 });
      inputs.push({ resource: "r", owner: text, task: "t", ttlMs: 5_000 });
      inputs.push({ resource: "r", owner: "o", task: text, ttlMs: 5_000 });
    }
    for (const ttlMs of TTLS) inputs.push({ resource: "r", owner: "o", task: "t", ttlMs });
    inputs.push(
      { resource: "r", owner: "o", task: "t", ttlMs: 5_000, extra: 1 },
      { resource: "r", owner: "o", task: "t", ttlMs: 5_000, waitMs: undefined },
      { resource: "r", owner: "o", task: "t" },
      { resource: "r", owner: "o", ttlMs: 5_000, tsk: "t" },
      Object.assign(Object.create(null) as object, { resource: "r", owner: "o", task: "t", ttlMs: 5_000 }),
      inherited({ resource: "r", owner: "o", task: "t", ttlMs: 5_000 }),
      null,
      "r",
      [],
    );
    for (const input of inputs) {
      expect(outcome(() => parseAcquireInput(input as never)), JSON.stringify(input)).toEqual(
        outcome(() => parseOrThrow(ZAcquireInput, input, "acquire")),
      );
    }
  });

  it("renew and release", () => {
    const renews: unknown[] = [];
    const releases: unknown[] = [];
    for (const text of TEXTS) {
      renews.push({ resource: text, leaseId: "l", ttlMs: 5_000 }, { resource: "r", leaseId: text, ttlMs: 5_000 });
      releases.push({ resource: text, leaseId: "l" }, { resource: "r", leaseId: text });
    }
    for (const ttlMs of TTLS) renews.push({ resource: "r", leaseId: "l", ttlMs });
    renews.push({ resource: "r", leaseId: "l", ttlMs: 5_000, extra: 1 }, { resource: "r", leaseId: "l" }, null);
    releases.push({ resource: "r", leaseId: "l", extra: 1 }, { resource: "r", leaseId: "l", ttlMs: 5_000 }, { resource: "r" }, inherited({ resource: "r", leaseId: "l" }), null);
    for (const input of renews) {
      expect(outcome(() => parseRenewInput(input as never)), JSON.stringify(input)).toEqual(outcome(() => parseOrThrow(ZRenewInput, input, "renew")));
    }
    for (const input of releases) {
      expect(outcome(() => parseReleaseInput(input as never)), JSON.stringify(input)).toEqual(
        outcome(() => parseOrThrow(ZReleaseInput, input, "release")),
      );
    }
  });
});
