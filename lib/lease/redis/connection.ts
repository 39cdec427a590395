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

/**
 * A command was sent, then the connection closed before its reply came: it may or may not have
 * run. The store's own client rejects such commands with this at once (see
 * rejectUnansweredOnClose) rather than sending them again on the next connection.
 */
export class ReplyLostError extends Error {
  constructor() {
    super("connection lost before the reply (the command may or may not have run)");
    this.name = "ReplyLostError";
  }
}

interface CommandQueueAccess {
  flushQueue?: (error: Error, options: { offlineQueue: boolean; commandQueue: boolean }) => void;
}

/**
 * With autoResendUnfulfilledCommands off, ioredis 6 forgets the commands that were sent but
 * unanswered when a connection closes without settling them: each would wait for
 * commandTimeout. On close (emitted before the reconnect starts) they are rejected here with
 * ReplyLostError; commands not yet sent stay queued for the next connection.
 */
export function rejectUnansweredOnClose(client: Redis): void {
  const queue = client as unknown as CommandQueueAccess;
  if (typeof queue.flushQueue !== "function") throw new Error("this ioredis has no flushQueue(): unanswered commands would hang after a reconnect");
  client.on("close", () => queue.flushQueue!(new ReplyLostError(), { offlineQueue: false, commandQueue: true }));
}

function isScriptMissing(error: unknown): boolean {
  return error instanceof Error && /NOSCRIPT/.test(error.message);
}

/**
 * Runs one script by SHA. When the server does not have it (first use, a restart,
 * SCRIPT FLUSH) it answers NOSCRIPT *without running anything*, so sending the
 * full text with EVAL (which also caches it for the next EVALSHA) is safe.
 * An idempotent script whose reply was lost is sent once more (on the next
 * connection): it answers what its first run did, or runs now if that never happened.
 */
export async function callScript(
  ctx: RedisContext,
  script: LeaseScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  const run = async () => {
    try {
      return await ctx.client.evalsha(script.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!isScriptMissing(error)) throw error;
      return await ctx.client.eval(script.lua, keys.length, ...keys, ...args);
    }
  };
  try {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof ReplyLostError && script.isIdempotent)) throw error;
      return await run();
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
