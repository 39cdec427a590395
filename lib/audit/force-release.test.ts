import { describe, expect, it } from "vitest";
import { AuditLog } from "@/lib/audit/log";
import { forceReleaseAudited, recordRefusedAttempt, resolvePendingForceReleases } from "@/lib/audit/force-release";
import { verifyAuditChain } from "@/lib/audit/verify";
import { TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { ALICE, REQUEST, auditDeps, auditTargetInAuditDatabase, setUpAuditedStore, acquireHeldLease, auditEntriesFor } from "@/test/support/audit";

const REASON = "stuck after the deploy, holder pod is gone";

describe("forceReleaseAudited, Postgres store in the audit log's database (one transaction)", () => {
  const { store: pg, audit } = setUpAuditedStore("postgres", { registerSchema: true });
  const target = () => auditTargetInAuditDatabase("pg-test", pg);

  it("ends the lease, records requested and released together, and the old holder cannot renew", async () => {
    const lease = await acquireHeldLease(pg.store, "audit:pg:one");
    const result = await forceReleaseAudited(
      { actor: ALICE, store: "pg-test", resource: lease.resource, leaseId: lease.leaseId, reason: REASON, request: REQUEST },
      auditDeps(audit.log, { "pg-test": target() }),
    );
    expect(result).toMatchObject({ outcome: "released", lease: { owner: "worker-1", task: "run-1", fencingToken: lease.fencingToken } });
    expect(await pg.store.get(lease.resource)).toBeNull();
    expect(await pg.store.renew({ resource: lease.resource, leaseId: lease.leaseId, ttlMs: 1_000 })).toMatchObject({ renewed: false, reason: "not_owner" });

    const events = await pg.store.events({ resource: lease.resource, kinds: ["force_released"] });
    expect(events.items).toHaveLength(1);
    expect(events.items[0]).toMatchObject({ actor: ALICE.id, reason: REASON, leaseId: lease.leaseId });

    const entries = await auditEntriesFor(audit.log, lease.resource);
    expect(entries.map((e) => e.outcome)).toEqual(["requested", "released"]);
    expect(entries[1]).toMatchObject({
      actorSub: ALICE.id,
      actorEmail: ALICE.email,
      actorRoles: ["operator"],
      store: "pg-test",
      leaseId: lease.leaseId,
      owner: "worker-1",
      task: "run-1",
      fencingToken: lease.fencingToken,
      reason: REASON,
      ip: REQUEST.ip,
      userAgent: REQUEST.userAgent,
      requestId: REQUEST.requestId,
      resolvesId: entries[0]!.id,
    });
    if (result.outcome === "released") expect(result.auditId).toBe(entries[1]!.id);
    // One transaction wrote both entries (and the release).
    const writers = await audit.admin.query(`SELECT DISTINCT xmin::text FROM "${audit.schema}".audit_log WHERE resource = $1`, [lease.resource]);
    expect(writers.rowCount).toBe(1);

    const next = await acquireHeldLease(pg.store, lease.resource);
    expect(BigInt(next.fencingToken)).toBeGreaterThan(BigInt(lease.fencingToken));
    expect(await verifyAuditChain({ pool: audit.admin, schema: audit.schema, key: audit.key })).toMatchObject({ ok: true });
  });

  it("answers lease_changed with the new holder when that lease id no longer holds, and releases nothing", async () => {
    const old = await acquireHeldLease(pg.store, "audit:pg:changed");
    await pg.store.release({ resource: old.resource, leaseId: old.leaseId });
    const now = await acquireHeldLease(pg.store, old.resource);
    const result = await forceReleaseAudited(
      { actor: ALICE, store: "pg-test", resource: old.resource, leaseId: old.leaseId, reason: REASON, request: REQUEST },
      auditDeps(audit.log, { "pg-test": target() }),
    );
    expect(result).toMatchObject({ outcome: "lease_changed", current: { leaseId: now.leaseId, owner: "worker-1", fencingToken: now.fencingToken } });
    expect((await pg.store.get(old.resource))?.leaseId).toBe(now.leaseId);
    const entries = await auditEntriesFor(audit.log, old.resource);
    expect(entries.map((e) => e.outcome)).toEqual(["lease_changed"]);
    expect(entries[0]!.newHolder).toMatchObject({ leaseId: now.leaseId });
  });

  it("is one transaction: when the outcome entry cannot be written, the release and the requested entry roll back", async () => {
    const lease = await acquireHeldLease(pg.store, "audit:pg:atomic");
    // Make the database refuse the outcome row, after force_release() already ran in the transaction.
    const a = `"${audit.schema}"`;
    await audit.admin.query(`
      CREATE FUNCTION ${a}.refuse_released() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.outcome = 'released' AND NEW.resource = 'audit:pg:atomic' THEN RAISE EXCEPTION 'disk full (test)'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_released BEFORE INSERT ON ${a}.audit_log FOR EACH ROW EXECUTE FUNCTION ${a}.refuse_released();`);
    try {
      const result = await forceReleaseAudited(
        { actor: ALICE, store: "pg-test", resource: lease.resource, leaseId: lease.leaseId, reason: REASON, request: REQUEST },
        auditDeps(audit.log, { "pg-test": target() }),
      );
      expect(result.outcome).toBe("audit_unavailable");
    } finally {
      await audit.admin.query(`DROP TRIGGER refuse_released ON ${a}.audit_log; DROP FUNCTION ${a}.refuse_released();`);
    }
    expect((await pg.store.get(lease.resource))?.leaseId).toBe(lease.leaseId);
    expect((await pg.store.events({ resource: lease.resource, kinds: ["force_released"] })).items).toEqual([]);
    expect(await auditEntriesFor(audit.log, lease.resource)).toEqual([]);
  });

  it("fails closed when the audit schema is not migrated (force_release() missing): nothing is released", async () => {
    const lease = await acquireHeldLease(pg.store, "audit:pg:unmigrated");
    const unmigrated = new AuditLog({ connectionString: TEST_DATABASE_URL, schema: "lw_test_000000000000", key: audit.key });
    try {
      const result = await forceReleaseAudited(
        { actor: ALICE, store: "pg-test", resource: lease.resource, leaseId: lease.leaseId, reason: REASON, request: REQUEST },
        auditDeps(unmigrated, { "pg-test": target() }),
      );
      expect(result.outcome).toBe("audit_unavailable");
      expect((await pg.store.get(lease.resource))?.leaseId).toBe(lease.leaseId);
    } finally {
      await unmigrated.close();
    }
  });

  it("records a refused attempt with the lease shown", async () => {
    const lease = await acquireHeldLease(pg.store, "audit:pg:denied");
    const result = await recordRefusedAttempt(
      { actor: { id: "sub-bob", email: "bob@example.test", roles: ["viewer"] }, store: "pg-test", resource: lease.resource, leaseId: lease.leaseId, reason: REASON, request: REQUEST, outcome: "denied_role" },
      auditDeps(audit.log, { "pg-test": target() }),
    );
    expect(result).toHaveProperty("auditId");
    const entries = await auditEntriesFor(audit.log, lease.resource);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ outcome: "denied_role", actorSub: "sub-bob", owner: "worker-1", fencingToken: lease.fencingToken });
    expect((await pg.store.get(lease.resource))?.leaseId).toBe(lease.leaseId);
  });
});

