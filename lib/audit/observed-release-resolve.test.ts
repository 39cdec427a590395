import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditLog } from "@/lib/audit/log";
import { releaseObservedAudited, resolvePendingObservedReleases, type ObservedReleaseDeps } from "@/lib/audit/observed-release";
import { listAuditEntries } from "@/lib/audit/read";
import { SCOPE_ALL } from "@/lib/auth/scope";
import type { TObservedConfig } from "@/lib/observed/config";
import { migrateObservedHistory, readRecordAfter, recordSample } from "@/lib/observed/observer";
import { shedLockSource } from "@/lib/observed/sources";
import { freshPgSchema, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { ALICE, REQUEST, createAuditFixture, type AuditFixture } from "@/test/support/audit";

/**
 * A console that stops between an observed force-release's `requested` entry and
 * its outcome leaves the entry open; a later pass closes it from the observer's
 * record of the lock after the request.
 */

const REASON = "holder pod is gone, the nightly job is stuck";
const shedSchema = freshPgSchema();
const history = freshPgSchema();
const table = `${shedSchema.schema}.shedlock`;
const admin = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 3 });
admin.on("error", () => {});
let audit: AuditFixture;
let token = 0;

const config: TObservedConfig = { name: "shedlock", kind: "shedlock", url: TEST_DATABASE_URL, releaseUrl: TEST_DATABASE_URL, table };
const readRecord: ObservedReleaseDeps["readRecordAfter"] = (query) => readRecordAfter(admin, history.schema, query);
const deps = (log: AuditLog, pendingGraceMs?: number): ObservedReleaseDeps => ({
  getAuditLog: async () => log,
  getObserved: (name) => (name === config.name ? config : undefined),
  readRecordAfter: readRecord,
  ...(pendingGraceMs !== undefined ? { pendingGraceMs } : {}),
});

/** One observer sample of the real ShedLock table. */
const observe = async () => {
  const sample = await shedLockSource("shedlock", admin, { table }).sample();
  await recordSample(admin, history.schema, { store: "shedlock", fencingToken: String(++token), ...sample });
};

beforeAll(async () => {
  audit = await createAuditFixture();
  await migrateObservedHistory(admin, history.schema);
  await admin.query(`CREATE SCHEMA "${shedSchema.schema}"`);
  await admin.query(`CREATE TABLE ${table} (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))`);
});
afterAll(async () => {
  await audit?.cleanup();
  await shedSchema.drop();
  await history.drop();
  await admin.end();
});

async function takeShedLock(name: string, lockedBy: string): Promise<{ lockedBy: string; lockedAt: string }> {
  const { rows } = await admin.query<{ locked_at: string }>(
    `INSERT INTO ${table} (name, lock_until, locked_at, locked_by) VALUES ($1, timezone('utc', now()) + interval '10 minutes', timezone('utc', now()), $2)
     RETURNING to_char(locked_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS locked_at`,
    [name, lockedBy],
  );
  return { lockedBy, lockedAt: rows[0]!.locked_at };
}

async function entriesFor(resource: string) {
  const { items } = await listAuditEntries({ resource, limit: 100 }, audit.log);
  return items.reverse();
}

/** The audit log as a console sees it that loses its audit database right after writing `requested`. */
function logLostAfterRequested(log: AuditLog): AuditLog {
  const lost = Object.create(log) as AuditLog;
  lost.append = async (draft) => {
    if (draft.outcome !== "requested") throw new Error("connection terminated unexpectedly");
    return log.append(draft);
  };
  return lost;
}

