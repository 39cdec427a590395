import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPostgres, stopAllServers, type ThrowawayServer } from "@/test/support/servers";
import { LeaseError } from "../errors";
import { PostgresLeaseStore } from "./store";

/**
 * Settings of the server that would break what acquire promises, checked on a throwaway
 * PostgreSQL (never the shared 5432): a commit that may be lost in a crash, and a token
 * sequence that hands each session a range of its own.
 */

let server: ThrowawayServer;
let admin: pg.Pool;

beforeAll(async () => {
  server = await startPostgres();
  admin = new pg.Pool({ connectionString: server.url, max: 2 });
  admin.on("error", () => undefined);
}, 60_000);

afterAll(async () => {
  await admin?.end();
  await stopAllServers();
});

async function openStore(schema: string): Promise<PostgresLeaseStore> {
  const store = new PostgresLeaseStore({ name: "pg-checks", connectionString: server.url, schema });
  await store.migrate();
  return store;
}

async function acquireOutcome(store: PostgresLeaseStore, resource: string): Promise<unknown> {
  return store.acquire({ resource, owner: "a", task: "t", ttlMs: 60_000 }).then(
    (r) => r.acquired,
    (e: unknown) => e,
  );
}

function expectMisconfigured(outcome: unknown, text: RegExp): void {
  expect(outcome).toBeInstanceOf(LeaseError);
  expect((outcome as LeaseError).code).toBe("misconfigured");
  expect((outcome as LeaseError).message).toMatch(text);
}

describe("PostgresLeaseStore server checks", () => {
  it("refuses to grant while synchronous_commit is off, and grants once it is on", async () => {
    await admin.query("ALTER DATABASE postgres SET synchronous_commit = off");
    const store = await openStore("lw_sync_off");
    try {
      expectMisconfigured(await acquireOutcome(store, "job:1"), /synchronous_commit is off/);
      const { rows } = await admin.query("SELECT count(*)::int AS n FROM lw_sync_off.leases");
      expect(rows).toEqual([{ n: 0 }]);

      await admin.query("ALTER DATABASE postgres RESET synchronous_commit");
      // Sessions opened before the change keep it: a fresh store reads the new default.
      await store.close();
      const fixed = await openStore("lw_sync_off");
      try {
        expect(await acquireOutcome(fixed, "job:1")).toBe(true);
      } finally {
        await fixed.close();
      }
    } finally {
      await admin.query("ALTER DATABASE postgres RESET synchronous_commit");
      await store.close().catch(() => undefined);
    }
  });

  it("refuses to grant while the token sequence caches values per session, and grants once it does not", async () => {
    const store = await openStore("lw_seq_cache");
    try {
      expect(await acquireOutcome(store, "job:1")).toBe(true);
      await admin.query("ALTER SEQUENCE lw_seq_cache.lease_fencing_seq CACHE 20");
      const fresh = await openStore("lw_seq_cache");
      try {
        expectMisconfigured(await acquireOutcome(fresh, "job:2"), /lease_fencing_seq.*CACHE 20/);
        await admin.query("ALTER SEQUENCE lw_seq_cache.lease_fencing_seq CACHE 1");
        expect(await acquireOutcome(fresh, "job:2")).toBe(true);
      } finally {
        await fresh.close();
      }
    } finally {
      await store.close();
    }
  });
});
