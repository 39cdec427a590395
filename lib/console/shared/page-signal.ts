/**
 * Server-only: the AbortSignal a server-rendered page passes to its reads.
 *
 * A page gets no request object, so no request signal: Next.js 16 aborts an app-router render
 * on a closed response only for development HMR refreshes, and `headers()` / `connection()`
 * expose none. What a page does have is React's `cacheSignal()`, which aborts when the render
 * is over — finished, failed or aborted — so a read still running for a render that has
 * already failed elsewhere stops instead of running on. Its other bound is the one route
 * handlers have too: the read models run each store under withDeadline (fan-out.ts), which
 * aborts that store's read at STORE_TIMEOUT_MS, stopping the Postgres statement or the Redis
 * read between round trips.
 */
import { cacheSignal } from "react";

export function pageReadSignal(): AbortSignal | undefined {
  // Typed as an opaque CacheSignal; at run time it is the render's AbortSignal (or null outside a render).
  const signal = cacheSignal() as unknown as AbortSignal | null;
  return signal ?? undefined;
}
