import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { closeProcessAuditLog } from "@/lib/audit/context";
import { startAuditHousekeeping } from "@/lib/audit/housekeeping";
import { listAuditEntries } from "@/lib/audit/read";
import { TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { ALICE, createAuditFixture, type AuditFixture } from "@/test/support/audit";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";

const REGISTRY_KEY = Symbol.for("leasewatch.console.registry");

describe("console start-up resolves force-release entries a crash left open", () => {
  let redis: StoreFixture;
  let audit: AuditFixture;
  beforeAll(async () => {
    redis = await createStoreFixture("redis");
    audit = await createAuditFixture();
    if (redis.spec.kind !== "redis") throw new Error("unreachable");
    vi.stubEnv("LEASEWATCH_STORES", JSON.stringify([{ name: "redis-main", kind: "redis", url: redis.spec.url, namespace: redis.spec.namespace }]));
    vi.stubEnv("LEASEWATCH_AUDIT_URL", TEST_DATABASE_URL);
    vi.stubEnv("LEASEWATCH_AUDIT_SCHEMA", audit.schema);
    vi.stubEnv("LEASEWATCH_AUDIT_KEY", audit.key);
    vi.stubEnv("LEASEWATCH_MIGRATE", "");
    vi.stubEnv("LEASEWATCH_SWEEP", "");
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await closeProcessAuditLog();
    const g = globalThis as Record<symbol, { entries: Array<{ store: { close(): Promise<void> } }> } | undefined>;
    for (const e of g[REGISTRY_KEY]?.entries ?? []) await e.store.close();
    delete g[REGISTRY_KEY];
    await audit?.cleanup();
    await redis?.cleanup();
  });

  it("records released for a lease the store force-released, from the console's own configuration", async () => {
    const r = await redis.store.acquire({ resource: "startup:crash", owner: "w", task: "t", ttlMs: 60_000 });
    if (!r.acquired) throw new Error("setup");
    // The crashed process got this far: requested entry, then the release; no outcome.
    const requested = await audit.log.append({
      requestId: "req-crash", actorSub: ALICE.id, actorEmail: ALICE.email, actorRoles: ALICE.roles, action: "force_release", store: "redis-main",
      resource: r.lease.resource, leaseId: r.lease.leaseId, owner: r.lease.owner, task: r.lease.task, fencingToken: r.lease.fencingToken,
      reason: "reason for the test", outcome: "requested", newHolder: null, ip: null, userAgent: null, resolvesId: null, detail: null,
    });
    await redis.store.forceRelease({ resource: r.lease.resource, leaseId: r.lease.leaseId, actor: ALICE.id, reason: "reason for the test" });

    const first = await startAuditHousekeeping({ graceMs: 0 });
    expect(first?.resolved).toEqual([{ id: requested!.id, outcome: "released" }]);
    const { items } = await listAuditEntries({ resource: r.lease.resource, limit: 10 }, audit.log);
    expect(items.map((e) => [e.outcome, e.resolvesId])).toEqual([["released", requested!.id], ["requested", null]]);
  });

  it("closes an observed force-release entry a crash left open, even before the observer has recorded anything", async () => {
    vi.stubEnv("LEASEWATCH_OBSERVED", JSON.stringify([{ name: "shedlock", kind: "shedlock", url: TEST_DATABASE_URL, releaseUrl: TEST_DATABASE_URL }]));
    vi.stubEnv("LEASEWATCH_OBSERVED_SCHEMA", `${audit.schema}_observed_none`);
    const requested = await audit.log.append({
      requestId: "req-crash-observed", actorSub: ALICE.id, actorEmail: ALICE.email, actorRoles: ALICE.roles, action: "force_release", store: "shedlock",
      resource: "startup:nightly-job", leaseId: null, owner: "worker-1 · locked at 2026-11-20T10:00:00.000Z", task: null, fencingToken: null,
      reason: "reason for the test", outcome: "requested", newHolder: null, ip: null, userAgent: null, resolvesId: null, detail: null,
    });
    const first = await startAuditHousekeeping({ graceMs: 0 });
    expect(first?.resolved).toEqual([{ id: requested!.id, outcome: "failed" }]);
    expect(first?.open).toEqual([]);
    const { items } = await listAuditEntries({ resource: "startup:nightly-job", limit: 10 }, audit.log);
    expect(items.map((e) => [e.outcome, e.resolvesId])).toEqual([["failed", requested!.id], ["requested", null]]);
    expect(items[0]!.detail).toContain("the observer has no sample after the request");
  });
});
