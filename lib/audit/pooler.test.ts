import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forceReleaseAudited } from "@/lib/audit/force-release";
import { parseAuditLocation } from "@/lib/audit/config";
import { AuditLog } from "@/lib/audit/log";
import { resolveConsoleDbConfig } from "@/lib/auth/session-store";
import { listAuditEntries } from "@/lib/audit/read";
import { verifyAuditChain } from "@/lib/audit/verify";
import type { PostgresLeaseStore } from "@leasewatch/lease";
import { freshPgSchema, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { ALICE, REQUEST, TEST_AUDIT_KEY, auditDeps } from "@/test/support/audit";
import { startPgBouncer, stopAllServers, type ThrowawayPooler } from "@/test/support/servers";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";

/**
 * The console's own tables (audit log) and a store, both reached through PgBouncer in
 * transaction mode, each with `pooler: "transaction"`: the store sends no named statements,
 * the audit log's pool no statement_timeout startup parameter (which PgBouncer refuses).
 */
describe("an audited force-release through a transaction pooler", () => {
  let pooler: ThrowawayPooler;
  let audit: AuditLog;
  let fixture: StoreFixture<"postgres"> | undefined;
  let store: PostgresLeaseStore;
  let storeSchema: string;
  const auditSchema = freshPgSchema();
  beforeAll(async () => {
    pooler = await startPgBouncer(TEST_DATABASE_URL, { poolSize: 2 });
    fixture = await createStoreFixture("postgres", { url: pooler.url, name: "pg-pooled", options: { pooler: "transaction" } });
    store = fixture.store;
    storeSchema = fixture.spec.schema;
    audit = new AuditLog({ connectionString: pooler.url, schema: auditSchema.schema, key: TEST_AUDIT_KEY, pooler: "transaction" });
    await audit.migrate([storeSchema]);
  });
  afterAll(async () => {
    await audit?.close();
    await auditSchema.drop();
    await fixture?.cleanup();
    await stopAllServers();
  });

  it("without the option the audit log's pool is refused by PgBouncer", async () => {
    const direct = new AuditLog({ connectionString: pooler.url, schema: auditSchema.schema, key: TEST_AUDIT_KEY });
    try {
      await expect(direct.migrate([])).rejects.toThrow(/unsupported startup parameter: statement_timeout/);
    } finally {
      await direct.close();
    }
  });

  it("ends the lease, writes requested and released, and the chain verifies", async () => {
    const target = { store, config: { name: "pg-pooled", kind: "postgres" as const, url: pooler.url, schema: storeSchema, pooler: "transaction" as const } };
    for (const n of [1, 2, 3]) {
      const granted = await store.acquire({ resource: `pooled:${n}`, owner: "worker-1", task: "run-1", ttlMs: 60_000 });
      if (!granted.acquired) throw new Error("test setup: acquire failed");
      const result = await forceReleaseAudited(
        { actor: ALICE, store: "pg-pooled", resource: granted.lease.resource, leaseId: granted.lease.leaseId, reason: "holder pod is gone", request: REQUEST },
        auditDeps(audit, { "pg-pooled": target }),
      );
      expect(result).toMatchObject({ outcome: "released" });
      expect(await store.get(granted.lease.resource)).toBeNull();
    }
    const { items } = await listAuditEntries({ prefix: "pooled:", limit: 100 }, audit);
    expect(items.map((e) => e.outcome).sort()).toEqual(["released", "released", "released", "requested", "requested", "requested"]);
    expect(await verifyAuditChain({ pool: audit.pool, schema: auditSchema.schema, key: TEST_AUDIT_KEY })).toMatchObject({ ok: true });
  });
});

describe("where the console's tables are reached through a pooler", () => {
  const pooledStore = JSON.stringify([{ name: "pg-main", kind: "postgres", url: "postgres://app@pgbouncer:6432/app", pooler: "transaction" }]);

  it("follows the first Postgres store, pooler included, when LEASEWATCH_AUDIT_URL is unset", () => {
    expect(resolveConsoleDbConfig({ LEASEWATCH_STORES: pooledStore })).toMatchObject({ url: "postgres://app@pgbouncer:6432/app", pooler: "transaction" });
    expect(parseAuditLocation({ LEASEWATCH_STORES: pooledStore })).toMatchObject({ url: "postgres://app@pgbouncer:6432/app", pooler: "transaction" });
  });

  it("takes LEASEWATCH_AUDIT_POOLER with LEASEWATCH_AUDIT_URL, and refuses a value it does not know", () => {
    const env = { LEASEWATCH_STORES: pooledStore, LEASEWATCH_AUDIT_URL: "postgres://console@db:5432/console" };
    expect(resolveConsoleDbConfig(env)).not.toHaveProperty("pooler");
    expect(parseAuditLocation(env)).not.toHaveProperty("pooler");
    expect(resolveConsoleDbConfig({ ...env, LEASEWATCH_AUDIT_POOLER: "transaction" })).toMatchObject({ pooler: "transaction" });
    expect(parseAuditLocation({ ...env, LEASEWATCH_AUDIT_POOLER: "transaction" })).toMatchObject({ pooler: "transaction" });
    expect(() => resolveConsoleDbConfig({ ...env, LEASEWATCH_AUDIT_POOLER: "session" })).toThrow(/LEASEWATCH_AUDIT_POOLER must be "transaction"/);
    expect(() => parseAuditLocation({ ...env, LEASEWATCH_AUDIT_POOLER: "session" })).toThrow(/LEASEWATCH_AUDIT_POOLER must be "transaction"/);
  });
});
