import type pg from "pg";
import { onTestFinished } from "vitest";

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
