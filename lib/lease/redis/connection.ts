import type { ChainableCommander, Redis } from "ioredis";
import { LeaseError } from "../errors";
import type { LeaseScript } from "./scripts";

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

function isScriptMissing(error: unknown): boolean {
  return error instanceof Error && /NOSCRIPT/.test(error.message);
}

/**
 * Runs one script by SHA. When the server does not have it (first use, a restart,
 * SCRIPT FLUSH) it answers NOSCRIPT *without running anything*, so sending the
 * full text with EVAL (which also caches it for the next EVALSHA) is safe.
 */
export async function callScript(
  ctx: RedisContext,
  script: LeaseScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    try {
      return await ctx.client.evalsha(script.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!isScriptMissing(error)) throw error;
      return await ctx.client.eval(script.lua, keys.length, ...keys, ...args);
    }
  } catch (error) {
    if (error instanceof LeaseError) throw error;
    throw toStoreError(ctx, script.operation, error);
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
