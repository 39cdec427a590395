import { randomInt } from "node:crypto";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { releaseObservedAudited, type ObservedReleaseDeps } from "@/lib/audit/observed-release";
import { listAuditEntries } from "@/lib/audit/read";
import { verifyAuditChain } from "@/lib/audit/verify";
import { SCOPE_ALL, scopeOf } from "@/lib/auth/scope";
import type { TObservedConfig } from "@/lib/observed/config";
import { readAdvisoryLocks } from "@/lib/observed/pg-advisory";
import { freshPgSchema, freshRedisNamespace, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { ALICE, REQUEST, createAuditFixture, type AuditFixture } from "@/test/support/audit";

const REASON = "holder pod is gone, the nightly job is stuck";
const VIEWER = { id: "https://sso.example.test#victor", email: "victor@example.test", roles: ["viewer"] };

const shedSchema = freshPgSchema();
const table = `${shedSchema.schema}.shedlock`;
const redisNs = freshRedisNamespace();
const redis = new Redis(redisNs.url);
const admin = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
admin.on("error", () => {});
const sessions: pg.Client[] = [];
let audit: AuditFixture;

const configs: TObservedConfig[] = [
  { name: "shedlock", kind: "shedlock", url: TEST_DATABASE_URL, releaseUrl: TEST_DATABASE_URL, table },
  { name: "redis-locks", kind: "redis-keys", url: redisNs.url, releaseUrl: redisNs.url, patterns: [`${redisNs.namespace}:locks:*`] },
  { name: "pg-advisory", kind: "pg-advisory", url: TEST_DATABASE_URL, releaseUrl: TEST_DATABASE_URL, names: [{ name: "tenant_1:billing-close", key: String(randomInt(1, 2 ** 47)) }] },
  { name: "shedlock-readonly", kind: "shedlock", url: TEST_DATABASE_URL, table },
];
const deps = (): ObservedReleaseDeps => ({ getAuditLog: async () => audit.log, getObserved: (name) => configs.find((c) => c.name === name) });

beforeAll(async () => {
  audit = await createAuditFixture();
  await admin.query(`CREATE SCHEMA "${shedSchema.schema}"`);
  await admin.query(`CREATE TABLE ${table} (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))`);
});
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((c) => c.end().catch(() => {})));
});
afterAll(async () => {
  await audit?.cleanup();
  await shedSchema.drop();
  await admin.end();
  await redisNs.drop();
  redis.disconnect();
});

async function entriesFor(resource: string) {
  const { items } = await listAuditEntries({ resource, limit: 100 }, audit.log);
  return items.reverse();
}

/** A ShedLock run as ShedLock writes it: this host, taken now, for 10 minutes. Returns what the console shows. */
async function takeShedLock(name: string, lockedBy: string): Promise<{ lockedBy: string; lockedAt: string }> {
  const { rows } = await admin.query<{ locked_at: string }>(
    `INSERT INTO ${table} (name, lock_until, locked_at, locked_by) VALUES ($1, timezone('utc', now()) + interval '10 minutes', timezone('utc', now()), $2)
     ON CONFLICT (name) DO UPDATE SET lock_until = EXCLUDED.lock_until, locked_at = EXCLUDED.locked_at, locked_by = EXCLUDED.locked_by
     RETURNING to_char(locked_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS locked_at`,
    [name, lockedBy],
  );
  return { lockedBy, lockedAt: rows[0]!.locked_at };
}

async function shedLockHeld(name: string): Promise<boolean> {
  const { rows } = await admin.query<{ held: boolean }>(`SELECT lock_until > timezone('utc', now()) AS held FROM ${table} WHERE name = $1`, [name]);
  return rows[0]?.held === true;
}

async function holdAdvisory(key: string): Promise<{ client: pg.Client; pid: number; backendStart: string }> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, application_name: "billing-worker" });
  client.on("error", () => {});
  await client.connect();
  sessions.push(client);
  await client.query("SELECT pg_advisory_lock($1::bigint)", [key]);
  const holder = (await readAdvisoryLocks(admin)).locks.find((l) => l.key.form === "bigint" && l.key.key === key)!.holders[0]!;
  return { client, pid: holder.pid, backendStart: holder.backendStart!.toISOString() };
}

const advisoryKey = () => (configs[2] as Extract<TObservedConfig, { kind: "pg-advisory" }>).names![0]!.key!;

