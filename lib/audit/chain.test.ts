import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditLog } from "@/lib/audit/log";
import { type AuditDraft } from "@/lib/audit/entry";
import { canonicalJson } from "@/lib/audit/chain";
import { ALICE, createAuditFixture, type AuditFixture } from "@/test/support/audit";

const ROOT = path.resolve(__dirname, "../..");
const TSX = path.join(ROOT, "node_modules", ".bin", "tsx");
const run = promisify(execFile);

function draft(n: number): AuditDraft {
  return {
    requestId: `req-${n}`, actorSub: ALICE.id, actorEmail: ALICE.email, actorRoles: ALICE.roles, action: "force_release", store: "pg-main",
    resource: `chain:r${n}`, leaseId: `lease-${n}`, owner: "w", task: "t", fencingToken: String(n), reason: "reason for the test",
    outcome: n % 2 === 0 ? "released" : "denied_role", newHolder: n % 3 === 0 ? { leaseId: "x", owner: "o", task: "t", fencingToken: "9", expiresAt: "2026-01-01T00:00:00.000Z" } : null,
    ip: "198.51.100.1", userAgent: "ua", resolvesId: null, detail: null,
  };
}

/** Runs the real `npm run audit:verify` script against the fixture's schema. */
async function verifyScript(audit: AuditFixture): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(TSX, [path.join(ROOT, "scripts", "audit-verify.ts")], {
      cwd: ROOT,
      env: { ...process.env, LEASEWATCH_AUDIT_URL: audit.url, LEASEWATCH_AUDIT_SCHEMA: audit.schema, LEASEWATCH_AUDIT_KEY: audit.key },
    });
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

/** As a superuser with triggers (and FK checks) off: what someone with the database's keys could do. */
async function tamper(audit: AuditFixture, sql: string, values: unknown[] = []): Promise<void> {
  const client = await audit.admin.connect();
  try {
    await client.query("BEGIN");
    await client.query("SET LOCAL session_replication_role = replica");
    await client.query(sql.replaceAll("$schema", `"${audit.schema}"`), values);
    await client.query("COMMIT");
  } finally {
    client.release();
  }
}

describe("canonicalJson", () => {
  it("gives one text per value whatever the key order (jsonb reorders keys)", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { f: null, e: "x" }], c: new Date(0) } })).toBe('{"a":{"c":"1970-01-01T00:00:00.000Z","d":[1,{"e":"x","f":null}]},"b":1}');
  });
});

