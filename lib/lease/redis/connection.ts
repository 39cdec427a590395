import type { Cluster, ChainableCommander, Redis } from "ioredis";
import { LeaseError } from "../errors";
import { clusterSlotOf } from "./keys";
import { LEASE_LIBRARY, type LeaseScript } from "./scripts";

/** A standalone Redis or a Redis Cluster (ioredis `Cluster`): the store runs on either. */
export type RedisClient = Redis | Cluster;

export function isCluster(client: RedisClient): client is Cluster {
  // ioredis marks its Cluster clients; a property check, unlike instanceof, needs no ioredis import here.
  return (client as { isCluster?: boolean }).isCluster === true;
}

/** What the read and write paths need from the store: the client and how to name failures. */
export interface RedisContext {
  client: RedisClient;
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

function isFunctionMissing(error: unknown): boolean {
  return error instanceof Error && /Function not found/i.test(error.message);
}

/** How many times a call is sent again after its server answered "Function not found" and the library was loaded. */
const LOAD_ATTEMPTS = 3;

/** Loads in flight, one per client: concurrent calls that found the library missing share one load. */
const libraryLoads = new WeakMap<RedisClient, Promise<void>>();

/**
 * Loads the library (FUNCTION LOAD REPLACE: the same name always carries the same text) into the
 * server, or into every master of a cluster: a call is routed by its keys' slot, and after a
 * restart, a failover or a reshard any master may be the one that serves it. A master that cannot
 * be reached is skipped; a call it serves fails as it would have anyway.
 */
function loadLibrary(client: RedisClient): Promise<void> {
  let loading = libraryLoads.get(client);
  if (!loading) {
    loading = (async () => {
      if (isCluster(client)) {
        // The slot map first, so a master that appeared (a failover, a node added) is among them.
        await new Promise<void>((resolve) => client.refreshSlotsCache(() => resolve()));
        const masters = client.nodes("master");
        const results = await Promise.allSettled(masters.map((node) => node.function("LOAD", "REPLACE", LEASE_LIBRARY.code)));
        if (results.every((r) => r.status === "rejected")) throw (results[0] as PromiseRejectedResult | undefined)?.reason ?? new Error("no cluster master to load the library into");
      } else {
        await client.function("LOAD", "REPLACE", LEASE_LIBRARY.code);
      }
    })().finally(() => libraryLoads.delete(client));
    libraryLoads.set(client, loading);
  }
  return loading;
}

/**
 * Runs one library function (FCALL). When the server does not have the library (first use, a
 * restart, FUNCTION FLUSH, a new master) it answers "Function not found" *without running
 * anything*, so loading the library and sending the call again is safe. An idempotent function
 * whose reply was lost is sent once more (on the next connection): it answers what its first run
 * did, or runs now if that never happened.
 */
export function callScript(
  ctx: RedisContext,
  script: LeaseScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  // The usual call is one FCALL that answers: it costs one promise, not the nested async
  // wrappers of the recovery below (a few µs of client CPU on every operation).
  let sent: Promise<unknown>;
  try {
    sent = ctx.client.fcall(script.functionName, keys.length, ...keys, ...args);
  } catch (error) {
    return recoverScriptCall(ctx, script, keys, args, error);
  }
  return sent.then(undefined, (error: unknown) => recoverScriptCall(ctx, script, keys, args, error));
}

/** FCALL, loading the library first each time the server answers "Function not found". */
async function runLoaded(ctx: RedisContext, script: LeaseScript, keys: readonly string[], args: readonly (string | number)[], error: unknown): Promise<unknown> {
  for (let attempt = 1; ; attempt++) {
    if (!isFunctionMissing(error) || attempt > LOAD_ATTEMPTS) throw error;
    await loadLibrary(ctx.client);
    try {
      return await ctx.client.fcall(script.functionName, keys.length, ...keys, ...args);
    } catch (next) {
      error = next;
    }
  }
}

/** What callScript does after its FCALL failed with `firstError`. */
async function recoverScriptCall(
  ctx: RedisContext,
  script: LeaseScript,
  keys: readonly string[],
  args: readonly (string | number)[],
  firstError: unknown,
): Promise<unknown> {
  try {
    try {
      return await runLoaded(ctx, script, keys, args, firstError);
    } catch (error) {
      if (!(error instanceof ReplyLostError && script.isIdempotent)) throw error;
      try {
        return await ctx.client.fcall(script.functionName, keys.length, ...keys, ...args);
      } catch (again) {
        return await runLoaded(ctx, script, keys, args, again);
      }
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
  pipeline?: ChainableCommander,
): Promise<unknown[]> {
  if (!pipeline && isCluster(ctx.client)) return execFannedOut(ctx, ctx.client, operation, build);
  pipeline ??= ctx.client.pipeline();
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

type RecordedCommand = [name: string, ...args: unknown[]];

/**
 * On a cluster a pipeline may only hold keys served by one node, so the commands `build` adds are
 * recorded, grouped by the node that serves each command's first key (keyless ones, such as TIME,
 * go with the first group), sent as one pipeline per node in parallel, and their replies put back
 * in the order they were added. Each command still reads one bucket (one slot): nothing here
 * spans slots. A group whose slots moved (a reshard, a failover) answers MOVED/ASK: the slot map
 * is refreshed and the commands grouped and sent again, a few times at most, with a short pause (what goes through
 * here reads, or writes idempotently).
 */
async function execFannedOut(
  ctx: RedisContext,
  cluster: Cluster,
  operation: string,
  build: (pipeline: ChainableCommander) => void,
): Promise<unknown[]> {
  const commands: RecordedCommand[] = [];
  const recorder: ChainableCommander = new Proxy({} as ChainableCommander, {
    get: (_, name) =>
      (...args: unknown[]) => {
        commands.push([String(name), ...args]);
        return recorder;
      },
  });
  build(recorder);
  for (let attempt = 1; ; attempt++) {
    try {
      return await sendGrouped(ctx, cluster, operation, commands);
    } catch (error) {
      const cause = error instanceof RedisStoreError ? error.cause : error;
      if (attempt >= FAN_OUT_ATTEMPTS || !(cause instanceof Error && SLOTS_MOVED.test(cause.message))) throw error;
      // A slot still migrating answers ASK until the move ends: give it a moment.
      await new Promise<void>((resolve) => setTimeout(resolve, 50 * attempt));
      await new Promise<void>((resolve) => cluster.refreshSlotsCache(() => resolve()));
    }
  }
}

const FAN_OUT_ATTEMPTS = 5;
/** Redirections, and ioredis' refusal of a pipeline whose slots its refreshed map puts on several nodes. */
const SLOTS_MOVED = /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN)\b|same slots allocation group/;

async function sendGrouped(ctx: RedisContext, cluster: Cluster, operation: string, commands: readonly RecordedCommand[]): Promise<unknown[]> {
  const groups = new Map<string, number[]>();
  const keyless: number[] = [];
  commands.forEach((command, i) => {
    // XINFO STREAM <key> and MEMORY USAGE <key>: the key follows a subcommand; call(NAME, key, …) names its command first.
    const key = command[0] === "xinfo" || command[0] === "memory" || command[0] === "call" ? command[2] : command[1];
    if (command[0] === "time" || command[0] === "info" || command[0] === "ping" || (typeof key !== "string" && !Buffer.isBuffer(key))) {
      keyless.push(i);
      return;
    }
    const slot = clusterSlotOf(typeof key === "string" ? key : key.toString("latin1"));
    const node = cluster.slots[slot]?.join(",") ?? `slot:${slot}`;
    let group = groups.get(node);
    if (!group) groups.set(node, (group = []));
    group.push(i);
  });
  const grouped = [...groups.values()];
  if (grouped.length === 0) grouped.push([]);
  grouped[0]!.unshift(...keyless);
  const replies = new Array<unknown>(commands.length);
  await Promise.all(
    grouped.map(async (indices) => {
      let results: [Error | null, unknown][] | null;
      try {
        results = await cluster.pipeline(indices.map((i) => commands[i]!) as string[][]).exec();
      } catch (error) {
        throw toStoreError(ctx, operation, error);
      }
      if (!results) throw toStoreError(ctx, operation, new Error("pipeline was discarded"));
      results.forEach(([error, reply], j) => {
        if (error) throw toStoreError(ctx, operation, error);
        replies[indices[j]!] = reply;
      });
    }),
  );
  return replies;
}

/** The store clock in ms (`TIME`), from a TIME reply. */
export function parseTimeReply(reply: unknown): number {
  const [seconds, micros] = reply as [string, string];
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
