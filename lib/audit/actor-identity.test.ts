/**
 * Who did it, as the records say: the person's stable id (the IdP's `sub` with its
 * issuer), never an email the IdP did not verify. Real Postgres store and audit log.
 */
import { describe, expect, it } from "vitest";
import { forceReleaseAudited, resolvePendingForceReleases } from "@/lib/audit/force-release";
import { listAuditEntries } from "@/lib/audit/read";
import { REQUEST, auditDeps, auditTargetInAuditDatabase, setUpAuditedStore, acquireHeldLease } from "@/test/support/audit";

const ISSUER = "https://sso.example.test";
const ALICE = { id: `${ISSUER}#alice`, email: "alice@example.test", roles: ["operator"] };
/** Eve's IdP account claims alice's address, unverified: the console records no email for her. */
const EVE = { id: `${ISSUER}#eve`, email: null, roles: ["operator"] };
const REASON = "stuck after the deploy, holder pod is gone";

describe("the actor of a force-release", () => {
  const { store: pg, audit } = setUpAuditedStore("postgres", { registerSchema: true });
  // Same database as the audit log: the release runs through the log's force_release() function.
  const deps = () =>
    auditDeps(audit.log, {
      "pg-test": auditTargetInAuditDatabase("pg-test", pg),
    });
  const release = async (actor: typeof ALICE | typeof EVE, resource: string) => {
    const lease = await acquireHeldLease(pg.store, resource);
    const result = await forceReleaseAudited({ actor, store: "pg-test", resource, leaseId: lease.leaseId, reason: REASON, request: REQUEST }, deps());
    expect(result.outcome).toBe("released");
    const events = await pg.store.events({ resource, kinds: ["force_released"] });
    return events.items[0]!;
  };
  const resourcesFor = async (actor: string) => (await listAuditEntries({ actor, limit: 100 }, audit.log)).items.map((e) => e.resource);

  it("is the person's stable id in the store's event, whatever their email", async () => {
    expect((await release(ALICE, "actor:alice")).actor).toBe(ALICE.id);
    expect((await release(EVE, "actor:eve")).actor).toBe(EVE.id);
  });

  it("filters: eve is found under her own id only, never under alice's id or alice's email", async () => {
    expect(new Set(await resourcesFor(EVE.id))).toEqual(new Set(["actor:eve"]));
    expect(await resourcesFor(ALICE.id)).not.toContain("actor:eve");
    expect(await resourcesFor(ALICE.email)).not.toContain("actor:eve");
    expect(await resourcesFor(ALICE.email)).toContain("actor:alice");
  });

  it("entries from before stable ids (an email as the actor) stay readable, filterable and resolvable", async () => {
    // A crashed process left a `requested` entry written as the console used to: bare sub, email as the store's actor.
    const lease = await acquireHeldLease(pg.store, "actor:legacy");
    await pg.store.forceRelease({ resource: lease.resource, leaseId: lease.leaseId, actor: "alice@example.test", reason: REASON });
    await audit.log.append({
      requestId: "req-legacy", actorSub: "alice", actorEmail: "alice@example.test", actorRoles: ["operator"], action: "force_release", store: "pg-test",
      resource: lease.resource, leaseId: lease.leaseId, owner: "worker-1", task: "run-1", fencingToken: lease.fencingToken, reason: REASON,
      outcome: "requested", newHolder: null, ip: null, userAgent: null, resolvesId: null, detail: null,
    });
    const resolved = await resolvePendingForceReleases({ ...deps(), pendingGraceMs: 0 });
    expect(resolved.resolved.map((r) => r.outcome)).toEqual(["released"]);
    const legacy = (await listAuditEntries({ actor: "alice@example.test", limit: 100 }, audit.log)).items.filter((e) => e.resource === "actor:legacy");
    expect(legacy.map((e) => [e.outcome, e.actorSub, e.actorEmail])).toEqual([
      ["released", "alice", "alice@example.test"],
      ["requested", "alice", "alice@example.test"],
    ]);
  });
});
