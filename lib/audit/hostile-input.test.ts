/**
 * What a signed-in user can type into an audited field must never break the
 * chain, skip the audit, or fail a release: every entry verifies, every attempt
 * is recorded, and the store and the audit see the same reason.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { forceReleaseAudited, recordRefusedAttempt } from "@/lib/audit/force-release";
import { recordTokenRefusal } from "@/lib/audit/api-tokens";
import { listAuditEntries } from "@/lib/audit/read";
import { verifyAuditChain } from "@/lib/audit/verify";
import { PostgresLeaseStore } from "@/lib/lease/postgres/store";
import { TEST_DATABASE_URL } from "@/lib/lease/testing/isolation";
import type { LeaseStore } from "@/lib/lease/types";
import { ALICE, REQUEST, auditDeps, createAuditFixture, type AuditFixture } from "@/test/support/audit";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";

const BOB = { id: "sub-bob", email: "bob@example.test", roles: ["viewer"] };

async function acquire(store: LeaseStore, resource: string) {
  const r = await store.acquire({ resource, owner: "worker-1", task: "run-1", ttlMs: 60_000 });
  if (!r.acquired) throw new Error("test setup: acquire failed");
  return r.lease;
}

async function entriesFor(audit: AuditFixture, resource: string) {
  const { items } = await listAuditEntries({ resource, limit: 100 }, audit.log);
  return items.reverse();
}

async function expectIntact(audit: AuditFixture) {
  expect(await verifyAuditChain({ pool: audit.admin, schema: audit.schema, key: audit.key })).toMatchObject({ ok: true });
}

describe("hostile text in audited fields", () => {
  let pg: StoreFixture;
  let audit: AuditFixture;
  beforeAll(async () => {
    pg = await createStoreFixture("postgres");
    if (pg.spec.kind !== "postgres") throw new Error("unreachable");
    audit = await createAuditFixture([pg.spec.schema]);
  });
  afterAll(async () => {
    await audit?.cleanup();
    await pg?.cleanup();
  });
  const deps = () =>
    auditDeps(audit.log, {
      "pg-main": { store: pg.store, config: { name: "pg-main", kind: "postgres" as const, url: TEST_DATABASE_URL, schema: pg.spec.kind === "postgres" ? pg.spec.schema : undefined } },
    });

  it("a refused attempt whose reason has a lone surrogate is recorded, and the chain still verifies after it", async () => {
    const recorded = await recordRefusedAttempt(
      { actor: BOB, store: "pg-main", resource: "hostile:surrogate", leaseId: "x", reason: "poison \ud800 entry", request: REQUEST, outcome: "denied_role", detail: "viewer" },
      deps(),
    );
    expect(recorded).toHaveProperty("auditId");
    const [entry] = await entriesFor(audit, "hostile:surrogate");
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
    const [entry] = await entriesFor(audit, "hostile:nul\ufffd");
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
    const [entry] = await entriesFor(audit, "hostile:emoji");
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
    const lease = await acquire(pg.store, `hostile:reason:${_}`);
    const result = await forceReleaseAudited({ actor: ALICE, store: "pg-main", resource: lease.resource, leaseId: lease.leaseId, reason: typed, request: REQUEST }, deps());
    expect(result.outcome).toBe("released");
    const events = await pg.store.events({ resource: lease.resource, kinds: ["force_released"] });
    expect(events.items.map((e) => e.reason)).toEqual([normalised]);
    expect((await entriesFor(audit, lease.resource)).map((e) => [e.outcome, e.reason])).toEqual([
      ["requested", normalised],
      ["released", normalised],
    ]);
    await expectIntact(audit);
  });

  it("a store that cannot be read: the entry keeps a short reason and a reference, the driver's words stay in the server log", async () => {
    const down = new PostgresLeaseStore({ name: "pg-down", connectionString: "postgres://secret-user@127.0.0.1:1/leases", schema: "leases_down" });
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const result = await forceReleaseAudited(
        { actor: ALICE, store: "pg-down", resource: "hostile:down", leaseId: "lease-1", reason: "store is down, trying anyway", request: REQUEST },
        auditDeps(audit.log, { "pg-down": down }),
      );
      expect(result.outcome).toBe("failed");
      const [entry] = await entriesFor(audit, "hostile:down");
      expect(entry!.detail).toMatch(/^store read failed: unreachable \(ref [0-9a-f]{8}\)$/);
      const ref = /ref ([0-9a-f]{8})/.exec(entry!.detail!)![1]!;
      expect(logged.mock.calls.map((c) => c.join(" ")).join("\n")).toMatch(new RegExp(`ECONNREFUSED.*ref ${ref}`));
    } finally {
      logged.mockRestore();
      await down.close();
    }
  });
});

describe("a multi-line reason on a Redis store (requested, then the outcome)", () => {
  let redis: StoreFixture;
  let audit: AuditFixture;
  beforeAll(async () => {
    redis = await createStoreFixture("redis");
    audit = await createAuditFixture();
  });
  afterAll(async () => {
    await audit?.cleanup();
    await redis?.cleanup();
  });

  it("is released with the same reason in the store's event and the audit entries", async () => {
    const lease = await acquire(redis.store, "hostile:redis:newline");
    const reason = "holder stuck\nrestarting worker now";
    const result = await forceReleaseAudited({ actor: ALICE, store: "redis-main", resource: lease.resource, leaseId: lease.leaseId, reason, request: REQUEST }, auditDeps(audit.log, { "redis-main": redis.store }));
    expect(result.outcome).toBe("released");
    const events = await redis.store.events({ resource: lease.resource, kinds: ["force_released"] });
    expect(events.items.map((e) => e.reason)).toEqual([reason]);
    expect((await entriesFor(audit, lease.resource)).map((e) => e.reason)).toEqual([reason, reason]);
    await expectIntact(audit);
  });
});