describe("resolvePendingObservedReleases: requested entries a stopped console left open", () => {
  it("closes an entry whose release ran, saying the observer saw the holder shown let go, and one that never reached the store as nothing released", async () => {
    const released = await takeShedLock("closeBooks", "worker-1.example");
    const untouched = await takeShedLock("sendInvoices", "worker-2.example");
    await observe();

    // The release runs, then the outcome cannot be written: `requested` stays open.
    const result = await releaseObservedAudited(
      { actor: ALICE, scope: SCOPE_ALL, request: REQUEST, form: { store: "shedlock", resource: "closeBooks", shown: { kind: "shedlock", ...released }, reason: REASON } },
      deps(logLostAfterRequested(audit.log)),
    );
    expect(result.outcome).toBe("released");
    // The next console died after `requested`, before touching the table.
    await audit.log.append({
      requestId: "req-crashed", actorSub: ALICE.id, actorEmail: ALICE.email, actorRoles: ALICE.roles, action: "force_release", store: "shedlock",
      resource: "sendInvoices", leaseId: null, owner: `${untouched.lockedBy} · locked at ${untouched.lockedAt}`, task: null, fencingToken: null, reason: REASON,
      outcome: "requested", newHolder: null, ip: null, userAgent: null, resolvesId: null, detail: "observed shedlock: set lock_until to now",
    });
    expect((await entriesFor("closeBooks")).map((e) => e.outcome)).toEqual(["requested"]);
    expect((await entriesFor("sendInvoices")).map((e) => e.outcome)).toEqual(["requested"]);

    // Within the grace period an entry may still be in flight elsewhere: left alone.
    expect((await resolvePendingObservedReleases(deps(audit.log, 60_000))).resolved).toEqual([]);

    await observe();
    const resolved = await resolvePendingObservedReleases(deps(audit.log, 0));
    const [closeBooks, sendInvoices] = [await entriesFor("closeBooks"), await entriesFor("sendInvoices")];
    expect(resolved.resolved).toEqual([
      { id: closeBooks[0]!.id, outcome: "failed" },
      { id: sendInvoices[0]!.id, outcome: "failed" },
    ]);
    expect(closeBooks.map((e) => [e.outcome, e.resolvesId])).toEqual([["requested", null], ["failed", closeBooks[0]!.id]]);
    expect(closeBooks[1]!.detail).toMatch(/the observer saw the holder shown let go at .*: whether this request released it is unknown/);
    expect(closeBooks[1]).toMatchObject({ actorSub: ALICE.id, reason: REASON, owner: `worker-1.example · locked at ${released.lockedAt}` });
    expect(sendInvoices[1]!.detail).toMatch(/the holder shown still held the lock at the observer's sample of .*: nothing was released/);

    // Closed once: a second pass finds nothing open.
    expect((await resolvePendingObservedReleases(deps(audit.log, 0))).resolved).toEqual([]);
  });

  it("without a sample after the request it says the outcome is unknown, and it never touches a lease store's entry", async () => {
    const shown = await takeShedLock("rotateKeys", "worker-3.example");
    const observedEntry = await audit.log.append({
      requestId: "req-no-sample", actorSub: ALICE.id, actorEmail: ALICE.email, actorRoles: ALICE.roles, action: "force_release", store: "shedlock",
      resource: "rotateKeys", leaseId: null, owner: `${shown.lockedBy} · locked at ${shown.lockedAt}`, task: null, fencingToken: null, reason: REASON,
      outcome: "requested", newHolder: null, ip: null, userAgent: null, resolvesId: null, detail: null,
    });
    const leaseEntry = await audit.log.append({
      requestId: "req-lease", actorSub: ALICE.id, actorEmail: ALICE.email, actorRoles: ALICE.roles, action: "force_release", store: "postgres",
      resource: "tenant_1:ledger", leaseId: "5d0c6b1e-3f0a-4a43-9a56-8f1f3c2b7a10", owner: "worker-9", task: "t", fencingToken: "7", reason: REASON,
      outcome: "requested", newHolder: null, ip: null, userAgent: null, resolvesId: null, detail: null,
    });
    const resolved = await resolvePendingObservedReleases(deps(audit.log, 0));
    expect(resolved.resolved).toEqual([{ id: observedEntry!.id, outcome: "failed" }]);
    expect((await entriesFor("rotateKeys"))[1]!.detail).toMatch(/the observer has no sample after the request: whether it applied is unknown/);
    expect((await entriesFor("tenant_1:ledger")).map((e) => e.outcome)).toEqual(["requested"]);
    expect(leaseEntry).not.toBeNull();
  });
});
