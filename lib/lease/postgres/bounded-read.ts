import pg from "pg";
import { LeaseError, ReadAbortedError } from "../errors";

/** A read the console makes may run this long on the server before Postgres stops it. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 2_000;

export { ReadAbortedError };

/**
 * Cancels the statement a backend is running, from a connection of its own: the
 * pool may be saturated by exactly the slow reads being cancelled, and a backend
 * stuck in pg_sleep or a lock wait never notices its client going away.
 */
async function cancelBackend(pool: pg.Pool, pid: number): Promise<void> {
  const client = new pg.Client({ ...(pool.options as pg.ClientConfig), connectionTimeoutMillis: 2_000 });
  client.on("error", () => {}); // a failed cancel is reported by the read it was for
  try {
    await client.connect();
    await client.query("SELECT pg_cancel_backend($1)", [pid]);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Runs `work` in a READ ONLY transaction whose statements Postgres stops after
 * `statementTimeoutMs`. When `signal` aborts (the request went away, or the
 * console's per-store timeout fired) the running statement is cancelled on the
 * server and the call rejects with ReadAbortedError. The connection goes back to
 * the pool only after the cancel has been delivered, so a late cancel can never
 * hit the next borrower's query; a connection whose read was aborted is closed.
 */
export async function readBounded<T>(
  pool: pg.Pool,
  options: { statementTimeoutMs: number; signal?: AbortSignal | undefined; what: string },
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const { signal, what } = options;
  if (signal?.aborted) throw new ReadAbortedError(what);
  const client = await pool.connect();
  const onError = () => {}; // the failing query reports it; the event alone must not crash the process
  client.on("error", onError);
  let cancelling: Promise<void> | null = null;
  const pid = (client as unknown as { processID: number | null }).processID;
  const onAbort = () => {
    if (pid !== null) cancelling = cancelBackend(pool, pid).catch(() => {});
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  let isBroken = false;
  try {
    if (signal?.aborted) throw new ReadAbortedError(what);
    // One round trip for both. SET takes no bind parameters; the value is an integer we computed.
    const timeoutMs = Math.max(1, Math.round(options.statementTimeoutMs));
    await client.query(`BEGIN READ ONLY; SET LOCAL statement_timeout = ${timeoutMs}`);
    const result = await work(client);
    if (signal?.aborted) throw new ReadAbortedError(what);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {
      isBroken = true;
    });
    if (signal?.aborted) throw new ReadAbortedError(what);
    if ((error as { code?: string }).code === "57014") {
      throw new LeaseError(`${what}: stopped after ${options.statementTimeoutMs} ms (statement timeout); narrow the filter or the window`, "statement_timeout");
    }
    throw error;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    if (cancelling) await cancelling;
    client.off("error", onError);
    client.release(isBroken || signal?.aborted === true);
  }
}
