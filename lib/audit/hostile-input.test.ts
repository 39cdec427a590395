/**
 * What a signed-in user can type into an audited field must never break the
 * chain, skip the audit, or fail a release: every entry verifies, every attempt
 * is recorded, and the store and the audit see the same reason.
 */
import { describe, expect, it } from "vitest";
import { forceReleaseAudited, recordRefusedAttempt } from "@/lib/audit/force-release";
import { recordTokenRefusal } from "@/lib/audit/api-tokens";
import { verifyAuditChain } from "@/lib/audit/verify";
import { PostgresLeaseStore } from "@leasewatch/lease";
import { captureLogs } from "@/lib/log/testing";
import { ALICE, REQUEST, auditDeps, type AuditFixture, auditTargetInAuditDatabase, setUpAuditedStore, acquireHeldLease, auditEntriesFor } from "@/test/support/audit";

const BOB = { id: "sub-bob", email: "bob@example.test", roles: ["viewer"] };

async function expectIntact(audit: AuditFixture) {
  expect(await verifyAuditChain({ pool: audit.admin, schema: audit.schema, key: audit.key })).toMatchObject({ ok: true });
}

describe("hostile text in audited fields", () => {
  const { store: pg, audit } = setUpAuditedStore("postgres", { registerSchema: true });
  const deps = () =>
    auditDeps(audit.log, {
      "pg-main": auditTargetInAuditDatabase("pg-main", pg),
    });

  it("a refused attempt whose reason has a lone surrogate is recorded, and the chain still verifies after it", async () => {
    const recorded = await recordRefusedAttempt(
      { actor: BOB, store: "pg-main", resource: "hostile:surrogate", leaseId: "x", reason: "poison \ud800 entry", request: REQUEST, outcome: "denied_role", detail: "viewer" },
      deps(),
    );
    expect(recorded).toHaveProperty("auditId");
    const [entry] = await auditEntriesFor(audit.log, "hostile:surrogate");
    expect(entry!.reason).toBe("poison \ufffd entry");
    await expectIntact(audit);
  });

  it("a NUL byte in any field still gets the refusal audited (as U+FFFD), and the chain verifies", async () => {
    const recorded = await recordRefusedAttempt(
      {
        actor: { id: "sub-\u0000bob", email: "bob\u0000@example.test", roles: ["viewer\u0000"] },
        store: "pg\u0000main",
        resource: "hostile:nul\u0000",
        leaseId: "lease\u0000",
        reason: "nul \u0000 in the reason",
        request: { requestId: "req\u0000", ip: "203.0.113.7\u0000", userAgent: "ua\u0000\u009b" },
        outcome: "invalid_input",
        detail: "reason: \u0000",
      },
      deps(),
    );
    expect(recorded).toHaveProperty("auditId");
    const [entry] = await auditEntriesFor(audit.log, "hostile:nul\ufffd");
    expect(entry).toMatchObject({ reason: "nul \ufffd in the reason", actorSub: "sub-\ufffdbob", store: "pg\ufffdmain", userAgent: "ua\ufffd\ufffd" });
    const token = await recordTokenRefusal(
      { actor: BOB, request: REQUEST, action: "token_create", name: "name\u0000\udfff", outcome: "denied_role", detail: "viewer" },
      { getAuditLog: async () => audit.log },
    );
    expect(token).toHaveProperty("auditId");
    await expectIntact(audit);
  });

  it("an emoji at the clip limit is kept whole or dropped whole, never split into a lone surrogate", async () => {
    const reason = `${"a".repeat(999)}😀 tail`;
    const recorded = await recordRefusedAttempt({ actor: BOB, store: "pg-main", resource: "hostile:emoji", leaseId: "x", reason, request: REQUEST, outcome: "denied_role" }, deps());
    expect(recorded).toHaveProperty("auditId");
    const [entry] = await auditEntriesFor(audit.log, "hostile:emoji");
    expect(entry!.reason!.isWellFormed()).toBe(true);
    expect(Buffer.byteLength(entry!.reason!)).toBeLessThanOrEqual(1000);
    await expectIntact(audit);
  });

  it.each([
    ["a newline", "holder stuck\nrestarting worker now", "holder stuck\nrestarting worker now"],
    ["a tab", "holder stuck\trestarting worker now", "holder stuck\trestarting worker now"],
    ["CRLF", "holder stuck\r\nrestarting worker now", "holder stuck\nrestarting worker now"],
    ["double spaces", "holder  stuck,  restarting worker now", "holder  stuck,  restarting worker now"],
    ["CJK over 1000 bytes", "界".repeat(400), "界".repeat(333)],
  ])("a force-release whose reason has %s is released, and the store's event and the audit entry carry the same reason", async (_, typed, normalised) => {
    const lease = await acquireHeldLease(pg.store, `hostile:reason:${_}`);
    const result = await forceReleaseAudited({ actor: ALICE, store: "pg-main", resource: lease.resource, leaseId: lease.leaseId, reason: typed, request: REQUEST }, deps());
    expect(result.outcome).toBe("released");
    const events = await pg.store.events({ resource: lease.resource, kinds: ["force_released"] });
    expect(events.items.map((e) => e.reason)).toEqual([normalised]);
    expect((await auditEntriesFor(audit.log, lease.resource)).map((e) => [e.outcome, e.reason])).toEqual([
      ["requested", normalised],
      ["released", normalised],
    ]);
    await expectIntact(audit);
  });

  it("a store that cannot be read: the entry keeps a short reason and a reference, the driver's words stay in the server log", async () => {
    const down = new PostgresLeaseStore({ name: "pg-down", connectionString: "postgres://secret-user@127.0.0.1:1/leases", schema: "leases_down" });
    const logged = captureLogs();
    try {
      const result = await forceReleaseAudited(
        { actor: ALICE, store: "pg-down", resource: "hostile:down", leaseId: "lease-1", reason: "store is down, trying anyway", request: REQUEST },
        auditDeps(audit.log, { "pg-down": down }),
      );
      expect(result.outcome).toBe("failed");
      const [entry] = await auditEntriesFor(audit.log, "hostile:down");
      expect(entry!.detail).toMatch(/^store read failed: unreachable \(ref [0-9a-f]{8}\)$/);
      const ref = /ref ([0-9a-f]{8})/.exec(entry!.detail!)![1]!;
      expect(logged.lines).toContainEqual(expect.objectContaining({ level: "error", ref, detail: expect.stringMatching(/ECONNREFUSED/) }));
    } finally {
      logged.restore();
      await down.close();
    }
  });
});

describe("a multi-line reason on a Redis store (requested, then the outcome)", () => {
  const { store: redis, audit } = setUpAuditedStore("redis");

  it("is released with the same reason in the store's event and the audit entries", async () => {
    const lease = await acquireHeldLease(redis.store, "hostile:redis:newline");
    const reason = "holder stuck\nrestarting worker now";
    const result = await forceReleaseAudited({ actor: ALICE, store: "redis-main", resource: lease.resource, leaseId: lease.leaseId, reason, request: REQUEST }, auditDeps(audit.log, { "redis-main": redis.store }));
    expect(result.outcome).toBe("released");
    const events = await redis.store.events({ resource: lease.resource, kinds: ["force_released"] });
    expect(events.items.map((e) => e.reason)).toEqual([reason]);
    expect((await auditEntriesFor(audit.log, lease.resource)).map((e) => e.reason)).toEqual([reason, reason]);
    await expectIntact(audit);
  });
});
