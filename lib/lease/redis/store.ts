import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { z } from "zod";
import { LeaseError } from "../errors";
import type {
  AcquireInput,
  AcquireResult,
  EventQuery,
  FencingRejectionInput,
  ForceReleaseInput,
  ForceReleaseResult,
  Lease,
  LeaseEvent,
  LeasePage,
  LeaseStore,
  ListQuery,
  LostInput,
  Page,
  ReleaseInput,
  ReleaseResult,
  RenewInput,
  RenewResult,
  StatsBucket,
  StatsQuery,
  StoreHealth,
} from "../types";
import {
  parseOrThrow,
  resourcePrefix,
  ZAcquireInput,
  ZEventQuery,
  ZFencingRejectionInput,
  ZForceReleaseInput,
  ZListQuery,
  ZLostInput,
  ZReleaseInput,
  ZRenewInput,
  ZResource,
  ZStatsQuery,
  ZStoreName,
} from "../validation";
import { parseScriptReply, toLease, toLeaseEvent, type RawEvent, type RawLease } from "./codec";
import { execPipeline, runScript, RedisStoreError, type RedisContext } from "./connection";
import { readEvents, type EventSourcePlan } from "./events";
import { buildBucketKeys, buildKindStreamKey, buildResourceKeys, type BucketKeys } from "./keys";
import { listLeases } from "./list";
import {
  ACQUIRE_SCRIPT,
  FENCING_REJECTED_SCRIPT,
  FORCE_RELEASE_SCRIPT,
  INDEXED_EVENT_KINDS,
  LOST_SCRIPT,
  RELEASE_SCRIPT,
  RENEW_SCRIPT,
  SWEEP_SCRIPT,
  type LuaScript,
} from "./scripts";
import { readStats } from "./stats";

export const DEFAULT_NAMESPACE = "lw";
export const DEFAULT_BUCKETS = 16;
export const DEFAULT_EVENTS_MAX_LEN = 100_000;
/** How many recent event ids each resource's history list keeps (the detail page's history). */
export const RESOURCE_EVENTS_MAX_LEN = 1_000;
/** Expired leases recorded per bucket per sweep script run (keeps each script short). */
export const SWEEP_BATCH = 500;

/** Structural check rather than instanceof, so a client from another copy of ioredis is accepted. */
const ZRedisClient = z.custom<Redis>(
  (v) =>
    typeof v === "object" &&
    v !== null &&
    typeof (v as Redis).evalsha === "function" &&
    typeof (v as Redis).pipeline === "function" &&
    typeof (v as Redis).quit === "function",
  { error: "client must be an ioredis Redis client" },
);

/**
 * Options. Exactly one of `url` (the store creates and closes its client) or
 * `client` (the caller's, left open by close()). Every process sharing a
 * `namespace` must use the same `buckets`: a resource's keys live in bucket
 * hash(resource) % buckets. `eventsMaxLen` caps each bucket's event stream
 * (approximately: Redis trims whole stream nodes).
 */
export const ZRedisLeaseStoreOptions = z
  .strictObject({
    name: ZStoreName,
    url: z.string().regex(/^rediss?:\/\//, { error: "url must start with redis:// or rediss://" }).optional(),
    client: ZRedisClient.optional(),
    namespace: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,32}$/, { error: "namespace must be 1-32 chars of A-Z, a-z, 0-9, '_' or '-'" })
      .default(DEFAULT_NAMESPACE),
    buckets: z.number().int().min(1).max(1024, { error: "buckets must be between 1 and 1024" }).default(DEFAULT_BUCKETS),
    eventsMaxLen: z.number().int().min(1).max(100_000_000).default(DEFAULT_EVENTS_MAX_LEN),
  })
  .refine((o) => (o.url === undefined) !== (o.client === undefined), { error: "give exactly one of url or client" });
export type TRedisLeaseStoreOptions = z.input<typeof ZRedisLeaseStoreOptions>;

/**
 * Connection settings for a client we create: a Redis that is down must turn
 * into a rejected promise quickly (not a request queued forever), while the
 * client keeps reconnecting in the background for the next call. A queued
 * command fails after one failed reconnect attempt, and attempts are at most
 * RECONNECT_CAP_MS apart (the default backoff grows to seconds, and every call
 * made while down would wait that long).
 */
