import net from "node:net";
import type pg from "pg";
import { loadPg } from "./driver";
import { LeaseError, ReadAbortedError } from "../errors";

/** A read the console makes may run this long on the server before Postgres stops it. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 2_000;

export { ReadAbortedError };

/** PostgreSQL's CancelRequest code (protocol 1234.5678). */
const CANCEL_REQUEST_CODE = 80877102;
const CANCEL_TIMEOUT_MS = 2_000;

/**
 * Cancels the statement a backend is running with the protocol's CancelRequest, sent
 * on a connection of its own: the pool may be saturated by exactly the slow reads
 * being cancelled, and a backend stuck in pg_sleep or a lock wait never notices its
 * client going away. The request carries the session's secret key rather than a pid,
 * so it also reaches the right server session behind a pooler (PgBouncer forwards it;
 * the pid a pooler reports is not a server pid). Resolves once the server has read it
 * and hung up. The request is written without closing our side, as libpq does: PgBouncer
 * drops a cancel whose client half-closed before it was forwarded (1.18 can even exit on
 * it), so the server is the one to hang up.
 */
function cancelBackend(pool: pg.Pool, processID: number, secretKey: number): Promise<void> {
  const target = new (loadPg().Client)(pool.options as pg.ClientConfig) as unknown as { host: string; port: number };
  return new Promise<void>((resolve, reject) => {
    const socket = target.host.startsWith("/") ? net.connect(`${target.host}/.s.PGSQL.${target.port}`) : net.connect(target.port, target.host);
    socket.setTimeout(CANCEL_TIMEOUT_MS, () => socket.destroy(new Error("cancel request timed out")));
    socket.once("connect", () => {
      const message = Buffer.alloc(16);
      message.writeInt32BE(16, 0);
      message.writeInt32BE(CANCEL_REQUEST_CODE, 4);
      message.writeInt32BE(processID, 8);
      message.writeInt32BE(secretKey, 12);
      socket.write(message);
    });
    socket.once("error", reject);
    socket.once("close", () => resolve());
    socket.resume();
  });
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
  const { processID, secretKey } = client as unknown as { processID: number | null; secretKey: number | null };
  const onAbort = () => {
    // A failed cancel is reported by the read it was for (statement_timeout still ends it).
    if (processID !== null && secretKey !== null) cancelling = cancelBackend(pool, processID, secretKey).catch(() => {});
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
