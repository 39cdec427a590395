import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refusedAttemptDraft } from "@/lib/audit/force-release";
import { tokenRefusalDraft } from "@/lib/audit/api-tokens";
import { listAuditEntries } from "@/lib/audit/read";
import { RefusalTally } from "@/lib/audit/refusal-tally";
import { verifyAuditChain } from "@/lib/audit/verify";
import { REQUEST, createAuditFixture, type AuditFixture } from "@/test/support/audit";
import { passAttemptGate, type AttemptGate } from "./attempt-gate";
import { captureLogs } from "@/lib/log/testing";
import { TokenBucketLimiter } from "./rate-limit";

const BOB = { id: "sub-bob", email: "bob@example.test", roles: ["viewer"] };
const CAROL = { id: "sub-carol", email: "carol@example.test", roles: ["viewer"] };

describe("the attempt gate: rate limits before any audit write, every attempt still accounted for", () => {
  let audit: AuditFixture;
  let gate: AttemptGate;
  beforeAll(async () => {
    audit = await createAuditFixture();
  });
  afterAll(async () => {
    await audit?.cleanup();
  });
  const fresh = () => {
    gate = {
      perUser: new TokenBucketLimiter({ capacity: 3, refillPerSecond: 1e-6 }),
      perAddress: new TokenBucketLimiter({ capacity: 5, refillPerSecond: 1e-6 }),
      // A window far longer than the test: entries are written only when the test flushes.
      tally: new RefusalTally({ windowMs: 3_600_000, getAuditLog: async () => audit.log }),
    };
  };
  const forceRelease = (actor: typeof BOB, ip: string | null, n: number) =>
    passAttemptGate(gate, {
      action: "force_release",
      actorId: actor.id,
      ip,
      cost: 1,
      draft: (detail) => refusedAttemptDraft({ actor, request: { ...REQUEST, ip }, store: "pg-main", resource: "gate:fr", leaseId: `lease-${n}`, reason: `poison \ud800 ${n}`, outcome: "rate_limited", detail }),
    });
  const count = async (resource: string) => (await listAuditEntries({ resource, limit: 100 }, audit.log)).items;

  it("a burst of refused attempts writes nothing until its window ends, then one entry with the count", async () => {
    fresh();
    const results = Array.from({ length: 40 }, (_, n) => forceRelease(BOB, null, n));
    expect(results.filter((r) => r.allowed)).toHaveLength(3);
    expect(await count("gate:fr")).toEqual([]);
    expect(gate.tally.pending()).toEqual(new Map([["force_release\u0000sub-bob", 37]]));
    await gate.tally.flush();
    const entries = await count("gate:fr");
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actorSub: BOB.id, outcome: "rate_limited", leaseId: "lease-39", reason: "poison \ufffd 39" });
    expect(entries[0]!.detail).toMatch(/^rate limited ×37: 37 attempts refused by the rate limit from .* to .*per user; retry after \d+ s/);
    expect(await verifyAuditChain({ pool: audit.admin, schema: audit.schema, key: audit.key })).toMatchObject({ ok: true, entries: 1 });
  });

  it("limits per address across users, and counts each user's refusals on their own", async () => {
    fresh();
    const fromOneAddress = [...Array.from({ length: 3 }, (_, n) => forceRelease(BOB, "198.51.100.9", n)), ...Array.from({ length: 6 }, (_, n) => forceRelease(CAROL, "198.51.100.9", n))];
    // Bob takes 3 of the address's 5; Carol gets the other 2, then the address is spent.
    expect(fromOneAddress.map((r) => r.allowed)).toEqual([true, true, true, true, true, false, false, false, false]);
    expect(gate.tally.pending()).toEqual(new Map([["force_release\u0000sub-carol", 4]]));
    const token = passAttemptGate(gate, {
      action: "token_create",
      actorId: BOB.id,
      ip: "198.51.100.9",
      cost: 1,
      draft: (detail) => tokenRefusalDraft({ actor: BOB, request: REQUEST, action: "token_create", name: "gate-token\u0000", outcome: "rate_limited", detail }),
    });
    expect(token.allowed).toBe(false);
    await gate.tally.flush();
    const tokenEntries = await count("gate-token\ufffd");
    expect(tokenEntries.map((e) => [e.action, e.outcome, e.detail?.split(":")[0]])).toEqual([["token_create", "rate_limited", "rate limited ×1"]]);
    expect(tokenEntries[0]!.detail).toContain("per address");
  });

  it("an audit log that cannot be written keeps the count for the next try", async () => {
    fresh();
    let isDown = true;
    gate.tally = new RefusalTally({ windowMs: 3_600_000, getAuditLog: async () => (isDown ? Promise.reject(new Error("audit database down")) : audit.log) });
    for (let n = 0; n < 8; n++) forceRelease(CAROL, null, n);
    const logs = captureLogs();
    try {
      await gate.tally.flush();
      expect(logs.lines).toContainEqual(expect.objectContaining({ level: "error", attempts: expect.any(Number), msg: "rate-limited attempts could not be recorded yet; kept for the next try" }));
    } finally {
      logs.restore();
    }
    forceRelease(CAROL, null, 8);
    expect(gate.tally.pending()).toEqual(new Map([["force_release\u0000sub-carol", 6]]));
    isDown = false;
    await gate.tally.flush();
    const latest = (await count("gate:fr"))[0]!;
    expect(latest.detail).toMatch(/^rate limited ×6/);
  });
});
