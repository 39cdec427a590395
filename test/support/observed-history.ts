/**
 * An observed-lock history of its own for a test file: a fresh schema on the test database,
 * migrated and filled with `samples` before the tests, dropped after them, and the
 * LEASEWATCH_OBSERVED environment naming the observed stores.
 */
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { freshPgSchema, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { migrateObservedHistory, recordSample } from "@/lib/observed/observer";

type Sample = Parameters<typeof recordSample>[2];

/**
 * `samples` is called in beforeAll (so times can count from then); each sample is a complete one
 * from an observer holding fencing token 1 unless it says otherwise.
 */
export function setUpObservedHistory(options: { stores: unknown[]; intervalMs: number; samples: () => Array<Omit<Sample, "fencingToken" | "complete"> & Partial<Sample>> }) {
  const history = freshPgSchema();
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
  pool.on("error", () => {});
  const env = {
    LEASEWATCH_OBSERVED: JSON.stringify(options.stores),
    LEASEWATCH_OBSERVE_INTERVAL_MS: String(options.intervalMs),
  } as unknown as NodeJS.ProcessEnv;

  beforeAll(async () => {
    await migrateObservedHistory(pool, history.schema);
    for (const sample of options.samples()) await recordSample(pool, history.schema, { fencingToken: "1", complete: true, ...sample });
  });

  afterAll(async () => {
    await history.drop();
    await pool.end();
  });

  return { pool, schema: history.schema, env };
}