describe("forceReleaseAudited, Redis store (requested, then the outcome)", () => {
  const { store: redis, audit } = setUpAuditedStore("redis");

  it("writes requested before the release and released after it", async () => {
    const lease = await acquireHeldLease(redis.store, "audit:redis:one");
    const result = await forceReleaseAudited(
      { actor: ALICE, store: "redis-test", resource: lease.resource, leaseId: lease.leaseId, reason: REASON, request: REQUEST },
      auditDeps(audit.log, { "redis-test": redis.store }),
    );
    expect(result.outcome).toBe("released");
    expect(await redis.store.get(lease.resource)).toBeNull();
    const entries = await auditEntriesFor(audit.log, lease.resource);
    expect(entries.map((e) => e.outcome)).toEqual(["requested", "released"]);
    expect(entries[1]!.resolvesId).toBe(entries[0]!.id);
    // Two transactions: the requested entry was committed before the release.
    const writers = await audit.admin.query(`SELECT DISTINCT xmin::text FROM "${audit.schema}".audit_log WHERE resource = $1`, [lease.resource]);
    expect(writers.rowCount).toBe(2);
  });

  it("a process that died between the release and its outcome: the open entry is resolved from the store's events", async () => {
    const lease = await acquireHeldLease(redis.store, "audit:redis:crash");
    const kept = await acquireHeldLease(redis.store, "audit:redis:crash-not-released");
    // What forceReleaseAudited does up to the crash: the requested entry, then the release.
    const requested = await audit.log.append({
      requestId: "req-crash", actorSub: ALICE.id, actorEmail: ALICE.email, actorRoles: ALICE.roles, action: "force_release", store: "redis-test",
      resource: lease.resource, leaseId: lease.leaseId, owner: lease.owner, task: lease.task, fencingToken: lease.fencingToken, reason: REASON,
      outcome: "requested", newHolder: null, ip: null, userAgent: null, resolvesId: null, detail: null,
    });
    await redis.store.forceRelease({ resource: lease.resource, leaseId: lease.leaseId, actor: ALICE.id, reason: REASON });
    // And one that died before releasing: its entry must say nothing was released.
    const unreleased = await audit.log.append({
      requestId: "req-crash-2", actorSub: ALICE.id, actorEmail: ALICE.email, actorRoles: ALICE.roles, action: "force_release", store: "redis-test",
      resource: kept.resource, leaseId: kept.leaseId, owner: kept.owner, task: kept.task, fencingToken: kept.fencingToken, reason: REASON,
      outcome: "requested", newHolder: null, ip: null, userAgent: null, resolvesId: null, detail: null,
    });

    // Within the grace period another process may still be mid-release: left alone.
    const early = await resolvePendingForceReleases(auditDeps(audit.log, { "redis-test": redis.store }));
    expect(early.resolved).toEqual([]);

    const resolved = await resolvePendingForceReleases(auditDeps(audit.log, { "redis-test": redis.store }, 0));
    expect(resolved.resolved).toEqual([
      { id: requested!.id, outcome: "released" },
      { id: unreleased!.id, outcome: "failed" },
    ]);
    expect((await auditEntriesFor(audit.log, lease.resource)).map((e) => [e.outcome, e.resolvesId])).toEqual([["requested", null], ["released", requested!.id]]);
    expect((await redis.store.get(kept.resource))?.leaseId).toBe(kept.leaseId);
    // Idempotent: a second pass (another replica starting) adds nothing.
    expect((await resolvePendingForceReleases(auditDeps(audit.log, { "redis-test": redis.store }, 0))).resolved).toEqual([]);
    expect(await verifyAuditChain({ pool: audit.admin, schema: audit.schema, key: audit.key })).toMatchObject({ ok: true });
  });

  it("fails closed: with the audit database unreachable nothing is released", async () => {
    const lease = await acquireHeldLease(redis.store, "audit:redis:closed");
    const down = new AuditLog({ connectionString: "postgres://postgres@127.0.0.1:1/postgres", schema: audit.schema, key: audit.key });
    try {
      const result = await forceReleaseAudited(
        { actor: ALICE, store: "redis-test", resource: lease.resource, leaseId: lease.leaseId, reason: REASON, request: REQUEST },
        auditDeps(down, { "redis-test": redis.store }),
      );
      expect(result.outcome).toBe("audit_unavailable");
      expect((await redis.store.get(lease.resource))?.leaseId).toBe(lease.leaseId);
      expect(await recordRefusedAttempt({ actor: ALICE, store: "redis-test", resource: lease.resource, leaseId: lease.leaseId, reason: REASON, request: REQUEST, outcome: "rate_limited" }, auditDeps(down, { "redis-test": redis.store }))).toMatchObject({ outcome: "audit_unavailable" });
    } finally {
      await down.close();
    }
  });
});

