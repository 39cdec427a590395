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
  LifetimeTotals,
  StatsBucket,
  StatsQuery,
  StoreHealth,
} from "../types";
import {
  parseOrThrow,
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
import { pairsToRecord, readScriptReply, replyEventsToRaw, toLease, toLeaseEvent, type RawEvent, type RawLease } from "./codec";
import { callScript, execPipeline, RedisStoreError, rejectUnansweredOnClose, type RedisContext } from "./connection";
import { readEvents, type EventSourcePlan } from "./events";
import { bucketOf, buildBucketKeys, buildKindStreamKey, buildNamespaceBucketsKey, buildResourceKeys, type BucketKeys } from "./keys";
import { listLeases } from "./list";
import { FOLD_PER_SWEEP, INDEXED_EVENT_KINDS, LEASE_SCRIPTS, type LeaseOperation } from "./scripts";
import { readStats } from "./stats";
import { addTotalsHash, emptyLifetimeTotals } from "./totals";

export const DEFAULT_NAMESPACE = "lw";
export const DEFAULT_BUCKETS = 16;
export const DEFAULT_EVENTS_MAX_LEN = 100_000;
/**
 * How many recent event ids each resource's history list keeps (the detail page's history).
 * The list is trimmed back to this once it is max(16, 1/16 of it) over, so it may briefly hold that many more.
 */
export const RESOURCE_EVENTS_MAX_LEN = 1_000;
/** Expired leases recorded per bucket per sweep call (keeps each call short). */
export const SWEEP_BATCH = 500;

/** See RedisLeaseStore.lifetimeCounts. */
export interface LifetimeCounts {
  acquired: number;
  released: number;
  expired: number;
  force_released: number;
  /** Leases with state in the store now: held, or lapsed and not yet recorded as expired. */
  held: number;
}

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
 * `client` (the caller's, left open by close(); give it `autoResendUnfulfilledCommands: false`,
 * or a report whose reply was lost to a reconnect is recorded twice — acquire, release and
 * forceRelease answer a resent call as they did the first time either way). Every process sharing a
 * `namespace` must use the same `buckets`: a resource's keys live in bucket
 * hash(resource) % buckets. `eventsMaxLen` caps each bucket's event stream
 * (approximately: Redis trims whole stream nodes).
 *
 * Before its first operation the store checks, once: that the namespace was not set up with
 * another `buckets` (the first store records it in `<namespace>:buckets`; a mismatch would put
 * one resource's lock in two keys, so every operation is refused with a "misconfigured"
 * LeaseError), and that the server's `maxmemory-policy` is `noeviction`. Any other policy may
 * evict a lock key — the lease silently ends while its holder still works — so the store refuses
 * it unless `allowEvictingMemoryPolicy: true` says the caller accepts that.
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
    allowEvictingMemoryPolicy: z.boolean().default(false),
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
  // Never run a command twice: a script sent again after a reconnect could acquire a second
  // time, or find its own release done and answer "not_owner". rejectUnansweredOnClose rejects
  // what a closed connection left unanswered, so nothing is left to resend; resending stays off
  // as well. callScript retries only the idempotent scripts.
  autoResendUnfulfilledCommands: false,
  // A server that accepts connections but stops answering (paused, swapping) still ends in an error.
  commandTimeout: 10_000,
  maxRetriesPerRequest: 1,
  enableOfflineQueue: true,
  retryStrategy: (attempt: number) => Math.min(attempt * 50, RECONNECT_CAP_MS),
};

const HEALTH_TIMEOUT_MS = 2_000;