const RECONNECT_CAP_MS = 500;
const CLIENT_OPTIONS = {
  connectTimeout: 3_000,
  // A server that accepts connections but stops answering (paused, swapping) still ends in an error.
  commandTimeout: 10_000,
  maxRetriesPerRequest: 1,
  enableOfflineQueue: true,
  retryStrategy: (attempt: number) => Math.min(attempt * 50, RECONNECT_CAP_MS),
};

const HEALTH_TIMEOUT_MS = 2_000;

interface AcquireReply {
  status: "acquired" | "held";
  lease?: RawLease;
  tookOverExpired?: boolean;
  holder?: { leaseId: string; owner: string; task: string; token: string; expiresAt: string };
}

/**
 * A lease store on Redis. Every write is one Lua script (see scripts.ts) that
 * checks, changes, records the event and counts it atomically, on the store's
 * clock; reads use pipelines across the hash-tagged buckets (see keys.ts).
 */
export class RedisLeaseStore implements LeaseStore {
  readonly name: string;
  readonly kind = "redis" as const;
  readonly namespace: string;
  readonly buckets: number;
  readonly client: Redis;
  private readonly isOwnClient: boolean;
  private readonly eventsMaxLen: number;
  private readonly bucketKeys: readonly BucketKeys[];
  private readonly ctx: RedisContext;
  private lastConnectionError: string | undefined;

  constructor(options: TRedisLeaseStoreOptions) {
    const o = parseOrThrow(ZRedisLeaseStoreOptions, options, "RedisLeaseStore options");
    this.name = o.name;
    this.namespace = o.namespace;
    this.buckets = o.buckets;
    this.eventsMaxLen = o.eventsMaxLen;
    if (o.client) {
      this.client = o.client;
      this.isOwnClient = false;
    } else {
      this.client = new Redis(o.url!, CLIENT_OPTIONS);
      this.isOwnClient = true;
      // Without a listener ioredis reports every reconnect failure as an unhandled error;
      // the message is kept for health().
      this.client.on("error", (error: Error) => {
        this.lastConnectionError = error.message;
      });
      this.client.on("ready", () => {
        this.lastConnectionError = undefined;
      });
    }
    this.bucketKeys = Array.from({ length: this.buckets }, (_, b) => buildBucketKeys(this.namespace, b));
    this.ctx = { client: this.client, storeName: this.name, lastConnectionError: () => this.lastConnectionError };
  }

  async acquire(input: AcquireInput): Promise<AcquireResult> {
    const i = parseOrThrow(ZAcquireInput, input, "acquire");
    const leaseId = randomUUID();
    const { reply } = await this.runResourceScript(ACQUIRE_SCRIPT, i.resource, [i.owner, i.task, i.ttlMs, leaseId]);
    const r = parseScriptReply<AcquireReply>(reply, "acquire");
    if (r.status === "held" && r.holder) {
      return {
        acquired: false,
        holder: {
          owner: r.holder.owner,
          task: r.holder.task,
          leaseId: r.holder.leaseId,
          expiresAt: new Date(Number(r.holder.expiresAt)),
          fencingToken: r.holder.token,
        },
      };
    }
    const lease = r.lease && toLease(this.name, i.resource, r.lease);
    if (!lease) throw new LeaseError(`redis store "${this.name}": acquire returned no lease`, "store_error");
    return r.tookOverExpired ? { acquired: true, lease, tookOverExpired: true } : { acquired: true, lease };
  }

  async renew(input: RenewInput): Promise<RenewResult> {
    const i = parseOrThrow(ZRenewInput, input, "renew");
    const { reply } = await this.runResourceScript(RENEW_SCRIPT, i.resource, [i.leaseId, i.ttlMs]);
    const r = parseScriptReply<{ status: string; expiresAt?: string; renewals?: string; reason?: "not_owner" | "expired" }>(reply, "renew");
    if (r.status === "renewed") return { renewed: true, expiresAt: new Date(Number(r.expiresAt)), renewals: Number(r.renewals) };
    return { renewed: false, reason: r.reason ?? "not_owner" };
  }

