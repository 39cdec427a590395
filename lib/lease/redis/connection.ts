import type { ChainableCommander, Redis } from "ioredis";
import { LeaseError } from "../errors";
import type { LeaseLibrary, LeaseOperation } from "./scripts";

/** What the read and write paths need from the store: the client and how to name failures. */
export interface RedisContext {
  client: Redis;
  storeName: string;
  /** The last connection error seen, if the client is not connected now. */
  lastConnectionError?: () => string | undefined;
}

export class RedisStoreError extends LeaseError {
  constructor(storeName: string, operation: string, cause: unknown, connectionError?: string) {
    const raw = cause instanceof Error ? cause.message : String(cause);
    // ioredis' "max retries per request" means: queued while disconnected, and the reconnect failed.
    const message = /max retries per request/i.test(raw) ? "Redis is unreachable" : raw;
    const detail = connectionError && connectionError !== raw ? ` (${connectionError})` : "";
    super(`redis store "${storeName}": ${operation} failed: ${message}${detail}`, "store_unavailable");
    this.name = "RedisStoreError";
    this.cause = cause;
  }
}

function toStoreError(ctx: RedisContext, operation: string, cause: unknown): RedisStoreError {
  return new RedisStoreError(ctx.storeName, operation, cause, ctx.lastConnectionError?.());
}

function isFunctionMissing(error: unknown): boolean {
  return error instanceof Error && /function not found/i.test(error.message);
}

/**
 * Calls one function of the library; when the server does not have it (first
 * use, a restart, FUNCTION FLUSH) it answers "Function not found" *without
 * running anything*, so loading the library and calling again is safe. Calls in
 * flight at that moment may all load it: the library's name is versioned by its
 * code, so a second load of the same code is refused as "already exists", which
 * is as good as loaded. Libraries of older versions are left on the server (a
 * process still running one would only load it again); FUNCTION DELETE removes
 * them once no process uses them.
 */
export async function callFunction(
  ctx: RedisContext,
  library: LeaseLibrary,
  operation: LeaseOperation,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  const name = library.functions[operation];
  try {
    try {
      return await ctx.client.fcall(name, keys.length, ...keys, ...args);
    } catch (error) {
      if (!isFunctionMissing(error)) throw error;
      await loadLibrary(ctx, library);
      return await ctx.client.fcall(name, keys.length, ...keys, ...args);
    }
  } catch (error) {
    if (error instanceof LeaseError) throw error;
    throw toStoreError(ctx, operation, error);
  }
}

async function loadLibrary(ctx: RedisContext, library: LeaseLibrary): Promise<void> {
  try {
    await ctx.client.function("LOAD", library.code);
  } catch (error) {
    if (!(error instanceof Error && /already exists/i.test(error.message))) throw error;
  }
}

/**
 * Runs a pipeline (or a MULTI the caller built, when reads must be one snapshot) and returns
 * its replies in order, or throws the first error (wrapped).
 */
export async function execPipeline(
  ctx: RedisContext,
  operation: string,
  build: (pipeline: ChainableCommander) => void,
  pipeline: ChainableCommander = ctx.client.pipeline(),
): Promise<unknown[]> {
  build(pipeline);
  let replies: [Error | null, unknown][] | null;
  try {
    replies = await pipeline.exec();
  } catch (error) {
    throw toStoreError(ctx, operation, error);
  }
  if (!replies) throw toStoreError(ctx, operation, new Error("pipeline was discarded"));
  return replies.map(([error, reply]) => {
    if (error) throw toStoreError(ctx, operation, error);
    return reply;
  });
}

/** The store clock in ms (`TIME`), from a TIME reply. */
export function parseTimeReply(reply: unknown): number {
  const [seconds, micros] = reply as [string, string];
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
