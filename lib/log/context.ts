/**
 * The id every log line of one request (or one background run) carries. An
 * AsyncLocalStorage, so code deep in lib/ logs with the id without being handed it.
 * One instance per process, shared by every bundle Next.js loads this module into.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";

export interface LogContext {
  /** The request's id: the API's Fastify reqId, or the console's (see ./request-id.ts). */
  reqId?: string;
  /** A background run's id: one sweep round, one audit housekeeping pass. */
  runId?: string;
}

const STORE_KEY = Symbol.for("leasewatch.log-context");
type GlobalWithContext = typeof globalThis & { [STORE_KEY]?: AsyncLocalStorage<LogContext> };

function storage(): AsyncLocalStorage<LogContext> {
  const g = globalThis as GlobalWithContext;
  g[STORE_KEY] ??= new AsyncLocalStorage<LogContext>();
  return g[STORE_KEY];
}

export function currentLogContext(): LogContext | undefined {
  return storage().getStore();
}

/** Runs `work` with `context` on every line it logs, including from the promises it starts. */
export function runWithLogContext<T>(context: LogContext, work: () => T): T {
  return storage().run(context, work);
}

/** Runs one background unit of work (a sweep round, a housekeeping pass) under a fresh runId. */
export function runInBackgroundRun<T>(work: () => T): T {
  return runWithLogContext({ runId: randomUUID() }, work);
}

/**
 * Sets the context for the rest of the current synchronous call and everything it
 * starts. For a hook that runs just before a request's handler (see ./request-id.ts),
 * where there is no callback to wrap; the next request on the same connection sets its own.
 */
export function enterLogContext(context: LogContext): void {
  storage().enterWith(context);
}
