/**
 * An audit log of its own per test: a fresh schema (dropped afterwards) in the
 * shared test database, migrated, with force_release() registered for the lease
 * schemas given.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { AuditLog } from "@/lib/audit/log";
import { listAuditEntries } from "@/lib/audit/read";
import type { AuditDeps, AuditTarget } from "@/lib/audit/deps";
import { freshPgSchema, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import type { LeaseStore, StoreKind } from "@leasewatch/lease";
import { createStoreFixture, type StoreFixture } from "./stores";

export const TEST_AUDIT_KEY = `test-audit-key-${randomBytes(24).toString("hex")}`;

export interface AuditFixture {
  schema: string;
  url: string;
  key: string;
  log: AuditLog;
  /** A superuser pool for the test's own checks and tampering. */
  admin: pg.Pool;
  cleanup(): Promise<void>;
}

export async function createAuditFixture(leaseSchemas: readonly string[] = [], url: string = TEST_DATABASE_URL): Promise<AuditFixture> {
  const fresh = freshPgSchema(url);
  const log = new AuditLog({ connectionString: url, schema: fresh.schema, key: TEST_AUDIT_KEY });
  await log.migrate(leaseSchemas);
  const admin = new pg.Pool({ connectionString: url, max: 2 });
  admin.on("error", () => {});
  return {
    schema: fresh.schema,
    url,
    key: TEST_AUDIT_KEY,
    log,
    admin,
    async cleanup() {
      await log.close();
      await admin.end();
      await fresh.drop();
    },
  };
}

/** Deps for forceReleaseAudited over the test's own audit log and stores. */
export function auditDeps(log: AuditLog, targets: Record<string, AuditTarget | LeaseStore>, pendingGraceMs?: number): AuditDeps {
  return {
    getAuditLog: async () => log,
    getTarget: (name) => {
      const t = targets[name];
      if (!t) return undefined;
      return "store" in t ? t : { store: t };
    },
    ...(pendingGraceMs !== undefined ? { pendingGraceMs } : {}),
  };
}

/** A signed-in operator as the console names them: the IdP's `sub` with its issuer, and the verified email. */
export const ALICE = { id: "https://sso.example.test#alice", email: "alice@example.test", roles: ["operator"] };
export const REQUEST = { requestId: "req-1", ip: "203.0.113.7", userAgent: "vitest" };

/**
 * A store of `kind` and an audit log of its own. `registerSchema`: the log registers a
 * Postgres store's schema, so a release runs through its force_release() in one transaction.
 */
export async function createAuditedStore(kind: StoreKind, options: { registerSchema?: boolean } = {}): Promise<{ store: StoreFixture; audit: AuditFixture }> {
  const store = await createStoreFixture(kind);
  if (options.registerSchema && store.spec.kind !== "postgres") throw new Error("only a Postgres store has a schema to register");
  const audit = await createAuditFixture(options.registerSchema && store.spec.kind === "postgres" ? [store.spec.schema] : []);
  return { store, audit };
}

/** Drops the audit log, then the store (either is missing when its set-up failed). */
export async function cleanupAuditedStore(audit: AuditFixture | undefined, store: StoreFixture | undefined): Promise<void> {
  await audit?.cleanup();
  await store?.cleanup();
}

/** A Postgres store as the console configures it in the audit log's database, so releases go through force_release(). */
export function auditTargetInAuditDatabase(name: string, fixture: StoreFixture): AuditTarget {
  const schema = fixture.spec.kind === "postgres" ? fixture.spec.schema : undefined;
  return { store: fixture.store, config: { name, kind: "postgres", url: TEST_DATABASE_URL, schema } };
}

/**
 * An audit log created before the describe block's (or file's) tests and dropped after them.
 * The object is filled in when its tests start: read its fields inside them.
 */
export function setUpAuditLog(): AuditFixture {
  const audit = {} as AuditFixture;
  let created: AuditFixture | undefined;
  beforeAll(async () => {
    created = await createAuditFixture();
    Object.assign(audit, created);
  });
  afterAll(async () => {
    await created?.cleanup();
  });
  return audit;
}

/** createAuditedStore, before the describe block's tests, dropped after them; filled in when its tests start. */
export function setUpAuditedStore(kind: StoreKind, options: { registerSchema?: boolean } = {}): { store: StoreFixture; audit: AuditFixture } {
  const store = {} as StoreFixture;
  const audit = {} as AuditFixture;
  let created: { store: StoreFixture; audit: AuditFixture } | undefined;
  beforeAll(async () => {
    created = await createAuditedStore(kind, options);
    Object.assign(store, created.store);
    Object.assign(audit, created.audit);
  });
  afterAll(() => cleanupAuditedStore(created?.audit, created?.store));
  return { store, audit };
}

/** A lease on `resource` held by worker-1 for a minute: what a force-release test ends. */
export async function acquireHeldLease(store: LeaseStore, resource: string) {
  const r = await store.acquire({ resource, owner: "worker-1", task: "run-1", ttlMs: 60_000 });
  if (!r.acquired) throw new Error("test setup: acquire failed");
  return r.lease;
}

/** The log's entries on `resource` (a lease's resource or a token's name), oldest first. */
export async function auditEntriesFor(log: AuditLog, resource: string) {
  const { items } = await listAuditEntries({ resource, limit: 100 }, log);
  return items.reverse();
}