describe("forceReleaseAudited, Postgres store in another database (or spelled differently)", () => {
  const { store: pg, audit } = setUpAuditedStore("postgres");

  it("fails closed when the audit database is down, and uses requested/outcome when it is up", async () => {
    const lease = await acquireHeldLease(pg.store, "audit:elsewhere:one");
    const config = { name: "pg-elsewhere", kind: "postgres" as const, url: "postgres://postgres@localhost:5432/postgres" };
    const down = new AuditLog({ connectionString: "postgres://postgres@127.0.0.1:1/postgres", schema: audit.schema, key: audit.key });
    try {
      const refused = await forceReleaseAudited(
        { actor: ALICE, store: "pg-elsewhere", resource: lease.resource, leaseId: lease.leaseId, reason: REASON, request: REQUEST },
        auditDeps(down, { "pg-elsewhere": { store: pg.store, config } }),
      );
      expect(refused.outcome).toBe("audit_unavailable");
      expect((await pg.store.get(lease.resource))?.leaseId).toBe(lease.leaseId);
    } finally {
      await down.close();
    }
    const result = await forceReleaseAudited(
      { actor: ALICE, store: "pg-elsewhere", resource: lease.resource, leaseId: lease.leaseId, reason: REASON, request: REQUEST },
      auditDeps(audit.log, { "pg-elsewhere": { store: pg.store, config } }),
    );
    expect(result.outcome).toBe("released");
    expect((await auditEntriesFor(audit.log, lease.resource)).map((e) => e.outcome)).toEqual(["requested", "released"]);
  });
});
