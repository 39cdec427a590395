import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordedActor, resolvePendingForceReleases } from "@/lib/audit/force-release";
import { listAuditEntries } from "@/lib/audit/read";
import { buildBucketKeys, EVENTS_BACKLOG_FACTOR } from "@leasewatch/lease/internal";
import type { Lease, RedisLeaseStore } from "@leasewatch/lease";
import { ALICE, auditDeps, createAuditFixture, type AuditFixture } from "@/test/support/audit";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";

/**
 * The start-up resolution of a force-release a crash left `requested` must not depend on the
 * store's event history: on Redis that history is capped, and with nobody projecting, a backlog
 * past the ceiling loses its oldest events before any read model has them.
 */

const CAP = 10;
const REASON = "stuck after the deploy, holder pod is gone";

describe("resolving an open force-release entry after the store's history was trimmed", () => {
  let fixture: StoreFixture<"redis"> | undefined;
  let store: RedisLeaseStore;
  let audit: AuditFixture;
  beforeAll(async () => {
    fixture = await createStoreFixture("redis", { options: { buckets: 1, eventsMaxLen: CAP } });
    store = fixture.store;
    audit = await createAuditFixture();
  });
  afterAll(async () => {
    await fixture?.cleanup();
    await audit?.cleanup();
  });

  async function acquire(resource: string): Promise<Lease> {
    const r = await store.acquire({ resource, owner: "worker-1", task: "run-1", ttlMs: 600_000 });
    if (!r.acquired) throw new Error("test setup: acquire failed");
    return r.lease;
  }

  /** What forceReleaseAudited writes before it calls the store. */
  function appendRequested(lease: Lease) {
    return audit.log.append({
      requestId: `req-${lease.resource}`, actorSub: ALICE.id, actorEmail: ALICE.email, actorRoles: ALICE.roles, action: "force_release", store: "redis-test",
      resource: lease.resource, leaseId: lease.leaseId, owner: lease.owner, task: lease.task, fencingToken: lease.fencingToken, reason: REASON,
      outcome: "requested", newHolder: null, ip: null, userAgent: null, resolvesId: null, detail: null,
    });
  }

  it("records released for the lease that was force-released, failed for the ones this attempt did not release", async () => {
    const released = await acquire("resolve:released");
    const kept = await acquire("resolve:kept");
    const byOther = await acquire("resolve:by-other");
    const requested = await appendRequested(released);
    const forced = await store.forceRelease({ resource: released.resource, leaseId: released.leaseId, actor: recordedActor(ALICE), reason: REASON });
    if (!forced.released) throw new Error("test setup: force-release failed");
    // This process dies here. The next one died before calling the store at all.
    const unreleased = await appendRequested(kept);
    // And this one died before calling the store, while another operator force-released the lease.
    const preempted = await appendRequested(byOther);
    await store.forceRelease({ resource: byOther.resource, leaseId: byOther.leaseId, actor: "https://sso.example.test#bob", reason: REASON });

    // Workers go on (nobody projects) until the stream's backlog ceiling trims the oldest events.
    for (let i = 0; i < EVENTS_BACKLOG_FACTOR * CAP + 300; i += 50) {
      await Promise.all(Array.from({ length: 50 }, () => store.acquire({ resource: kept.resource, owner: "other", task: "other", ttlMs: 1_000 })));
    }
    const stream = buildBucketKeys(store.namespace, 0).events;
    expect(await store.client.xlen(stream)).toBeLessThanOrEqual(EVENTS_BACKLOG_FACTOR * CAP + 100);
    // The force_released event is gone from the history.
    expect((await store.events({ kinds: ["force_released"] })).items).toEqual([]);

    const result = await resolvePendingForceReleases(auditDeps(audit.log, { "redis-test": store }, 0));
    expect(result.resolved).toEqual([
      { id: requested!.id, outcome: "released" },
      { id: unreleased!.id, outcome: "failed" },
      { id: preempted!.id, outcome: "failed" },
    ]);
    const { items } = await listAuditEntries({ resource: released.resource, limit: 10 }, audit.log);
    expect(items.map((e) => [e.outcome, e.resolvesId])).toEqual([["released", requested!.id], ["requested", null]]);
    expect(items[0]!.detail).toContain(forced.event.id);
    expect((await store.get(kept.resource))?.leaseId).toBe(kept.leaseId);
  });
});