describe("audit chain", () => {
  let audit: AuditFixture;
  const ids: string[] = [];
  beforeAll(async () => {
    audit = await createAuditFixture();
    for (let n = 1; n <= 6; n++) ids.push((await audit.log.append(draft(n)))!.id);
  });
  afterAll(async () => {
    await audit?.cleanup();
  });

  it("refuses UPDATE, DELETE and TRUNCATE in the database, even for a superuser", async () => {
    const t = `"${audit.schema}".audit_log`;
    await expect(audit.admin.query(`UPDATE ${t} SET reason = 'rewritten' WHERE id = $1`, [ids[0]])).rejects.toThrow(/append-only: UPDATE refused/);
    await expect(audit.admin.query(`DELETE FROM ${t} WHERE id = $1`, [ids[0]])).rejects.toThrow(/append-only: DELETE refused/);
    await expect(audit.admin.query(`TRUNCATE ${t}`)).rejects.toThrow(/append-only: TRUNCATE refused/);
    const { rows } = await audit.admin.query(`SELECT count(*)::int AS n FROM ${t}`);
    expect(rows[0].n).toBe(6);
  });

  it("concurrent appends from several processes' pools keep one chain", async () => {
    const writers = Array.from({ length: 4 }, () => new AuditLog({ connectionString: audit.url, schema: audit.schema, key: audit.key }));
    try {
      const written = await Promise.all(Array.from({ length: 40 }, (_, i) => writers[i % writers.length]!.append(draft(100 + i))));
      expect(written.every((w) => w !== null)).toBe(true);
      const { rows } = await audit.admin.query(`SELECT count(DISTINCT prev_hash)::int AS links, count(*)::int AS n FROM "${audit.schema}".audit_log`);
      // A fork would show as two entries with the same predecessor.
      expect(rows[0]).toEqual({ links: 46, n: 46 });
      const ok = await verifyScript(audit);
      expect(ok.out).toMatch(/audit chain intact: 46 entries/);
      expect(ok.code).toBe(0);
    } finally {
      await Promise.all(writers.map((w) => w.close()));
    }
  });

  it("audit:verify names a changed entry", async () => {
    await tamper(audit, "UPDATE $schema.audit_log SET reason = 'nothing to see' WHERE id = $1", [ids[2]]);
    const result = await verifyScript(audit);
    expect(result.code).toBe(1);
    expect(result.out).toContain(`entry #${ids[2]} was changed`);
  });

  it("audit:verify names where an entry was removed", async () => {
    // Put the changed entry back as it was, so the next break is the first one.
    await tamper(audit, "UPDATE $schema.audit_log SET reason = 'reason for the test' WHERE id = $1", [ids[2]]);
    expect((await verifyScript(audit)).code).toBe(0);
    await tamper(audit, "DELETE FROM $schema.audit_log WHERE id = $1", [ids[3]]);
    const result = await verifyScript(audit);
    expect(result.code).toBe(1);
    expect(result.out).toContain(`an entry was removed before entry #${ids[4]} (after entry #${ids[2]})`);
  });

  it("audit:verify names a reordered entry", async () => {
    const fresh = await createAuditFixture();
    try {
      const own: string[] = [];
      for (let n = 1; n <= 4; n++) own.push((await fresh.log.append(draft(n)))!.id);
      expect((await verifyScript(fresh)).code).toBe(0);
      // Swap the storage positions of the 2nd and 3rd entries.
      await tamper(fresh, "UPDATE $schema.audit_log SET id = -1 WHERE id = $1", [own[1]]);
      await tamper(fresh, "UPDATE $schema.audit_log SET id = $1 WHERE id = $2", [own[1], own[2]]);
      await tamper(fresh, "UPDATE $schema.audit_log SET id = $1 WHERE id = -1", [own[2]]);
      const result = await verifyScript(fresh);
      expect(result.code).toBe(1);
      expect(result.out).toContain(`entry #${own[1]} is out of order`);
    } finally {
      await fresh.cleanup();
    }
  });

  it("audit:verify goes on past a broken entry and lists every one that fails, with its kind", async () => {
    const fresh = await createAuditFixture();
    try {
      const own: string[] = [];
      for (let n = 1; n <= 8; n++) own.push((await fresh.log.append(draft(n)))!.id);
      await tamper(fresh, "UPDATE $schema.audit_log SET reason = 'rewritten' WHERE id = $1", [own[1]]);
      await tamper(fresh, "DELETE FROM $schema.audit_log WHERE id = $1", [own[4]]);
      await tamper(fresh, "UPDATE $schema.audit_log SET detail = 'added later' WHERE id = $1", [own[6]]);
      const result = await verifyScript(fresh);
      expect(result.code).toBe(1);
      expect(result.out).toContain("audit chain BROKEN: 3 entries fail");
      expect(result.out).toContain(`entry #${own[1]} was changed`);
      expect(result.out).toContain(`an entry was removed before entry #${own[5]} (after entry #${own[3]})`);
      expect(result.out).toContain(`entry #${own[6]} was changed`);
      expect(result.out).toContain("4 of 7 entries verified");
    } finally {
      await fresh.cleanup();
    }
  });

  it("audit:verify refuses to run without a long enough key", async () => {
    const result = await run(TSX, [path.join(ROOT, "scripts", "audit-verify.ts")], {
      cwd: ROOT,
      env: { ...process.env, LEASEWATCH_AUDIT_URL: audit.url, LEASEWATCH_AUDIT_SCHEMA: audit.schema, LEASEWATCH_AUDIT_KEY: "short" },
    }).then(
      () => ({ code: 0, out: "" }),
      (e: { code: number; stderr: string }) => ({ code: e.code, out: e.stderr }),
    );
    expect(result.code).toBe(2);
    expect(result.out).toMatch(/LEASEWATCH_AUDIT_KEY must be at least 32 characters/);
  });
});
