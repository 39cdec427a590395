/** Vitest helpers for tests that look underneath a Postgres store (not for Playwright: they use vitest's hooks). */
import pg from "pg";
import { afterAll, onTestFinished } from "vitest";
import { TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { createStoreFixture, type StoreFixture, type StoreFixtureSetup } from "./stores";

/**
 * For one describe block: `fresh()` gives a migrated store on a schema of its own, `raw` a pool
 * that looks underneath them; after the block every store is closed, its schema dropped, and
 * the pool ended.
 */
export function postgresStoreFixtures(): {
  raw: pg.Pool;
  fresh: (setup?: StoreFixtureSetup<"postgres">) => Promise<StoreFixture<"postgres">>;
} {
  const raw = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 4 });
  raw.on("error", () => {});
  const opened: StoreFixture<"postgres">[] = [];
  afterAll(async () => {
    for (const f of opened) await f.cleanup();
    await raw.end();
  });
  return {
    raw,
    fresh: async (setup) => {
      const fixture = await createStoreFixture("postgres", setup);
      opened.push(fixture);
      return fixture;
    },
  };
}

/**
 * A test-only hook: an insert into `schema`.leases by `owner` stops inside its statement, after
 * its token and clock are taken and before the row is written, until the returned `open()` lets
 * it go (the hook waits on an advisory lock a session of `pool` holds until then).
 */
export async function stallInsertsBy(pool: pg.Pool, schema: string, owner: string, key: number): Promise<{ open: () => Promise<void> }> {
  await pool.query(`
    CREATE FUNCTION "${schema}".stall_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.owner = '${owner}' THEN PERFORM pg_advisory_xact_lock_shared(${key}); END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER stall_insert BEFORE INSERT ON "${schema}".leases FOR EACH ROW EXECUTE FUNCTION "${schema}".stall_insert();`);
  const gate = await pool.connect();
  await gate.query("SELECT pg_advisory_lock($1)", [key]);
  let isOpen = false;
  onTestFinished(async () => {
    if (!isOpen) await gate.query("SELECT pg_advisory_unlock($1)", [key]).catch(() => undefined);
    gate.release();
  });
  return {
    open: async () => {
      isOpen = true;
      await gate.query("SELECT pg_advisory_unlock($1)", [key]);
    },
  };
}