describe("releaseObservedAudited: ShedLock", () => {
  it("releases the row while it still shows the holder shown, with requested then released in the audit log", async () => {
    const shown = await takeShedLock("invoiceJob", "worker-1.example");
    const result = await releaseObservedAudited(
      { actor: ALICE, scope: SCOPE_ALL, request: REQUEST, form: { store: "shedlock", resource: "invoiceJob", shown: { kind: "shedlock", ...shown }, reason: REASON } },
      deps(),
    );
    expect(result).toMatchObject({ outcome: "released", terminated: false });
    expect(await shedLockHeld("invoiceJob")).toBe(false);
    const entries = await entriesFor("invoiceJob");
    expect(entries.map((e) => e.outcome)).toEqual(["requested", "released"]);
    expect(entries[1]).toMatchObject({ action: "force_release", store: "shedlock", actorSub: ALICE.id, reason: REASON, owner: `worker-1.example · locked at ${shown.lockedAt}`, resolvesId: entries[0]!.id });
    expect(result.outcome === "released" && result.auditId).toBe(entries[1]!.id);
  });

  it("refuses when another run took the row after the dialog opened, audited as lease_changed, and the new run keeps it", async () => {
    const shown = await takeShedLock("reportJob", "worker-1.example");
    await admin.query(`UPDATE ${table} SET locked_at = locked_at + interval '1 second', locked_by = 'worker-2.example' WHERE name = 'reportJob'`);
    const result = await releaseObservedAudited(
      { actor: ALICE, scope: SCOPE_ALL, request: REQUEST, form: { store: "shedlock", resource: "reportJob", shown: { kind: "shedlock", ...shown }, reason: REASON } },
      deps(),
    );
    expect(result).toMatchObject({ outcome: "lease_changed" });
    expect(await shedLockHeld("reportJob")).toBe(true);
    expect((await entriesFor("reportJob")).map((e) => e.outcome)).toEqual(["requested", "lease_changed"]);
  });

  it("refuses a store observed read-only (no releaseUrl), audited, and leaves the row held", async () => {
    const shown = await takeShedLock("exportJob", "worker-1.example");
    const result = await releaseObservedAudited(
      { actor: ALICE, scope: SCOPE_ALL, request: REQUEST, form: { store: "shedlock-readonly", resource: "exportJob", shown: { kind: "shedlock", ...shown }, reason: REASON } },
      deps(),
    );
    expect(result).toMatchObject({ outcome: "refused", code: "not_releasable" });
    expect(await shedLockHeld("exportJob")).toBe(true);
    const entries = await entriesFor("exportJob");
    expect(entries.map((e) => e.outcome)).toEqual(["invalid_input"]);
    expect(entries[0]!.detail).toContain("no releaseUrl");
  });
});

describe("releaseObservedAudited: Redis keys", () => {
  const key = `${redisNs.namespace}:locks:billing-close`;

  it("deletes the key while it still holds the value shown, audited", async () => {
    await redis.set(key, "redlock-value-1", "PX", 60_000);
    const result = await releaseObservedAudited(
      { actor: ALICE, scope: SCOPE_ALL, request: REQUEST, form: { store: "redis-locks", resource: key, shown: { kind: "redis-keys", type: "string", value: "redlock-value-1" }, reason: REASON } },
      deps(),
    );
    expect(result).toMatchObject({ outcome: "released" });
    expect(await redis.exists(key)).toBe(0);
    expect((await entriesFor(key)).map((e) => e.outcome)).toEqual(["requested", "released"]);
  });

  it("refuses when another holder took the key after the dialog opened, audited, and the new holder keeps it", async () => {
    await redis.set(key, "redlock-value-2", "PX", 60_000);
    const result = await releaseObservedAudited(
      { actor: ALICE, scope: SCOPE_ALL, request: REQUEST, form: { store: "redis-locks", resource: key, shown: { kind: "redis-keys", type: "string", value: "redlock-value-1" }, reason: REASON } },
      deps(),
    );
    expect(result).toMatchObject({ outcome: "lease_changed" });
    expect(await redis.get(key)).toBe("redlock-value-2");
    expect((await entriesFor(key)).map((e) => e.outcome)).toEqual(["requested", "released", "requested", "lease_changed"]);
  });

  it("removes one semaphore holder only", async () => {
    const sem = `${redisNs.namespace}:locks:exports`;
    await redis.zadd(sem, String(Date.now()), "holder-a", String(Date.now()), "holder-b");
    const result = await releaseObservedAudited(
      { actor: ALICE, scope: SCOPE_ALL, request: REQUEST, form: { store: "redis-locks", resource: sem, shown: { kind: "redis-keys", type: "zset", value: "holder-a" }, reason: REASON } },
      deps(),
    );
    expect(result).toMatchObject({ outcome: "released" });
    expect(await redis.zrange(sem, "0", "-1")).toEqual(["holder-b"]);
  });

  it("never touches a key outside the store's patterns: refused as failed, audited", async () => {
    const other = `${redisNs.namespace}:cache:session`;
    await redis.set(other, "v", "PX", 60_000);
    const result = await releaseObservedAudited(
      { actor: ALICE, scope: SCOPE_ALL, request: REQUEST, form: { store: "redis-locks", resource: other, shown: { kind: "redis-keys", type: "string", value: "v" }, reason: REASON } },
      deps(),
    );
    expect(result).toMatchObject({ outcome: "failed" });
    expect(await redis.get(other)).toBe("v");
    expect((await entriesFor(other)).map((e) => e.outcome)).toEqual(["requested", "failed"]);
  });
});

