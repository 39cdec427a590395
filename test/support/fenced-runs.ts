/**
 * For fault tests where worker processes write to a fenced downstream table: before
 * each test an isolated store of `kind` and a fresh fenced table (with its write
 * history) named `tableName`; after it every worker is stopped and both are dropped.
 */
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { StoreKind } from "@leasewatch/lease";
import { TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { createFencedDownstream, createStoreFixture, type FencedDownstream, type StoreFixture } from "./stores";
import { stopAllWorkers } from "./worker-process";

export interface FencedWorkerRun {
  /** A pool on the shared test database, where the fenced tables live. */
  pool: pg.Pool;
  fixture: StoreFixture;
  /** The fenced table, schema-qualified. */
  table: string;
}

/** Call inside a describe block; read the fields inside its tests (they change with every test). */
export function setUpFencedWorkerRuns(kind: StoreKind, tableName: string): FencedWorkerRun {
  const run = {} as FencedWorkerRun;
  let downstream: FencedDownstream | undefined;
  beforeAll(() => {
    run.pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
    run.pool.on("error", () => undefined);
  });
  afterAll(async () => {
    await stopAllWorkers();
    await run.pool.end();
  });
  beforeEach(async () => {
    run.fixture = await createStoreFixture(kind);
    downstream = await createFencedDownstream(run.pool, tableName);
    run.table = downstream.table;
  });
  afterEach(async () => {
    await stopAllWorkers();
    await run.fixture.cleanup();
    await downstream?.drop();
  });
  return run;
}
