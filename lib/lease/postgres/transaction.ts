import type pg from "pg";

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
