import { describe, expect, it } from "vitest";
import { ChainWatcher } from "@/lib/audit/chain-status";
import type { AuditDraft } from "@/lib/audit/entry";
import { ALICE, setUpAuditLog } from "@/test/support/audit";

function draft(n: number): AuditDraft {
  return {
    requestId: `req-${n}`, actorSub: ALICE.id, actorEmail: ALICE.email, actorRoles: ALICE.roles, action: "force_release", store: "pg-main",
    resource: `status:r${n}`, leaseId: `lease-${n}`, owner: null, task: null, fencingToken: null, reason: "reason for the test",
    outcome: "denied_role", newHolder: null, ip: null, userAgent: null, resolvesId: null, detail: null,
  };
}

describe("the chain state /audit shows", () => {
  const audit = setUpAuditLog();

  it("verifies what was appended since the last look, and keeps naming a broken entry after later good ones", async () => {
    const watcher = new ChainWatcher((options) => audit.log.verifyChain(options), { maxAgeMs: 0 });
    expect(await watcher.look()).toMatchObject({ ok: true, through: null, entries: 0, complete: true });
    const ids: string[] = [];
    for (let n = 1; n <= 3; n++) ids.push((await audit.log.append(draft(n)))!.id);
    expect(await watcher.look()).toMatchObject({ ok: true, through: { id: ids[2] }, entries: 3 });

    for (let n = 4; n <= 6; n++) ids.push((await audit.log.append(draft(n)))!.id);
    // Someone with the database's keys rewrites a new entry before the next look.
    const client = await audit.admin.connect();
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL session_replication_role = replica");
      await client.query(`UPDATE "${audit.schema}".audit_log SET reason = 'rewritten' WHERE id = $1`, [ids[3]]);
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    await audit.log.append(draft(7));
    const status = await watcher.look();
    expect(status).toMatchObject({ ok: false, entries: 7, failureCount: 1, failures: [{ entryId: ids[3], problem: "changed" }] });
    await audit.log.append(draft(8));
    expect(await watcher.look()).toMatchObject({ ok: false, entries: 8, failureCount: 1 });
  });

  it("answers from memory while the last look is recent", async () => {
    let walks = 0;
    const watcher = new ChainWatcher(
      (options) => {
        walks++;
        return audit.log.verifyChain(options);
      },
      { maxAgeMs: 60_000 },
    );
    const [a, b] = await Promise.all([watcher.look(), watcher.look()]);
    expect(a).toBe(b);
    await watcher.look();
    expect(walks).toBe(1);
  });
});
