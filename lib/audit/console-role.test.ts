import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleRoleSql } from "@/lib/audit/console-role";
import { forceReleaseAudited } from "@/lib/audit/force-release";
import { AuditLog } from "@/lib/audit/log";
import { listAuditEntries } from "@/lib/audit/read";
import { getLeaseDetailFromRoute } from "@/lib/console/leases/get-lease-detail";
import { getOverviewFromSearch } from "@/lib/console/overview/get-overview";
import { listEventsFromSearch } from "@/lib/console/events/list-events";
import { listLeasesFromSearch } from "@/lib/console/leases/list-leases";
import { PostgresLeaseStore } from "@leasewatch/lease";
import { TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { ALICE, REQUEST, auditDeps, createAuditFixture, type AuditFixture } from "@/test/support/audit";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { TokenStore } from "@/lib/api/tokens";
import { createTokenAudited, revokeTokenAudited } from "@/lib/audit/api-tokens";

const REASON = "holder is gone, clearing the stuck lease";

it("ops/console-role.sql and the configuration docs give the generated SQL with the default names", () => {
  const file = readFileSync(path.resolve(__dirname, "../../ops/console-role.sql"), "utf8");
  expect(file).toBe(consoleRoleSql());
  const docs = readFileSync(path.resolve(__dirname, "../../docs/configuration.md"), "utf8");
  expect(docs).toContain(consoleRoleSql().trimEnd());
});

describe("the console on its least-privilege role", () => {
  const role = `lw_test_role_${randomBytes(6).toString("hex")}`;
  const password = randomBytes(12).toString("hex");
  let fixture: StoreFixture;
  let audit: AuditFixture;
  let leaseSchema: string;
  let roleUrl: string;
  let store: PostgresLeaseStore;
  let log: AuditLog;
  let direct: pg.Pool;

  beforeAll(async () => {
    fixture = await createStoreFixture("postgres");
    if (fixture.spec.kind !== "postgres") throw new Error("unreachable");
    leaseSchema = fixture.spec.schema;
    audit = await createAuditFixture([leaseSchema]);
    // Stand-ins for the sign-in sessions' tables (their own migration creates the real ones).
    await audit.admin.query(`CREATE TABLE "${audit.schema}".console_sessions (id uuid PRIMARY KEY, revoked_at timestamptz)`);
    await audit.admin.query(`CREATE TABLE "${audit.schema}".console_sessions_migrations (version int PRIMARY KEY)`);
    // The lock API's tokens table, created by its owner (as `npm run api` or `api:token` would).
    const owner = new TokenStore({ pool: audit.admin, schema: audit.schema });
    await owner.migrate();
    await audit.admin.query(consoleRoleSql({ role, password, leaseSchemas: [leaseSchema], auditSchema: audit.schema }));
    const url = new URL(TEST_DATABASE_URL);
    url.username = role;
    url.password = password;
    roleUrl = url.toString();
    store = new PostgresLeaseStore({ name: "pg-main", connectionString: roleUrl, schema: leaseSchema });
    log = new AuditLog({ connectionString: roleUrl, schema: audit.schema, key: audit.key });
    direct = new pg.Pool({ connectionString: roleUrl, max: 1 });
    direct.on("error", () => {});
  });
  afterAll(async () => {
    await store?.close();
    await log?.close();
    await direct?.end();
    await audit?.admin.query(`DROP OWNED BY "${role}"`);
    await audit?.admin.query(`DROP ROLE IF EXISTS "${role}"`);
    await audit?.cleanup();
    await fixture?.cleanup();
  });

  it("reads every view and force-releases, with both audit entries", async () => {
    const who = await direct.query("SELECT current_user AS u, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS su");
    expect(who.rows[0]).toEqual({ u: role, su: false });

    // Workers (the fixture's own role) hold leases; the console only reads them.
    const held = await fixture.store.acquire({ resource: "tenant_1:billing:stuck", owner: "worker-7", task: "run-1", ttlMs: 60_000 });
    if (!held.acquired) throw new Error("setup");
    const entries = [{ config: { name: "pg-main", kind: "postgres" as const, url: roleUrl, schema: leaseSchema }, store }];
    const leases = await listLeasesFromSearch({ prefix: "tenant_1:" }, { entries });
    expect(leases.ok && leases.view.items.map((l) => l.resource)).toEqual(["tenant_1:billing:stuck"]);
    const detail = await getLeaseDetailFromRoute({ store: "pg-main", resource: ["tenant_1:billing:stuck"] }, { entries });
    expect(detail.ok && detail.view.ok).toBe(true);
    expect((await listEventsFromSearch({}, { entries })).ok).toBe(true);
    const overview = await getOverviewFromSearch({ window: "1h" }, { entries });
    expect(overview.ok && overview.view.stores.every((s) => s.ok)).toBe(true);

    const result = await forceReleaseAudited(
      { actor: ALICE, store: "pg-main", resource: held.lease.resource, leaseId: held.lease.leaseId, reason: REASON, request: REQUEST },
      auditDeps(log, { "pg-main": entries[0]! }),
    );
    expect(result.outcome).toBe("released");
    expect(await fixture.store.get(held.lease.resource)).toBeNull();
    const { items } = await listAuditEntries({ resource: held.lease.resource, limit: 10 }, log);
    expect(items.map((e) => e.outcome)).toEqual(["released", "requested"]);
  });

  it("is refused a direct write to the lease tables", async () => {
    const held = await fixture.store.acquire({ resource: "tenant_1:billing:direct", owner: "worker-7", task: "run-2", ttlMs: 60_000 });
    if (!held.acquired) throw new Error("setup");
    const t = `"${leaseSchema}"`;
    await expect(direct.query(`DELETE FROM ${t}.leases`)).rejects.toThrow(/permission denied/);
    await expect(direct.query(`UPDATE ${t}.leases SET expires_at = now()`)).rejects.toThrow(/permission denied/);
    await expect(direct.query(`INSERT INTO ${t}.lease_events (kind, resource) VALUES ('released', 'x')`)).rejects.toThrow(/permission denied/);
    // Nor can it use the library's own force-release statement directly.
    await expect(store.forceRelease({ resource: held.lease.resource, leaseId: held.lease.leaseId, actor: "mallory", reason: "no audit" })).rejects.toThrow(/permission denied/);
    expect((await fixture.store.get(held.lease.resource))?.leaseId).toBe(held.lease.leaseId);
  });

  it("is refused UPDATE, DELETE and TRUNCATE on the audit log", async () => {
    const a = `"${audit.schema}".audit_log`;
    await expect(direct.query(`UPDATE ${a} SET reason = 'rewritten'`)).rejects.toThrow(/permission denied/);
    await expect(direct.query(`DELETE FROM ${a}`)).rejects.toThrow(/permission denied/);
    await expect(direct.query(`TRUNCATE ${a}`)).rejects.toThrow(/permission denied/);
    const { rows } = await audit.admin.query(`SELECT count(*)::int AS n FROM ${a}`);
    expect(rows[0].n).toBeGreaterThanOrEqual(2);
  });

  it("may keep sign-in sessions: read, create, revoke, prune", async () => {
    const t = `"${audit.schema}".console_sessions`;
    await direct.query(`INSERT INTO ${t} (id) VALUES ('00000000-0000-4000-8000-000000000001')`);
    await direct.query(`UPDATE ${t} SET revoked_at = now()`);
    expect((await direct.query(`SELECT count(*)::int AS n FROM ${t} WHERE revoked_at IS NOT NULL`)).rows[0].n).toBe(1);
    await direct.query(`DELETE FROM ${t}`);
    await direct.query(`SELECT max(version) FROM "${audit.schema}".console_sessions_migrations`);
  });

  it("creates and revokes API tokens with their audit entries, and may not delete a token or change its hash", async () => {
    const deps = { getAuditLog: async () => log, tokenDb: { url: roleUrl, schema: audit.schema } };
    const token = { name: "role-billing", prefixes: ["tenant_1:"], stores: ["pg-main"], actions: ["acquire" as const], expiresAt: new Date(Date.now() + 86_400_000) };
    const created = await createTokenAudited({ actor: ALICE, request: REQUEST, token }, deps);
    if (created.outcome !== "created") throw new Error(`expected created, got ${created.outcome}`);
    const revoked = await revokeTokenAudited({ actor: ALICE, request: REQUEST, token: { id: created.record.id } }, deps);
    expect(revoked.outcome).toBe("revoked");
    const { items } = await listAuditEntries({ resource: "role-billing", limit: 10 }, log);
    expect(items.map((e) => [e.action, e.outcome])).toEqual([
      ["token_revoke", "revoked"],
      ["token_create", "created"],
    ]);
    const t = `"${audit.schema}".api_tokens`;
    await expect(direct.query(`DELETE FROM ${t}`)).rejects.toThrow(/permission denied/);
    await expect(direct.query(`UPDATE ${t} SET token_hash = 'x'::bytea, revoked_at = NULL`)).rejects.toThrow(/permission denied/);
    // UPDATE on revoked_at is granted, but revocation is final.
    await expect(direct.query(`UPDATE ${t} SET revoked_at = NULL WHERE name = 'role-billing'`)).rejects.toThrow(/can only be revoked, once/);
    expect((await direct.query(`SELECT revoked_at IS NOT NULL AS revoked FROM ${t} WHERE name = 'role-billing'`)).rows[0]).toEqual({ revoked: true });
  });

  it("cannot call force_release() without a requested entry of its own transaction", async () => {
    const held = await fixture.store.acquire({ resource: "tenant_1:billing:nofunc", owner: "worker-7", task: "run-3", ttlMs: 60_000 });
    if (!held.acquired) throw new Error("setup");
    const fn = `"${audit.schema}".force_release`;
    // A matching requested entry committed earlier, in another transaction, does not count.
    const earlier = await log.append({
      requestId: "req-earlier", actorSub: ALICE.id, actorEmail: ALICE.email, actorRoles: ALICE.roles, action: "force_release", store: "pg-main",
      resource: held.lease.resource, leaseId: held.lease.leaseId, owner: held.lease.owner, task: held.lease.task, fencingToken: held.lease.fencingToken,
      reason: REASON, outcome: "requested", newHolder: null, ip: null, userAgent: null, resolvesId: null, detail: null,
    });
    await expect(direct.query(`SELECT * FROM ${fn}($1, $2, $3, $4, $5, $6)`, [earlier!.id, leaseSchema, held.lease.resource, held.lease.leaseId, ALICE.id, REASON])).rejects.toThrow(
      /needs a matching requested audit entry/,
    );
    await expect(direct.query(`SELECT * FROM ${fn}($1, $2, $3, $4, $5, $6)`, ["999999", leaseSchema, held.lease.resource, held.lease.leaseId, ALICE.id, REASON])).rejects.toThrow(
      /needs a matching requested audit entry/,
    );
    expect((await fixture.store.get(held.lease.resource))?.leaseId).toBe(held.lease.leaseId);
  });
});
