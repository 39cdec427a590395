import type pg from "pg";
import { quoteSchema } from "./sql";
import { internalLockKey } from "./lock-keys";

/**
 * Runs `work` in one transaction on a pooled client: COMMIT when it returns,
 * ROLLBACK when it throws (the original error is rethrown).
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const onError = () => {}; // the failing query reports it; the event alone must not crash the process
  client.on("error", onError);
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.off("error", onError);
    client.release();
  }
}

/**
 * `CREATE SCHEMA IF NOT EXISTS`, safe when another transaction creates the same schema at the
 * same moment (Postgres fails one of two concurrent creates with a unique violation on
 * `pg_namespace`, IF NOT EXISTS or not). The console's sessions, audit log and API tokens each
 * migrate under a lock of their own but share one schema, so each takes this lock first; it is
 * held until the transaction ends, when the schema is committed.
 */
export async function createSchemaInTransaction(client: pg.ClientBase, schema: string): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock(hashtext($1::text))", [internalLockKey("create-schema", schema)]);
  await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteSchema(schema)}`);
}