describe("releaseObservedAudited: Postgres advisory locks", () => {
  it("terminates the holding backend while that same backend holds that same key, audited", async () => {
    const holder = await holdAdvisory(advisoryKey());
    const result = await releaseObservedAudited(
      { actor: ALICE, scope: SCOPE_ALL, request: REQUEST, form: { store: "pg-advisory", resource: "tenant_1:billing-close", shown: { kind: "pg-advisory", pid: holder.pid, backendStart: holder.backendStart }, reason: REASON } },
      deps(),
    );
    expect(result).toMatchObject({ outcome: "released", terminated: true });
    await expect(holder.client.query("SELECT 1")).rejects.toThrow();
    const entries = await entriesFor("tenant_1:billing-close");
    expect(entries.slice(-2).map((e) => e.outcome)).toEqual(["requested", "released"]);
    expect(entries.at(-1)!.detail).toContain(`terminated backend pid ${holder.pid}`);
  });

  it("refuses when another session took the key after the dialog opened, audited, and that session lives", async () => {
    const first = await holdAdvisory(advisoryKey());
    await first.client.query("SELECT pg_advisory_unlock($1::bigint)", [advisoryKey()]);
    const second = await holdAdvisory(advisoryKey());
    const result = await releaseObservedAudited(
      { actor: ALICE, scope: SCOPE_ALL, request: REQUEST, form: { store: "pg-advisory", resource: "tenant_1:billing-close", shown: { kind: "pg-advisory", pid: first.pid, backendStart: first.backendStart }, reason: REASON } },
      deps(),
    );
    expect(result).toMatchObject({ outcome: "lease_changed" });
    expect((await second.client.query("SELECT 1 AS ok")).rows[0].ok).toBe(1);
    expect((await first.client.query("SELECT 1 AS ok")).rows[0].ok).toBe(1);
    expect((await entriesFor("tenant_1:billing-close")).slice(-2).map((e) => e.outcome)).toEqual(["requested", "lease_changed"]);
  });
});

describe("releaseObservedAudited: an advisory key the naming map does not name", () => {
  it("reads the key from advisory:<key> and terminates its holder", async () => {
    const key = String(randomInt(1, 2 ** 47));
    const holder = await holdAdvisory(key);
    const result = await releaseObservedAudited(
      { actor: ALICE, scope: SCOPE_ALL, request: REQUEST, form: { store: "pg-advisory", resource: `advisory:${key}`, shown: { kind: "pg-advisory", pid: holder.pid, backendStart: holder.backendStart }, reason: REASON } },
      deps(),
    );
    expect(result).toMatchObject({ outcome: "released", terminated: true });
    await expect(holder.client.query("SELECT 1")).rejects.toThrow();
  });

  it("refuses a name that is no advisory key: failed, audited, nothing terminated", async () => {
    const result = await releaseObservedAudited(
      { actor: ALICE, scope: SCOPE_ALL, request: REQUEST, form: { store: "pg-advisory", resource: "not-a-key", shown: { kind: "pg-advisory", pid: 1, backendStart: new Date().toISOString() }, reason: REASON } },
      deps(),
    );
    expect(result).toMatchObject({ outcome: "failed" });
    expect((await entriesFor("not-a-key")).map((e) => e.outcome)).toEqual(["requested", "failed"]);
  });
});