  async release(input: ReleaseInput): Promise<ReleaseResult> {
    const i = parseOrThrow(ZReleaseInput, input, "release");
    const { reply, bucket } = await this.runResourceScript(RELEASE_SCRIPT, i.resource, [i.leaseId]);
    const r = parseScriptReply<{ status: string; holdMs?: string; reason?: "not_owner" | "expired" }>(reply, "release");
    const event = this.toEvents(bucket, r.events).at(-1);
    if (r.status === "released" && event) return { released: true, holdMs: Number(r.holdMs), event };
    return { released: false, reason: r.reason ?? "not_owner" };
  }

  async forceRelease(input: ForceReleaseInput): Promise<ForceReleaseResult> {
    const i = parseOrThrow(ZForceReleaseInput, input, "forceRelease");
    const { reply, bucket } = await this.runResourceScript(FORCE_RELEASE_SCRIPT, i.resource, [i.leaseId, i.actor, i.reason]);
    const r = parseScriptReply<{ status: string; holdMs?: string; lease?: RawLease; current?: RawLease }>(reply, "forceRelease");
    const event = this.toEvents(bucket, r.events).at(-1);
    if (r.status === "released") {
      const lease = r.lease && toLease(this.name, i.resource, r.lease);
      if (lease && event) return { released: true, holdMs: Number(r.holdMs), event, lease };
    }
    if (r.status === "lease_changed") {
      return { released: false, reason: "lease_changed", current: (r.current && toLease(this.name, i.resource, r.current)) || null };
    }
    return { released: false, reason: "not_found", current: null };
  }

  async get(resource: string): Promise<Lease | null> {
    const r = parseOrThrow(ZResource, resource, "get");
    const keys = buildResourceKeys(this.namespace, this.buckets, r);
    const [hash] = await execPipeline(this.ctx, "get", (p) => p.hgetall(keys.lease));
    return toLease(this.name, r, (hash ?? {}) as RawLease);
  }

  async list(query: ListQuery = {}): Promise<LeasePage> {
    const q = parseOrThrow(ZListQuery, query, "list");
    return listLeases(this.ctx, this.bucketKeys, q, (resource) => buildResourceKeys(this.namespace, this.buckets, resource).lease);
  }

  async events(query: EventQuery = {}): Promise<Page<LeaseEvent>> {
    const q = parseOrThrow(ZEventQuery, query, "events");
    if (q.from && q.to && q.from.getTime() > q.to.getTime()) throw new LeaseError("events: from must not be after to");
    return readEvents(this.ctx, this.planEventSources(q), q);
  }

  async sweep(): Promise<{ expired: number }> {
    let expired = 0;
    let pending = this.bucketKeys.map((_, bucket) => bucket);
    // Each round runs one script per bucket (pipelined); a bucket goes again only
    // while it filled a whole batch with expiries.
    while (pending.length > 0) {
      const results = await Promise.all(pending.map((bucket) => this.sweepBucket(bucket)));
      expired += results.reduce((sum, r) => sum + r.expired, 0);
      pending = pending.filter((_, i) => results[i]!.expired > 0 && results[i]!.scanned >= SWEEP_BATCH);
    }
    return { expired };
  }

  async reportFencingRejection(input: FencingRejectionInput): Promise<LeaseEvent> {
    const i = parseOrThrow(ZFencingRejectionInput, input, "reportFencingRejection");
    const args = [i.fencingToken, i.seenToken, i.by, i.owner ?? "", i.task ?? "", i.leaseId ?? ""];
    return this.recordOneEvent(FENCING_REJECTED_SCRIPT, i.resource, args);
  }

  async reportLost(input: LostInput): Promise<LeaseEvent> {
    const i = parseOrThrow(ZLostInput, input, "reportLost");
    return this.recordOneEvent(LOST_SCRIPT, i.resource, [i.leaseId, i.owner, i.task, i.fencingToken, i.reason]);
  }

  async stats(query: StatsQuery): Promise<StatsBucket[]> {
    const q = parseOrThrow(ZStatsQuery, query, "stats");
    if (q.from.getTime() > q.to.getTime()) throw new LeaseError("stats: from must not be after to");
    return readStats(this.ctx, this.bucketKeys, q);
  }

