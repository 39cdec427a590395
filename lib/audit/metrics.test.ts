import { describe, expect, it } from "vitest";
import { AuditLog } from "@/lib/audit/log";
import { type AuditDraft } from "@/lib/audit/entry";
import { getMetricsText } from "@/lib/console/metrics/get-metrics-text";
import { ALICE, setUpAuditLog } from "@/test/support/audit";

const draft = (outcome: AuditDraft["outcome"], n: number): AuditDraft => ({
  requestId: `req-${n}`, actorSub: ALICE.id, actorEmail: ALICE.email, actorRoles: ALICE.roles, action: "force_release", store: "pg-main",
  resource: `metrics:r${n}`, leaseId: `lease-${n}`, owner: "w", task: "t", fencingToken: "1", reason: "reason for the test",
  outcome, newHolder: null, ip: null, userAgent: null, resolvesId: null, detail: null,
});

describe("/api/metrics force-release counters", () => {
  const audit = setUpAuditLog();

  it("counts force-releases by outcome from the audit log, so every replica reports the same", async () => {
    const outcomes = ["requested", "released", "requested", "released", "lease_changed", "denied_role", "denied_role", "denied_role"] as const;
    for (const [i, outcome] of outcomes.entries()) await audit.log.append(draft(outcome, i));
    // Two "replicas": separate pools, same answer.
    const other = new AuditLog({ connectionString: audit.url, schema: audit.schema, key: audit.key });
    try {
      for (const log of [audit.log, other]) {
        const { body } = await getMetricsText({ entries: [], audit: log });
        expect(body).toContain('leasewatch_force_releases_total{outcome="released"} 2');
        expect(body).toContain('leasewatch_force_releases_total{outcome="lease_changed"} 1');
        expect(body).toContain('leasewatch_force_releases_total{outcome="denied_role"} 3');
        expect(body).toContain('leasewatch_force_releases_total{outcome="failed"} 0');
        expect(body).not.toContain('outcome="requested"');
        expect(body).toContain("leasewatch_audit_up 1");
      }
    } finally {
      await other.close();
    }
  });

  it("an audit log that is down reports audit_up 0 and leaves the counters out rather than reading zero", async () => {
    const down = new AuditLog({ connectionString: "postgres://postgres@127.0.0.1:1/postgres", schema: audit.schema, key: audit.key });
    try {
      const { body } = await getMetricsText({ entries: [], audit: down });
      expect(body).toContain("leasewatch_audit_up 0");
      expect(body).not.toContain("leasewatch_force_releases_total{");
    } finally {
      await down.close();
    }
  });
});