describe("releaseObservedAudited: who may", () => {
  it("refuses a viewer (audited as denied_role) and changes nothing", async () => {
    const shown = await takeShedLock("viewerJob", "worker-1.example");
    const result = await releaseObservedAudited(
      { actor: VIEWER, scope: SCOPE_ALL, request: REQUEST, form: { store: "shedlock", resource: "viewerJob", shown: { kind: "shedlock", ...shown }, reason: REASON } },
      deps(),
    );
    expect(result).toMatchObject({ outcome: "refused", code: "forbidden" });
    expect(await shedLockHeld("viewerJob")).toBe(true);
    const entries = await entriesFor("viewerJob");
    expect(entries.map((e) => e.outcome)).toEqual(["denied_role"]);
    expect(entries[0]).toMatchObject({ actorSub: VIEWER.id, detail: "observed: needs observed:release" });
  });

  it("refuses a viewer terminating an advisory holder, and the session lives", async () => {
    const holder = await holdAdvisory(advisoryKey());
    const result = await releaseObservedAudited(
      { actor: VIEWER, scope: SCOPE_ALL, request: REQUEST, form: { store: "pg-advisory", resource: "tenant_1:billing-close", shown: { kind: "pg-advisory", pid: holder.pid, backendStart: holder.backendStart }, reason: REASON } },
      deps(),
    );
    expect(result).toMatchObject({ outcome: "refused", code: "forbidden" });
    expect((await holder.client.query("SELECT 1 AS ok")).rows[0].ok).toBe(1);
    expect((await entriesFor("tenant_1:billing-close")).at(-1)).toMatchObject({ outcome: "denied_role", detail: "observed: needs observed:terminate" });
  });

  it("refuses an operator scoped to tenant_2: outside their scope (audited), inside it releases", async () => {
    const outside = await takeShedLock("tenant_1:nightly", "worker-1.example");
    const inside = await takeShedLock("tenant_2:nightly", "worker-1.example");
    const scope = scopeOf(["tenant_2:"]);
    const refused = await releaseObservedAudited(
      { actor: ALICE, scope, request: REQUEST, form: { store: "shedlock", resource: "tenant_1:nightly", shown: { kind: "shedlock", ...outside }, reason: REASON } },
      deps(),
    );
    expect(refused).toMatchObject({ outcome: "refused", code: "forbidden" });
    expect(await shedLockHeld("tenant_1:nightly")).toBe(true);
    expect((await entriesFor("tenant_1:nightly")).map((e) => [e.outcome, e.detail])).toEqual([["denied_role", "observed: outside the operator scope (tenant_2:*)"]]);
    const released = await releaseObservedAudited(
      { actor: ALICE, scope, request: REQUEST, form: { store: "shedlock", resource: "tenant_2:nightly", shown: { kind: "shedlock", ...inside }, reason: REASON } },
      deps(),
    );
    expect(released).toMatchObject({ outcome: "released" });
  });

  it("refuses bad input with field messages, audited, nothing changed", async () => {
    const result = await releaseObservedAudited(
      { actor: ALICE, scope: SCOPE_ALL, request: REQUEST, form: { store: "shedlock", resource: "badJob", shown: { kind: "shedlock", lockedBy: "w", lockedAt: "yesterday" }, reason: "short" } },
      deps(),
    );
    expect(result).toMatchObject({ outcome: "refused", code: "invalid_input" });
    expect(result.outcome === "refused" && result.issues?.map((i) => i.field)).toEqual(["shown.lockedAt", "reason"]);
    expect((await entriesFor("badJob")).map((e) => e.outcome)).toEqual(["invalid_input"]);
  });

  it("fails closed when the audit log cannot be written: nothing released", async () => {
    const shown = await takeShedLock("auditDownJob", "worker-1.example");
    const result = await releaseObservedAudited(
      { actor: ALICE, scope: SCOPE_ALL, request: REQUEST, form: { store: "shedlock", resource: "auditDownJob", shown: { kind: "shedlock", ...shown }, reason: REASON } },
      { getAuditLog: async () => Promise.reject(new Error("audit database down")), getObserved: deps().getObserved },
    );
    expect(result).toMatchObject({ outcome: "audit_unavailable" });
    expect(await shedLockHeld("auditDownJob")).toBe(true);
  });

  it("leaves an audit chain that verifies", async () => {
    expect(await verifyAuditChain({ pool: audit.admin, schema: audit.schema, key: audit.key })).toMatchObject({ ok: true });
  });
});
