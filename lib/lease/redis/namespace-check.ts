import type { ChainableCommander, Redis } from "ioredis";
import { execPipeline, isCluster, RedisStoreError, type RedisClient, type RedisContext } from "./connection";
import { buildBucketCountKey, buildNamespaceBucketsKey, clusterSlotOf } from "./keys";

/** The most buckets a store may be given: the bucket count check reads every bucket that could exist. */
export const MAX_BUCKETS = 1024;

/** A record of another bucket count than the store's: its value and where it was found. */
export interface BucketCountConflict {
  recorded: string;
  where: string;
}

function findConflict(keys: readonly string[], values: readonly unknown[], buckets: number): BucketCountConflict | null {
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined || String(value) === String(buckets)) continue;
    return { recorded: String(value), where: keys[i]! };
  }
  return null;
}

/**
 * Records `buckets` as the namespace's bucket count: in `<ns>:buckets`, and in each of the store's
 * buckets beside its locks (`<ns>:{b<n>}:buckets`), which every acquire compares with its own
 * count in the same atomic step. It first reads the namespace key and every bucket key that could
 * exist (up to MAX_BUCKETS, on every master of a cluster) and writes nothing when one names
 * another count: a store with fewer or more buckets still holding locks anywhere is found by the
 * keys that live with those locks, even when `<ns>:buckets` was lost. Then SET NX GET records its
 * own, which catches a store with another count recording at the same moment.
 *
 * A store's first check needs every master to answer: a master it did not read could hold
 * another count's locks. `isRecheck` (the store passed a complete check before) leaves out the
 * masters that do not answer: every lock this store writes is still guarded by its bucket's key,
 * and a store with another count cannot have passed a complete check while this one's keys were there.
 */
export async function claimBucketCount(
  ctx: RedisContext,
  namespace: string,
  buckets: number,
  operation: string,
  isRecheck: boolean,
): Promise<BucketCountConflict | null> {
  const keys = [buildNamespaceBucketsKey(namespace), ...Array.from({ length: MAX_BUCKETS }, (_, b) => buildBucketCountKey(namespace, b))];
  const recorded = await runPerMaster(ctx, operation, keys, (p, key) => p.get(key), isRecheck);
  const conflict = findConflict(keys, recorded, buckets);
  if (conflict) return conflict;
  const own = keys.slice(0, buckets + 1);
  const previous = await runPerMaster(ctx, operation, own, (p, key) => p.set(key, String(buckets), "NX", "GET"), isRecheck);
  return findConflict(own, previous, buckets);
}

/**
 * One command per key, pipelined: on a cluster one pipeline per master, so that with
 * `skipUnreachable` a master that fails leaves its keys' replies undefined instead of failing the rest.
 */
async function runPerMaster(
  ctx: RedisContext,
  operation: string,
  keys: readonly string[],
  command: (p: ChainableCommander, key: string) => void,
  skipUnreachable: boolean,
): Promise<unknown[]> {
  const client = ctx.client;
  if (!isCluster(client) || !skipUnreachable) {
    return execPipeline(ctx, operation, (p) => {
      for (const key of keys) command(p, key);
    });
  }
  const groups = new Map<string, number[]>();
  keys.forEach((key, i) => {
    const slot = clusterSlotOf(key);
    const node = client.slots[slot]?.[0] ?? `slot:${slot}`;
    let group = groups.get(node);
    if (!group) groups.set(node, (group = []));
    group.push(i);
  });
  const replies = new Array<unknown>(keys.length);
  await Promise.all(
    [...groups.values()].map(async (indices) => {
      const answered = await execPipeline(ctx, operation, (p) => {
        for (const i of indices) command(p, keys[i]!);
      }).catch(() => null);
      answered?.forEach((reply, j) => (replies[indices[j]!] = reply));
    }),
  );
  return replies;
}

/** What a server says about eviction and durability (INFO memory and persistence). */
export interface ServerSettings {
  /** host:port */
  node: string;
  memoryPolicy: string | null;
  /** aof_enabled; false: a restart keeps at most the last snapshot, if the server takes any. */
  isAppendOnly: boolean | null;
}

function parseSettings(node: string, info: string): ServerSettings {
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1] ?? null;
  const aof = /^aof_enabled:(\d)/m.exec(info)?.[1];
  return { node, memoryPolicy: policy, isAppendOnly: aof === undefined ? null : aof === "1" };
}

function addressOf(node: Redis): string {
  return `${node.options.host ?? "127.0.0.1"}:${node.options.port ?? 6379}`;
}

/**
 * The settings of the server, or of every master of a cluster (the slot map refreshed first when
 * no master is known yet). A master that does not answer is listed in `unreachable`: its slots
 * cannot be served either, and the store reads it again once it is back (see watchReconnects).
 */
export async function readServerSettings(ctx: RedisContext, operation: string): Promise<{ servers: ServerSettings[]; unreachable: string[] }> {
  const client = ctx.client;
  if (!isCluster(client)) {
    try {
      const info = String(await client.info("memory", "persistence"));
      return { servers: [parseSettings(addressOf(client), info)], unreachable: [] };
    } catch (error) {
      throw new RedisStoreError(ctx.storeName, operation, error, ctx.lastConnectionError?.());
    }
  }
  let masters = client.nodes("master");
  if (masters.length === 0) {
    await new Promise<void>((resolve) => client.refreshSlotsCache(() => resolve()));
    masters = client.nodes("master");
  }
  if (masters.length === 0) throw new RedisStoreError(ctx.storeName, operation, new Error("no cluster master is known"), ctx.lastConnectionError?.());
  const replies = await Promise.allSettled(masters.map((node) => node.info("memory", "persistence")));
  const servers: ServerSettings[] = [];
  const unreachable: string[] = [];
  replies.forEach((reply, i) => {
    if (reply.status === "fulfilled") servers.push(parseSettings(addressOf(masters[i]!), String(reply.value)));
    else unreachable.push(addressOf(masters[i]!));
  });
  return { servers, unreachable };
}

/**
 * Calls `onChange` when what a store checked about its servers may have changed: the client
 * reconnects after it had been ready (the server may have restarted empty, or be another one),
 * or on a cluster a node connection is added (a failover, a new master) or reconnects. The
 * first connection is not a change. Returns a function that stops watching.
 */
export function watchReconnects(client: RedisClient, onChange: () => void): () => void {
  const listeners: [NodeJS.EventEmitter, string, (node: Redis) => void][] = [];
  const listen = (emitter: NodeJS.EventEmitter, event: string, listener: (node: Redis) => void) => {
    emitter.on(event, listener);
    listeners.push([emitter, event, listener]);
  };
  let isReady = client.status === "ready";
  // `wasReady`: a connection's first ready is a change only for a node added after the cluster was ready.
  const watchConnection = (connection: Redis | RedisClient, wasReady: boolean) => {
    listen(connection, "ready", () => {
      if (wasReady && isReady) onChange();
      wasReady = true;
    });
  };
  if (isCluster(client)) {
    listen(client, "ready", () => {
      isReady = true;
    });
    for (const node of client.nodes()) watchConnection(node, node.status === "ready");
    listen(client, "+node", (node: Redis) => {
      watchConnection(node, isReady);
      if (isReady) onChange();
    });
  } else {
    isReady = true;
    watchConnection(client, client.status === "ready");
  }
  return () => {
    for (const [emitter, event, listener] of listeners) emitter.off(event, listener);
  };
}