/**
 * A lease store on Redis (≥ 7). Every write is one Lua script run by SHA (see scripts.ts) that
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
  /** Length of each resource's history list of event ids. */
  private readonly evidsMaxLen: number;
  private readonly bucketKeys: readonly BucketKeys[];
  private readonly ctx: RedisContext;
  private lastConnectionError: string | undefined;
  private readonly allowEvictingMemoryPolicy: boolean;
  private isNamespaceChecked = false;
  private namespaceCheck: Promise<void> | null = null;
  /** A check that failed for good (not for a connection error): every operation throws it. */
  private misconfiguration: LeaseError | null = null;

  constructor(options: TRedisLeaseStoreOptions) {
    const o = parseOrThrow(ZRedisLeaseStoreOptions, options, "RedisLeaseStore options");
    this.name = o.name;
    this.namespace = o.namespace;
    this.buckets = o.buckets;
    this.eventsMaxLen = o.eventsMaxLen;
    this.allowEvictingMemoryPolicy = o.allowEvictingMemoryPolicy;
    this.evidsMaxLen = Math.min(o.eventsMaxLen, RESOURCE_EVENTS_MAX_LEN);
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
      rejectUnansweredOnClose(this.client);
    }
    this.bucketKeys = Array.from({ length: this.buckets }, (_, b) => buildBucketKeys(this.namespace, b));
    this.ctx = { client: this.client, storeName: this.name, lastConnectionError: () => this.lastConnectionError };
  }

  async acquire(input: AcquireInput): Promise<AcquireResult> {
    const i = parseOrThrow(ZAcquireInput, input, "acquire");
    const leaseId = randomUUID();
    const { reply } = await this.callResourceScript("acquire", i.resource, [i.owner, i.task, i.ttlMs, leaseId]);
    const r = readScriptReply(reply, "acquire") as string[];
    if (r[0] === "held") {
      // ["held", holder leaseId, owner, task, token, expiresAt]
      return {
        acquired: false,
        holder: { leaseId: r[1]!, owner: r[2]!, task: r[3]!, fencingToken: r[4]!, expiresAt: new Date(Number(r[5])) },
      };
    }
    if (r[0] !== "acquired") throw new LeaseError(`redis store "${this.name}": acquire returned no lease`, "store_error");
    // ["acquired", tookOverExpired, token, acquiredAt, expiresAt]: the rest of the lease is what we sent.
    const acquiredAt = new Date(Number(r[3]));
    const lease: Lease = {
      store: this.name,
      resource: i.resource,
      leaseId,
      owner: i.owner,
      task: i.task,
      fencingToken: r[2]!,
      acquiredAt,
      expiresAt: new Date(Number(r[4])),
      ttlMs: i.ttlMs,
      renewedAt: acquiredAt,
      renewals: 0,
    };
    return r[1] === "1" ? { acquired: true, lease, tookOverExpired: true } : { acquired: true, lease };
  }

  async renew(input: RenewInput): Promise<RenewResult> {
    const i = parseOrThrow(ZRenewInput, input, "renew");
    const { reply } = await this.callResourceScript("renew", i.resource, [i.leaseId, i.ttlMs]);
    // ["renewed", expiresAt, renewals] | ["refused", reason, events]
    const r = readScriptReply(reply, "renew");
    if (r[0] === "renewed") return { renewed: true, expiresAt: new Date(Number(r[1])), renewals: Number(r[2]) };
    return { renewed: false, reason: toRefusal(r[1]) };
  }

  async release(input: ReleaseInput): Promise<ReleaseResult> {
    const i = parseOrThrow(ZReleaseInput, input, "release");
    const { reply, bucket } = await this.callResourceScript("release", i.resource, [i.leaseId, randomUUID()]);
    // ["released", holdMs, event id, owner, task, token] | ["refused", reason, events]
    const r = readScriptReply(reply, "release");
    if (r[0] === "released") {
      const raw: RawEvent = { id: String(r[2]), kind: "released", resource: i.resource, leaseId: i.leaseId, holdMs: String(r[1]) };
      if (typeof r[3] === "string") raw.owner = r[3];
      if (typeof r[4] === "string") raw.task = r[4];
      if (typeof r[5] === "string") raw.token = r[5];
      const event = toLeaseEvent(this.name, bucket, raw);
      if (event) return { released: true, holdMs: Number(r[1]), event };
    }
    return { released: false, reason: toRefusal(r[1]) };
  }

  async forceRelease(input: ForceReleaseInput): Promise<ForceReleaseResult> {
    const i = parseOrThrow(ZForceReleaseInput, input, "forceRelease");
    const { reply, bucket } = await this.callResourceScript("forceRelease", i.resource, [i.leaseId, i.actor, i.reason, randomUUID()]);
    // ["released", holdMs, lease fields, events] | ["lease_changed", current lease fields, events] | ["not_found", events]
    const r = readScriptReply(reply, "forceRelease");
    if (r[0] === "released") {
      const lease = toLease(this.name, i.resource, pairsToRecord(r[2]) as RawLease);
      const event = this.toEvents(bucket, r[3]).at(-1);
      if (lease && event) return { released: true, holdMs: Number(r[1]), event, lease };
    }
    if (r[0] === "lease_changed") {
      return { released: false, reason: "lease_changed", current: toLease(this.name, i.resource, pairsToRecord(r[1]) as RawLease) };
    }
    return { released: false, reason: "not_found", current: null };
  }

  async get(resource: string): Promise<Lease | null> {
    const r = parseOrThrow(ZResource, resource, "get");
    if (!this.isNamespaceChecked) await this.checkNamespace("get");
    const keys = buildResourceKeys(this.namespace, this.buckets, r);
    const [hash] = await execPipeline(this.ctx, "get", (p) => p.hgetall(keys.lease));
    return toLease(this.name, r, (hash ?? {}) as RawLease);
  }

  async list(query: ListQuery = {}): Promise<LeasePage> {
    const q = parseOrThrow(ZListQuery, query, "list");
    if (!this.isNamespaceChecked) await this.checkNamespace("list");
    q.signal?.throwIfAborted(); // a request gone away starts no Redis work
    return listLeases(this.ctx, this.bucketKeys, q, (resource) => buildResourceKeys(this.namespace, this.buckets, resource).lease);
  }

  async events(query: EventQuery = {}): Promise<Page<LeaseEvent>> {
    const q = parseOrThrow(ZEventQuery, query, "events");
    if (!this.isNamespaceChecked) await this.checkNamespace("events");
    q.signal?.throwIfAborted(); // a request gone away starts no Redis work
    if (q.from && q.to && q.from.getTime() > q.to.getTime()) throw new LeaseError("events: from must not be after to");
    return readEvents(this.ctx, this.planEventSources(q), q);
  }

  async sweep(): Promise<{ expired: number }> {
    if (!this.isNamespaceChecked) await this.checkNamespace("sweep");
    let expired = 0;
    let pending = this.bucketKeys.map((_, bucket) => bucket);
    // Each round calls sweep once per bucket (pipelined); a bucket goes again only
    // while it filled a whole batch with expiries, or folded a whole batch of minutes.
    while (pending.length > 0) {
      const results = await Promise.all(pending.map((bucket) => this.sweepBucket(bucket)));
      expired += results.reduce((sum, r) => sum + r.expired, 0);
      pending = pending.filter((_, i) => (results[i]!.expired > 0 && results[i]!.scanned >= SWEEP_BATCH) || results[i]!.folded >= FOLD_PER_SWEEP);
    }
    return { expired };
  }

  async reportFencingRejection(input: FencingRejectionInput): Promise<LeaseEvent> {
    const i = parseOrThrow(ZFencingRejectionInput, input, "reportFencingRejection");
    const args = [i.fencingToken, i.seenToken, i.by, i.owner ?? "", i.task ?? "", i.leaseId ?? ""];
    return this.recordOneEvent("reportFencingRejection", i.resource, args);
  }

  async reportLost(input: LostInput): Promise<LeaseEvent> {
    const i = parseOrThrow(ZLostInput, input, "reportLost");
    return this.recordOneEvent("reportLost", i.resource, [i.leaseId, i.owner, i.task, i.fencingToken, i.reason]);
  }

  async stats(query: StatsQuery): Promise<StatsBucket[]> {
    const q = parseOrThrow(ZStatsQuery, query, "stats");
    if (!this.isNamespaceChecked) await this.checkNamespace("stats");
    q.signal?.throwIfAborted(); // a request gone away starts no Redis work
    if (q.from.getTime() > q.to.getTime()) throw new LeaseError("stats: from must not be after to");
    return readStats(this.ctx, this.bucketKeys, q);
  }

  async countActive(): Promise<number> {
    if (!this.isNamespaceChecked) await this.checkNamespace("countActive");
    const counts = await execPipeline(this.ctx, "countActive", (p) => {
      for (const keys of this.bucketKeys) p.zcard(keys.idx);
    });
    return counts.reduce<number>((sum, n) => sum + Number(n), 0);
  }

  /**
   * Lifetime counts of this namespace, from per-bucket counters without a TTL (so they survive
   * the trimming of event streams and the expiry of stats hashes), and the leases held now
   * (lapsed ones not yet recorded included), read in one snapshot:
   * `acquired = released + expired + force_released + held` holds at any moment. Counts start
   * again from zero when Redis loses its keys (a restart without persistence).
   */
  async lifetimeCounts(): Promise<LifetimeCounts> {
    if (!this.isNamespaceChecked) await this.checkNamespace("lifetimeCounts");
    const replies = await execPipeline(
      this.ctx,
      "lifetimeCounts",
      (p) => {
        for (const keys of this.bucketKeys) p.hgetall(keys.totals).zcard(keys.idx);
      },
      this.client.multi(),
    );
    const counts: LifetimeCounts = { acquired: 0, released: 0, expired: 0, force_released: 0, held: 0 };
    for (let b = 0; b < this.bucketKeys.length; b++) {
      const { counts: totals } = addTotalsHash(emptyLifetimeTotals(), (replies[2 * b] ?? {}) as Record<string, string>);
      counts.acquired += totals.acquired;
      counts.released += totals.released;
      counts.expired += totals.expired;
      counts.force_released += totals.force_released;
      counts.held += Number(replies[2 * b + 1] ?? 0);
    }
    return counts;
  }

  /**
   * Every kind's lifetime count, renewals and the hold histogram, from the per-bucket `totals`
   * hashes (no TTL), read in one MULTI so a reader sees one moment of every bucket.
   */
  async lifetimeTotals(): Promise<LifetimeTotals> {
    if (!this.isNamespaceChecked) await this.checkNamespace("lifetimeTotals");
    const replies = await execPipeline(
      this.ctx,
      "lifetimeTotals",
      (p) => {
        for (const keys of this.bucketKeys) p.hgetall(keys.totals);
      },
      this.client.multi(),
    );
    const totals = emptyLifetimeTotals();
    for (const hash of replies) addTotalsHash(totals, (hash ?? {}) as Record<string, string>);
    return totals;
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
   * The once-per-store check of the namespace's bucket count and the server's eviction policy
   * (see the options). Concurrent first calls share one check; a connection error leaves it to
   * the next call.
   */
  private async checkNamespace(operation: string): Promise<void> {
    if (this.misconfiguration) throw this.misconfiguration;
    this.namespaceCheck ??= this.runNamespaceCheck(operation).finally(() => {
      this.namespaceCheck = null;
    });
    await this.namespaceCheck;
  }

  /** `operation`: the call that needs the check, named in a connection error. */
  private async runNamespaceCheck(operation: string): Promise<void> {
    const [recorded, memoryInfo] = await execPipeline(this.ctx, operation, (p) => {
      p.set(buildNamespaceBucketsKey(this.namespace), String(this.buckets), "NX", "GET");
      p.info("memory");
    });
    const where = `redis store "${this.name}"`;
    if (recorded !== null && recorded !== undefined && String(recorded) !== String(this.buckets)) {
      this.misconfiguration = new LeaseError(
        `${where}: namespace "${this.namespace}" uses ${String(recorded)} buckets, this store was given ${this.buckets}; ` +
          "every process sharing a namespace must use the same buckets (or another namespace)",
        "misconfigured",
      );
    }
    const policy = /^maxmemory_policy:(\S+)/m.exec(String(memoryInfo))?.[1];
    if (!this.misconfiguration && policy && policy !== "noeviction" && !this.allowEvictingMemoryPolicy) {
      this.misconfiguration = new LeaseError(
        `${where}: the server's maxmemory-policy is ${policy}, which can evict lock keys and end leases silently; ` +
          "set it to noeviction, or pass allowEvictingMemoryPolicy: true to accept that",
        "misconfigured",
      );
    }
    if (this.misconfiguration) throw this.misconfiguration;
    this.isNamespaceChecked = true;
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

  private async callResourceScript(operation: LeaseOperation, resource: string, extra: readonly (string | number)[]) {
    if (!this.isNamespaceChecked) await this.checkNamespace(operation);
    const bucket = bucketOf(resource, this.buckets);
    const keys = [this.bucketKeys[bucket]!.base];
    const reply = await callScript(this.ctx, LEASE_SCRIPTS[operation], keys, [resource, this.eventsMaxLen, this.evidsMaxLen, ...extra]);
    return { reply, bucket };
  }

  private async recordOneEvent(operation: LeaseOperation, resource: string, args: readonly (string | number)[]): Promise<LeaseEvent> {
    const { reply, bucket } = await this.callResourceScript(operation, resource, args);
    // ["recorded", events]
    const event = this.toEvents(bucket, readScriptReply(reply, operation)[1]).at(-1);
    if (!event) throw new LeaseError(`redis store "${this.name}": ${operation} recorded no event`, "store_error");
    return event;
  }

  private async sweepBucket(bucket: number): Promise<{ expired: number; scanned: number; folded: number }> {
    const keys = this.bucketKeys[bucket]!;
    const reply = await callScript(
      this.ctx,
      LEASE_SCRIPTS.sweep,
      [keys.base],
      [this.eventsMaxLen, this.evidsMaxLen, SWEEP_BATCH],
    );
    // ["swept", expired, scanned, minutes folded]
    const r = readScriptReply(reply, "sweep");
    return { expired: Number(r[1]), scanned: Number(r[2]), folded: Number(r[3]) };
  }

  /** Script reply events → LeaseEvents, in the order recorded: an operation's own event comes last (after any expiry it recorded on the way). */
  private toEvents(bucket: number, events: unknown): LeaseEvent[] {
    return replyEventsToRaw(events).flatMap((r) => toLeaseEvent(this.name, bucket, r) ?? []);
  }
}

function toRefusal(reason: unknown): "not_owner" | "expired" {
  return reason === "expired" ? "expired" : "not_owner";
}

export { RedisStoreError };