  async countActive(): Promise<number> {
    const counts = await execPipeline(this.ctx, "countActive", (p) => {
      for (const keys of this.bucketKeys) p.zcard(keys.idx);
    });
    return counts.reduce<number>((sum, n) => sum + Number(n), 0);
  }

  async health(): Promise<StoreHealth> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no reply within ${HEALTH_TIMEOUT_MS} ms`)), HEALTH_TIMEOUT_MS);
      });
      await Promise.race([this.client.ping(), timeout]);
      return { store: this.name, kind: "redis", ok: true, latencyMs: Math.round((performance.now() - started) * 100) / 100 };
    } catch (error) {
      const wrapped = new RedisStoreError(this.name, "health check", error, this.lastConnectionError);
      return { store: this.name, kind: "redis", ok: false, error: wrapped.message };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Quits the connection only if this store created it; a caller's client stays theirs. */
  async close(): Promise<void> {
    if (!this.isOwnClient) return;
    try {
      await this.client.quit();
    } catch {
      // Already disconnected: nothing left to close.
      this.client.disconnect();
    }
  }

  /**
   * A resource's history comes from its id list (one bucket, no scan); a filter on
   * rare kinds only reads those kinds' streams; anything else merges the bucket streams.
   */
  private planEventSources(q: EventQuery): EventSourcePlan {
    if (q.resource) {
      const k = buildResourceKeys(this.namespace, this.buckets, q.resource);
      return { idList: { listKey: k.evids, streamKey: k.events, bucket: k.bucket } };
    }
    const kinds = [...new Set(q.kinds ?? [])];
    if (kinds.length > 0 && kinds.every((kind) => INDEXED_EVENT_KINDS.includes(kind))) {
      return { streams: this.bucketKeys.flatMap((keys, bucket) => kinds.map((kind) => ({ key: buildKindStreamKey(keys, kind), bucket }))) };
    }
    return { streams: this.bucketKeys.map((keys, bucket) => ({ key: keys.events, bucket })) };
  }

  private async runResourceScript(script: LuaScript, resource: string, extra: readonly (string | number)[]) {
    const k = buildResourceKeys(this.namespace, this.buckets, resource);
    const keys = [k.lock, k.lease, k.ended, k.fence, k.evids, k.idx, k.acq, k.names, k.events, k.stats];
    const args = [
      resource,
      this.eventsMaxLen,
      Math.min(this.eventsMaxLen, RESOURCE_EVENTS_MAX_LEN),
      resourcePrefix(resource, 3),
      ...extra,
    ];
    const reply = await runScript(this.ctx, script, keys, args);
    return { reply, bucket: k.bucket };
  }

  private async recordOneEvent(script: LuaScript, resource: string, args: readonly (string | number)[]): Promise<LeaseEvent> {
    const { reply, bucket } = await this.runResourceScript(script, resource, args);
    const event = this.toEvents(bucket, parseScriptReply<{ status: string }>(reply, script.name).events).at(-1);
    if (!event) throw new LeaseError(`redis store "${this.name}": ${script.name} recorded no event`, "store_error");
    return event;
  }

  private async sweepBucket(bucket: number): Promise<{ expired: number; scanned: number }> {
    const keys = this.bucketKeys[bucket]!;
    const reply = await runScript(
      this.ctx,
      SWEEP_SCRIPT,
      [keys.idx, keys.acq, keys.names, keys.events, keys.stats, keys.base],
      [this.eventsMaxLen, Math.min(this.eventsMaxLen, RESOURCE_EVENTS_MAX_LEN), SWEEP_BATCH],
    );
    const r = parseScriptReply<{ status: string; expired: number; scanned: number }>(reply, "sweep");
    return { expired: Number(r.expired), scanned: Number(r.scanned) };
  }

  /** Script events → LeaseEvents, in the order recorded: an operation's own event comes last (after any expiry it recorded on the way). */
  private toEvents(bucket: number, raw: readonly RawEvent[]): LeaseEvent[] {
    return raw.flatMap((r) => toLeaseEvent(this.name, bucket, r) ?? []);
  }
}

export { RedisStoreError };
