import { randomUUID } from "node:crypto";
import type { ChainableCommander, ClusterOptions, Redis } from "ioredis";
import { z } from "zod";
import { LeaseError } from "../errors";
import { parseAcquireInput, parseReleaseInput, parseRenewInput } from "../input-fast-path";
import type {
  HeldAtQuery,
  HeldAtResult,
  AcquireInput,
  AcquireResult,
  EventQuery,
  EventRetention,
  ReadSignal,
  UnservableFilter,
  FencingRejectionInput,
  ForceReleaseInput,
  ForceReleaseResult,
  ForceReleasedQuery,
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
  GroupTotals,
  GroupTotalsQuery,
  LifetimeTotals,
  RenewalSlackQuery,
  RenewalSlackRow,
  PrefixStats,
  PrefixStatsQuery,
  StatsBucket,
  StatsQuery,
  StoreHealth,
  StoreWarning,
  TtlAdviceQuery,
  TtlAdviceReport,
  ConnectionUsage,
} from "../types";
import { SLACK_BUCKET_COUNT, type LeaseEventKind } from "../types";
import {
  buildTtlAdviceReport,
  emptySlackHistogram,
  isSlackGroupInPrefix,
  mergeSlackRows,
  parseRenewalSlackQuery,
  resolveAdviceWindow,
  slackGroupOf,
  slackHours,
  tallyEvents,
  type EventTally,
} from "../slack";
import {
  ZHeldAtQuery,
  parseOrThrow,
  ZGroupTotalsQuery,
  ZEventQuery,
  ZFencingRejectionInput,
  ZForceReleaseInput,
  ZForceReleasedQuery,
  ZListQuery,
  ZLostInput,
  ZResource,
  ZPrefixStatsQuery,
  ZStatsQuery,
  ZStoreName,
} from "../validation";
import { isPrefixServedByGroups, PREFIX_GROUP_DEPTH } from "../prefix-groups";
import { pairsToRecord, readScriptReply, replyEventsToRaw, toLease, toLeaseEvent, type RawEvent, type RawLease } from "./codec";
import { callScript, execPipeline, isCluster, parseTimeReply, RedisStoreError, rejectUnansweredOnClose, type RedisClient, type RedisContext } from "./connection";
import { readEvents, type EventSourcePlan } from "./events";
import {
  bucketOf,
  buildBucketKeys,
  buildEvidsKey,
  buildGrantsKey,
  buildKindStreamKey,
  buildResourceKeys,
  buildResourceScriptKeys,
  buildForceReleasedKey,
  buildSlackKey,
  buildIdStreamKey,
  type BucketKeys,
} from "./keys";
import { findUnservableRedisEventFilter } from "./event-filters";
import { claimBucketCount, MAX_BUCKETS, readServerSettings, watchReconnects, type ServerSettings } from "./namespace-check";
import { DEFAULT_READ_KEY_BUDGET, ReadBudget } from "./read-budget";
import { pruneBucketHolds, readHeldAt, type HeldAtDeps } from "./held-at";
import { listLeases } from "./list";
import { KIND_STREAM_KINDS, PREFIX_GROUPS_FIELD, Projector, PROJECT_ROUNDS, type ProjectResult } from "./projector";
import { trimEventStreams, type RetentionPolicy, type TrimResult } from "./retention";
import { EVIDS_TTL_S, LEASE_SCRIPTS, type LeaseOperation } from "./scripts";
import { compactClosedDays, compactStoreWide, hasDaysToCompact, hasStoreWideToSum, readStats, type CompactResult } from "./stats";
import { addTotalsHash, emptyLifetimeTotals } from "./totals";
import { addGroupsHash } from "./group-totals";
import { newHoldTally, newSlackTally } from "../group-totals";
import { loadIoredis } from "./driver";

export const DEFAULT_NAMESPACE = "lw";
export const DEFAULT_BUCKETS = 16;
export const DEFAULT_EVENTS_MAX_LEN = 100_000;
/** How often, at most, sweep() reads every master's maxmemory-policy again. */
export const DEFAULT_MEMORY_POLICY_CHECK_MS = 10_000;
/**
 * How many recent event ids each resource's history list keeps (the detail page's history).
 * The list is trimmed back to this once it is max(16, 1/16 of it) over, so it may briefly hold that many more.
 */
const DEFAULT_HELD_AT_LIMIT = 100;
export const RESOURCE_EVENTS_MAX_LEN = 1_000;
/** ttlAdvice reads at most this many events of its window (newest first). */
export const ADVICE_EVENTS_CAP = 50_000;
const ADVICE_EVENT_KINDS: readonly LeaseEventKind[] = ["released", "expired", "force_released", "renew_failed"];
const SLACK_HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Due leases read per bucket per sweep round (each is recorded by a script call of its own). */
export const SWEEP_BATCH = 500;
/** Batches per bucket a read of a read model projects first, at most (so a read stays bounded): 4,000 events. */
export const READ_CATCH_UP_ROUNDS = 16;

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
const ZRedisClient = z.custom<RedisClient>(
  (v) =>
    typeof v === "object" &&
    v !== null &&
    typeof (v as Redis).evalsha === "function" &&
    typeof (v as Redis).pipeline === "function" &&
    typeof (v as Redis).quit === "function",
  { error: "client must be an ioredis Redis or Cluster client" },
);

const ZClusterNode = z.union([
  z.string().regex(/^[^\s:]+:\d{1,5}$/, { error: "a cluster node is host:port" }),
  z.strictObject({ host: z.string().min(1), port: z.number().int().min(1).max(65_535) }),
]);

/** `redis+cluster://host:port,host:port[/namespace]`: the seed nodes of a Redis Cluster (and optionally the namespace). */
export const REDIS_CLUSTER_URL = /^redis\+cluster:\/\/([^/?#]+)(?:\/([A-Za-z0-9_-]{1,32})?)?$/;

/** The seed nodes and namespace of a `redis+cluster://` URL; throws a LeaseError on a malformed one. */
export function parseRedisClusterUrl(url: string): { nodes: { host: string; port: number }[]; namespace?: string } {
  const match = REDIS_CLUSTER_URL.exec(url);
  if (!match) throw new LeaseError("a cluster url is redis+cluster://host:port,host:port[/namespace]", "invalid_input");
  const nodes = match[1]!.split(",").map((hostPort) => {
    const at = hostPort.lastIndexOf(":");
    const port = Number(hostPort.slice(at + 1));
    if (at <= 0 || !Number.isInteger(port) || port < 1 || port > 65_535) {
      throw new LeaseError(`cluster url: "${hostPort}" is not host:port`, "invalid_input");
    }
    return { host: hostPort.slice(0, at), port };
  });
  return match[2] ? { nodes, namespace: match[2] } : { nodes };
}

/**
 * Options. Exactly one of `url` (the store creates and closes its client) or
 * `client` (the caller's, left open by close(); give it `autoResendUnfulfilledCommands: false`,
 * or a report whose reply was lost to a reconnect is recorded twice — acquire, release and
 * forceRelease answer a resent call as they did the first time either way). Every process sharing a
 * `namespace` must use the same `buckets`: a resource's keys live in bucket
 * hash(resource) % buckets. `eventsMaxLen` caps each bucket's event stream
 * (approximately: Redis trims whole stream nodes), trimming only events already projected up to
 * EVENTS_BACKLOG_FACTOR times that (see append_event in scripts.ts). `eventRetentionDays` and
 * `eventRetentionMaxMb` add a time and a memory bound, applied by sweep() off the hot path
 * and never to events not yet projected (retention.ts).
 *
 * Before its first operation, and again after a reconnect or a new cluster node, the store
 * checks that the namespace is not used with another `buckets` (namespace-check.ts: the count is
 * recorded in `<namespace>:buckets` and beside each bucket's locks, and every acquire compares it
 * in the same atomic step; a mismatch would put one resource's lock in two keys, so every
 * operation is refused with a "misconfigured" LeaseError), and that every master's
 * `maxmemory-policy` is `noeviction`. Any other policy may evict a lock key — the lease silently
 * ends while its holder still works — so the store refuses operations while one does (read again
 * by sweep() every `memoryPolicyCheckMs`), unless `allowEvictingMemoryPolicy: true` says the
 * caller accepts that. A server without an append-only file is reported through `onWarning`
 * (default: process.emitWarning), once per server.
 */
export const ZRedisLeaseStoreOptions = z
  .strictObject({
    name: ZStoreName,
    url: z
      .string()
      .regex(/^(rediss?:\/\/|redis\+cluster:\/\/)/, { error: "url must start with redis://, rediss:// or redis+cluster://" })
      .optional(),
    client: ZRedisClient.optional(),
    /** A Redis Cluster: seed nodes and ioredis ClusterOptions (the store adds its own connection settings). */
    cluster: z
      .strictObject({ nodes: z.array(ZClusterNode).min(1), options: z.custom<ClusterOptions>((v) => typeof v === "object" && v !== null).optional() })
      .optional(),
    namespace: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,32}$/, { error: "namespace must be 1-32 chars of A-Z, a-z, 0-9, '_' or '-'" })
      .default(DEFAULT_NAMESPACE),
    buckets: z.number().int().min(1).max(MAX_BUCKETS, { error: `buckets must be between 1 and ${MAX_BUCKETS}` }).default(DEFAULT_BUCKETS),
    eventsMaxLen: z.number().int().min(1).max(100_000_000).default(DEFAULT_EVENTS_MAX_LEN),
    /** Raw events older than this many days are trimmed by sweep() (unset: only eventsMaxLen applies). */
    eventRetentionDays: z.number().int().min(1, { error: "eventRetentionDays must be at least 1" }).max(36_500).optional(),
    /** Memory budget, in MB, of the namespace's event streams; sweep() trims the oldest events to stay under it (unset: none). */
    eventRetentionMaxMb: z.number().int().min(1, { error: "eventRetentionMaxMb must be at least 1" }).max(1_000_000).optional(),
    allowEvictingMemoryPolicy: z.boolean().default(false),
    /** How often, at most, sweep() reads every master's maxmemory-policy again (ms). */
    memoryPolicyCheckMs: z.number().int().min(0).max(86_400_000).default(DEFAULT_MEMORY_POLICY_CHECK_MS),
    /** Told about a setting that weakens a guarantee without breaking one (a server without persistence). */
    onWarning: z.custom<(warning: StoreWarning) => void>((v) => typeof v === "function", { error: "onWarning must be a function" }).optional(),
    /** Keys and entries one read (list, events) may examine before it answers in part (`partial`). */
    readKeyBudget: z.number().int().min(1).max(100_000_000).default(DEFAULT_READ_KEY_BUDGET),
  })
  .refine((o) => [o.url, o.client, o.cluster].filter((v) => v !== undefined).length === 1, { error: "give exactly one of url, client or cluster" });
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
 * A lease store on Redis (≥ 7). Every write is one FCALL of the store's Lua functions library (see scripts.ts) that
 * checks, changes, records the event and counts it atomically, on the store's
 * clock; reads use pipelines across the hash-tagged buckets (see keys.ts).
 */
export class RedisLeaseStore implements LeaseStore {
  readonly name: string;
  readonly kind = "redis" as const;
  readonly namespace: string;
  readonly buckets: number;
  /** Whether the store runs on a Redis Cluster (reads then fan out per node). */
  get isCluster(): boolean {
    return isCluster(this.client);
  }
  readonly client: RedisClient;
  private readonly isOwnClient: boolean;
  private readonly eventsMaxLen: number;
  /** Length of each resource's history list of event ids. */
  private readonly evidsMaxLen: number;
  private readonly retention: RetentionPolicy;
  private readonly bucketKeys: readonly BucketKeys[];
  private readonly ctx: RedisContext;
  private readonly projector: Projector;
  private lastConnectionError: string | undefined;
  private readonly allowEvictingMemoryPolicy: boolean;
  private readonly memoryPolicyCheckMs: number;
  private readonly onWarning: (warning: StoreWarning) => void;
  /** Servers already warned about, per warning code. */
  private readonly warned = new Set<string>();
  private readonly readKeyBudget: number;
  /** Every check passed since the last reconnect: the operations' fast path. */
  private isNamespaceChecked = false;
  private isBucketCountChecked = false;
  /** A complete bucket count check passed once: later ones may leave out a master that does not answer (see claimBucketCount). */
  private hasPassedBucketCountCheck = false;
  /** Bumped by a reconnect or a new cluster node: a check that ran across one does not count. */
  private checkEpoch = 0;
  /** performance.now() of the last complete read of every master's memory policy. */
  private memoryPolicyCheckedAt = Number.NEGATIVE_INFINITY;
  /** Set while a master's policy may evict lock keys: every operation throws it until a later read finds none. */
  private memoryPolicyRefusal: LeaseError | null = null;
  private readonly stopWatchingReconnects: () => void;
  /** Days whose hour stats every bucket has compacted into a day hash (see compactClosedDays). */
  private readonly compactedDays = new Set<number>();
  /** Hours and days whose stats are summed into a store-wide sum (see compactStoreWide). */
  private readonly storeWideHours = new Set<number>();
  private readonly storeWideDays = new Set<number>();
  private namespaceCheck: Promise<void> | null = null;
  /** A bucket count mismatch (for good: not a connection error): every operation throws it. */
  private misconfiguration: LeaseError | null = null;

  constructor(options: TRedisLeaseStoreOptions) {
    const o = parseOrThrow(ZRedisLeaseStoreOptions, options, "RedisLeaseStore options");
    this.name = o.name;
    this.namespace = o.namespace;
    this.buckets = o.buckets;
    this.eventsMaxLen = o.eventsMaxLen;
    this.allowEvictingMemoryPolicy = o.allowEvictingMemoryPolicy;
    this.memoryPolicyCheckMs = o.memoryPolicyCheckMs;
    this.onWarning = o.onWarning ?? emitProcessWarning;
    this.readKeyBudget = o.readKeyBudget;
    this.evidsMaxLen = Math.min(o.eventsMaxLen, RESOURCE_EVENTS_MAX_LEN);
    this.retention = {
      days: o.eventRetentionDays ?? null,
      maxBytes: o.eventRetentionMaxMb === undefined ? null : o.eventRetentionMaxMb * 1024 * 1024,
    };
    const clusterUrl = o.url?.startsWith("redis+cluster://") ? parseRedisClusterUrl(o.url) : null;
    if (clusterUrl?.namespace && options.namespace === undefined) this.namespace = clusterUrl.namespace;
    if (o.client) {
      this.client = o.client;
      this.isOwnClient = false;
    } else {
      const seeds = clusterUrl?.nodes ?? o.cluster?.nodes;
      if (seeds) {
        const given = o.cluster?.options ?? {};
        const cluster = new (loadIoredis().Cluster)(seeds, {
          ...given,
          // Commands wait while the slot map is refreshed (failover, reshard), bounded by the per-node settings.
          enableOfflineQueue: true,
          redisOptions: { ...CLIENT_OPTIONS, ...given.redisOptions, autoResendUnfulfilledCommands: false },
        });
        // Each node's connection, like a standalone client's, rejects what a closed connection left unanswered.
        cluster.on("+node", (node: Redis) => rejectUnansweredOnClose(node));
        this.client = cluster;
      } else {
        const client = new (loadIoredis().Redis)(o.url!, CLIENT_OPTIONS);
        rejectUnansweredOnClose(client);
        this.client = client;
      }
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
    // A server restarted empty, a failover or a new master: what was checked may no longer hold.
    this.stopWatchingReconnects = watchReconnects(this.client, () => {
      this.checkEpoch++;
      this.isNamespaceChecked = false;
      this.isBucketCountChecked = false;
      this.memoryPolicyCheckedAt = Number.NEGATIVE_INFINITY;
    });
    this.bucketKeys = Array.from({ length: this.buckets }, (_, b) => buildBucketKeys(this.namespace, b));
    this.ctx = { client: this.client, storeName: this.name, lastConnectionError: () => this.lastConnectionError };
    this.projector = new Projector(this.ctx, this.bucketKeys, { eventsMaxLen: this.eventsMaxLen, evidsMaxLen: this.evidsMaxLen });
  }

  async acquire(input: AcquireInput): Promise<AcquireResult> {
    const i = parseAcquireInput(input);
    const leaseId = i.leaseId ?? randomUUID();
    // The call id tells a resend of this call from another acquire with the same chosen lease id.
    const callId = i.leaseId === undefined ? leaseId : randomUUID();
    const args = [i.owner, i.task, i.ttlMs, leaseId, callId, this.buckets];
    const bucketCountKey = (keys: BucketKeys) => [keys.bucketCount];
    let r = readScriptReply((await this.callResourceScript("acquire", i.resource, args, leaseId, bucketCountKey)).reply, "acquire") as string[];
    if (r[0] === "buckets") {
      // Refused before anything was written: record the count again (or learn of another) and send it once more.
      const where = this.bucketKeys[bucketOf(i.resource, this.buckets)]!.bucketCount;
      this.refuseOtherBucketCount(r[1]!, where);
      this.invalidateChecks();
      r = readScriptReply((await this.callResourceScript("acquire", i.resource, args, leaseId, bucketCountKey)).reply, "acquire") as string[];
      if (r[0] === "buckets") {
        this.refuseOtherBucketCount(r[1]!, where);
        throw new LeaseError(`redis store "${this.name}": acquire of "${i.resource}": its bucket records no bucket count (deleted meanwhile?)`, "store_error");
      }
    }
    if (r[0] === "ended") {
      if (i.leaseId !== undefined) throw new LeaseError(`acquire of "${i.resource}" with lease id ${leaseId}: that lease has already ended`, "lease_ended");
      throw new LeaseError(
        `acquire of "${i.resource}": its reply was lost and the lease it granted lapsed before the call was sent again; not acquired, try again`,
        "lease_ended",
      );
    }
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
    const i = parseRenewInput(input);
    const hour = Math.floor(Date.now() / SLACK_HOUR_MS);
    const { reply } = await this.callResourceScript("renew", i.resource, [i.leaseId, i.ttlMs, slackGroupOf(i.resource)], i.leaseId, (keys) => [
      buildSlackKey(keys, hour),
      keys.groups,
    ]);
    // ["renewed", expiresAt, renewals] | ["refused", reason, events]
    const r = readScriptReply(reply, "renew");
    if (r[0] === "renewed") return { renewed: true, expiresAt: new Date(Number(r[1])), renewals: Number(r[2]) };
    return { renewed: false, reason: toRefusal(r[1]) };
  }

  async release(input: ReleaseInput): Promise<ReleaseResult> {
    const i = parseReleaseInput(input);
    const { reply, bucket } = await this.callResourceScript("release", i.resource, [i.leaseId, randomUUID(), i.afterDeadlineLoss ? "1" : "0"], i.leaseId);
    // ["released", holdMs, event id, owner, task, token, kind?, detail?] | ["refused", reason, events]
    const r = readScriptReply(reply, "release");
    if (r[0] === "released") {
      const kind = r[6] === "expired" ? "expired" : "released";
      const raw: RawEvent = { id: String(r[2]), kind, resource: i.resource, leaseId: i.leaseId, holdMs: String(r[1]) };
      if (typeof r[3] === "string") raw.owner = r[3];
      if (typeof r[4] === "string") raw.task = r[4];
      if (typeof r[5] === "string") raw.token = r[5];
      if (typeof r[7] === "string") raw.detail = r[7];
      const event = toLeaseEvent(this.name, bucket, raw);
      if (event) return { released: true, holdMs: Number(r[1]), event };
    }
    return { released: false, reason: toRefusal(r[1]) };
  }

  async forceRelease(input: ForceReleaseInput): Promise<ForceReleaseResult> {
    const i = parseOrThrow(ZForceReleaseInput, input, "forceRelease");
    const { reply, bucket } = await this.callResourceScript("forceRelease", i.resource, [i.leaseId, i.actor, i.reason, randomUUID()], i.leaseId, (keys) => [
      buildForceReleasedKey(keys, i.leaseId),
    ]);
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

  /**
   * The force_released event that ended lease `leaseId` on `resource`, from the record the
   * forceRelease script keeps a year beside the lease's keys (not from the event history, which
   * is capped and may have lost it); null when this lease was not force-released.
   */
  async forceReleasedEvent(query: ForceReleasedQuery): Promise<LeaseEvent | null> {
    const q = parseOrThrow(ZForceReleasedQuery, query, "forceReleasedEvent");
    if (!this.isNamespaceChecked) await this.checkNamespace("forceReleasedEvent");
    const bucket = bucketOf(q.resource, this.buckets);
    const [json] = await execPipeline(this.ctx, "forceReleasedEvent", (p) => p.get(buildForceReleasedKey(this.bucketKeys[bucket]!, q.leaseId)));
    if (typeof json !== "string") return null;
    const event = this.toEvents(bucket, [JSON.parse(json)]).at(-1) ?? null;
    return event && event.resource === q.resource ? event : null;
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
    // The "expires" order without a prefix, owner or task reads the hot-path index only; the others read models.
    const readsModel = q.prefix !== undefined || q.owner !== undefined || q.task !== undefined || (q.sort ?? "expires") !== "expires";
    if (readsModel) await this.projector.project(READ_CATCH_UP_ROUNDS, { backfill: false });
    const budget = new ReadBudget(this.readKeyBudget, q.signal, `redis store "${this.name}": list`);
    return listLeases(this.ctx, this.bucketKeys, q, (resource) => buildResourceKeys(this.namespace, this.buckets, resource).lease, budget);
  }

  async events(query: EventQuery = {}): Promise<Page<LeaseEvent>> {
    const q = parseOrThrow(ZEventQuery, query, "events");
    if (!this.isNamespaceChecked) await this.checkNamespace("events");
    q.signal?.throwIfAborted(); // a request gone away starts no Redis work
    if (q.from && q.to && q.from.getTime() > q.to.getTime()) throw new LeaseError("events: from must not be after to");
    const budget = new ReadBudget(this.readKeyBudget, q.signal, `redis store "${this.name}": events`);
    // Whole bucket streams are the source itself; everything else is a read model, caught up first.
    if (!this.isBucketStreamRead(q)) await this.projector.project(READ_CATCH_UP_ROUNDS, { backfill: false });
    const plan = await this.planEventSources(q, budget);
    return readEvents(this.ctx, plan, q, { budget, idListCap: this.evidsMaxLen });
  }

  /** See ./event-filters.ts: a prefix alone over more than 24 h is refused; every other filter is indexed or matches most events. */
  findUnservableEventFilter(query: EventQuery): UnservableFilter | null {
    return findUnservableRedisEventFilter(query);
  }

  /**
   * What was held at a past instant: the hold index plus current leases, see ./held-at.ts. Both
   * are read models (the hold index and the `acq` zset), so the projection is caught up first;
   * what it has not reached yet is read from the stream itself.
   */
  async heldAt(query: HeldAtQuery): Promise<HeldAtResult> {
    const q = parseOrThrow(ZHeldAtQuery, query, "heldAt");
    if (!this.isNamespaceChecked) await this.checkNamespace("heldAt");
    await this.projector.project(READ_CATCH_UP_ROUNDS, { backfill: false });
    const deps: HeldAtDeps = {
      listOldestFirst: (l) => this.list({ ...l, sort: "held_longest", ...(q.signal ? { signal: q.signal } : {}) }),
      get: (resource) => this.get(resource),
      leaseKey: (resource) => buildResourceKeys(this.namespace, this.buckets, resource).lease,
      bucketOf: (resource) => bucketOf(resource, this.buckets),
    };
    return readHeldAt(this.ctx, this.bucketKeys, deps, q, q.limit ?? DEFAULT_HELD_AT_LIMIT);
  }

  /**
   * Brings the hold index heldAt() reads up to date — it is projected with the other read
   * models (project()) — and drops the holds that ended before the streams' trimmed part.
   * sweep() does both too. Returns how many events were projected.
   */
  async projectHolds(): Promise<{ projected: number }> {
    if (!this.isNamespaceChecked) await this.checkNamespace("projectHolds");
    const { applied } = await this.projector.project();
    await this.pruneHolds();
    return { projected: applied };
  }

  private async pruneHolds(): Promise<void> {
    await Promise.all(this.bucketKeys.map((keys) => pruneBucketHolds(this.ctx, keys)));
  }

  /**
   * Records the expiry of every lease whose TTL ran out and nobody recorded yet (one script call
   * per lease, so no call does unbounded work), then brings the read models up to date.
   */
  async sweep(): Promise<{ expired: number }> {
    // Off the hot path, so operations never wait for it: a master whose policy turned evicting is found here.
    if (this.isNamespaceChecked && this.isMemoryPolicyCheckDue()) await this.checkServers("sweep");
    if (!this.isNamespaceChecked) await this.checkNamespace("sweep");
    let expired = 0;
    let pending = this.bucketKeys.map((_, bucket) => bucket);
    // A bucket goes again only while it filled a whole batch with due leases and recorded some.
    while (pending.length > 0) {
      const [time] = await execPipeline(this.ctx, "sweep", (p) => p.time());
      const nowMs = parseTimeReply(time);
      const due = (await execPipeline(this.ctx, "sweep", (p) => {
        for (const bucket of pending) p.zrangebyscore(this.bucketKeys[bucket]!.idx, "-inf", nowMs, "LIMIT", 0, SWEEP_BATCH);
      })) as string[][];
      const recorded = await Promise.all(
        pending.map(async (bucket, i) => {
          const resources = due[i] ?? [];
          const results = await Promise.all(resources.map((resource) => this.expireOne(bucket, resource)));
          return { scanned: resources.length, expired: results.reduce((n, r) => n + r, 0) };
        }),
      );
      expired += recorded.reduce((n, r) => n + r.expired, 0);
      pending = pending.filter((_, i) => recorded[i]!.expired > 0 && recorded[i]!.scanned >= SWEEP_BATCH);
    }
    await this.projector.project();
    await trimEventStreams(this.ctx, this.bucketKeys, this.retention);
    await this.pruneHolds();
    return { expired };
  }

  /**
   * One retention run (sweep() does it too): projects, then trims what is older than
   * eventRetentionDays or over eventRetentionMaxMb, a bounded number of entries per stream.
   * `isDone` is false when a cap stopped it with more to trim.
   */
  async trimEvents(): Promise<TrimResult> {
    if (!this.isNamespaceChecked) await this.checkNamespace("trimEvents");
    await this.projector.project();
    const result = await trimEventStreams(this.ctx, this.bucketKeys, this.retention);
    await this.pruneHolds();
    return result;
  }

  /**
   * What raw history this store keeps: the configured days, and from when every bucket stream
   * is complete — the latest first retained event among the streams that lost events (to
   * retention or to the eventsMaxLen cap; XINFO's entries-added exceeds their length). The latest,
   * not the earliest: before it, some bucket is missing events. Null when no stream lost any.
   */
  async eventRetention(options: ReadSignal = {}): Promise<EventRetention> {
    if (!this.isNamespaceChecked) await this.checkNamespace("eventRetention");
    options.signal?.throwIfAborted();
    const exists = await execPipeline(this.ctx, "eventRetention", (p) => {
      for (const keys of this.bucketKeys) p.exists(keys.events);
    });
    const streams = this.bucketKeys.filter((_, b) => Number(exists[b]) === 1);
    options.signal?.throwIfAborted();
    const infos = (await execPipeline(this.ctx, "eventRetention", (p) => {
      for (const keys of streams) p.xinfo("STREAM", keys.events);
    })) as unknown[][];
    let completeFrom: number | null = null;
    for (const info of infos) {
      const field = (name: string): unknown => info[info.indexOf(name) + 1];
      if (Number(field("entries-added")) <= Number(field("length"))) continue;
      const first = field("first-entry") as [string, string[]] | null;
      // Everything trimmed: complete only after the last id it gave out.
      const ms = first ? Number(first[0].split("-")[0]) : Number(String(field("last-generated-id")).split("-")[0]) + 1;
      completeFrom = completeFrom === null ? ms : Math.max(completeFrom, ms);
    }
    return { retentionDays: this.retention.days, retainedFrom: completeFrom === null ? null : new Date(completeFrom) };
  }

  /**
   * Folds new events into the read models (see projector.ts); the console and the sweeper run it
   * on an interval. Once caught up, it also compacts the days that closed since the last time
   * (nothing to do, and no round trip, on every other call), so day stats never wait for a
   * 30-day chart to be opened and never outlive the hours they are summed from uncompacted.
   */
  async project(): Promise<ProjectResult> {
    if (!this.isNamespaceChecked) await this.checkNamespace("project");
    const result = await this.projector.project();
    const now = Date.now();
    if (result.isCaughtUp && (hasDaysToCompact(now, this.compactedDays) || hasStoreWideToSum("h", now, this.storeWideHours) || hasStoreWideToSum("d", now, this.storeWideDays))) {
      await this.compactClosed(parseTimeReply(await this.client.time()));
    }
    return result;
  }

  /** How far the read models lag behind the events: the age of the oldest event not projected yet, on the store's clock. */
  async projectionLag(): Promise<{ lagMs: number }> {
    if (!this.isNamespaceChecked) await this.checkNamespace("projectionLag");
    return this.projector.lag();
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

  /**
   * Events under a prefix per hour or day, from the `g|` / `gh|` fields of the hour (and day) stats
   * hashes (projector.ts). Covered from the latest moment any bucket started counting per group,
   * rounded up to its hour: that hour's hash holds events of before too.
   */
  async prefixStats(query: PrefixStatsQuery): Promise<PrefixStats> {
    const q = parseOrThrow(ZPrefixStatsQuery, query, "prefixStats");
    if (!isPrefixServedByGroups(q.prefix)) throw new LeaseError(`prefixStats: "${q.prefix}" is deeper than the prefix groups (${PREFIX_GROUP_DEPTH} segments)`);
    if (!this.isNamespaceChecked) await this.checkNamespace("prefixStats");
    q.signal?.throwIfAborted();
    if (q.from.getTime() > q.to.getTime()) throw new LeaseError("prefixStats: from must not be after to");
    const projected = await this.projector.project(READ_CATCH_UP_ROUNDS, { backfill: false });
    const marks = await execPipeline(this.ctx, "prefixStats", (p) => {
      p.time();
      for (const keys of this.bucketKeys) p.hget(keys.proj, PREFIX_GROUPS_FIELD);
    });
    const nowMs = parseTimeReply(marks[0]);
    let coveredFromMs = 0;
    for (const mark of marks.slice(1)) {
      // No mark yet: nothing projected since this version counts per group; events projected from now on are.
      const fromMs = mark == null ? nowMs : Number(mark);
      if (fromMs > 0) coveredFromMs = Math.max(coveredFromMs, Math.ceil(fromMs / HOUR_MS) * HOUR_MS);
    }
    q.signal?.throwIfAborted();
    if (q.bucketMs === DAY_MS && projected.isCaughtUp) await compactClosedDays(this.ctx, this.bucketKeys, nowMs, this.compactedDays);
    const buckets = await readStats(this.ctx, this.namespace, this.bucketKeys, { from: q.from, to: q.to, bucketMs: q.bucketMs }, nowMs, q.prefix);
    return { buckets, coveredFrom: coveredFromMs > 0 ? new Date(coveredFromMs) : null };
  }

  async stats(query: StatsQuery): Promise<StatsBucket[]> {
    const q = parseOrThrow(ZStatsQuery, query, "stats");
    if (!this.isNamespaceChecked) await this.checkNamespace("stats");
    q.signal?.throwIfAborted(); // a request gone away starts no Redis work
    if (q.from.getTime() > q.to.getTime()) throw new LeaseError("stats: from must not be after to");
    const projected = await this.projector.project(READ_CATCH_UP_ROUNDS, { backfill: false });
    if (q.bucketMs !== DAY_MS) return readStats(this.ctx, this.namespace, this.bucketKeys, q);
    const nowMs = parseTimeReply(await this.client.time());
    // Usually nothing to do (the sweeper compacts each day as it closes); after a pause, a bounded catch-up.
    if (projected.isCaughtUp) await compactClosedDays(this.ctx, this.bucketKeys, nowMs, this.compactedDays);
    return readStats(this.ctx, this.namespace, this.bucketKeys, q, nowMs);
  }

  /**
   * Compacts closed days' hour stats into day hashes, and sums closed hours and days into
   * store-wide sums (stats.ts), a bounded number per call; project() does it too, as each day and hour
   * closes. Returns how many hashes and sums were written and how many closed days and hours still wait.
   * Needs the events projected, not the live indexes' backfill.
   */
  async compactDayStats(): Promise<CompactResult> {
    if (!this.isNamespaceChecked) await this.checkNamespace("compactDayStats");
    const { isCaughtUp } = await this.projector.project(PROJECT_ROUNDS, { backfill: false });
    if (!isCaughtUp) return { compacted: 0, pending: 0 };
    return this.compactClosed(parseTimeReply(await this.client.time()));
  }

  /** The closed days' day hashes, then the closed hours' and days' store-wide sums (stats.ts). */
  private async compactClosed(nowMs: number): Promise<CompactResult> {
    const results = [
      await compactClosedDays(this.ctx, this.bucketKeys, nowMs, this.compactedDays),
      await compactStoreWide(this.ctx, this.namespace, this.bucketKeys, "h", nowMs, this.storeWideHours),
      await compactStoreWide(this.ctx, this.namespace, this.bucketKeys, "d", nowMs, this.storeWideDays),
    ];
    return { compacted: results.reduce((n, r) => n + r.compacted, 0), pending: results.reduce((n, r) => n + r.pending, 0) };
  }

  async renewalSlack(query: RenewalSlackQuery): Promise<RenewalSlackRow[]> {
    const q = parseRenewalSlackQuery(query);
    if (!this.isNamespaceChecked) await this.checkNamespace("renewalSlack");
    return this.readSlackRows(q.from, q.to, q.prefix);
  }

  /**
   * TTL advice for everything under `prefix` over the window (default: the last hour on the
   * store's clock). Slack comes from the per-hour hashes; counts and hold durations from the
   * window's terminal and renew_failed events, read newest first up to ADVICE_EVENTS_CAP
   * (`isPartial` says when the cap cut the scan short).
   */
  async ttlAdvice(query?: TtlAdviceQuery): Promise<TtlAdviceReport> {
    if (!this.isNamespaceChecked) await this.checkNamespace("ttlAdvice");
    const now = query?.to === undefined ? new Date(parseTimeReply(await this.client.time())) : new Date(0);
    const window = resolveAdviceWindow(query, now);
    const slackRows = await this.readSlackRows(window.from, window.to, window.prefix);
    const tallies = new Map<string, EventTally>();
    let read = 0;
    let cursor: string | undefined;
    let isPartial = false;
    do {
      const page = await this.events({
        ...(window.prefix ? { prefix: window.prefix } : {}),
        kinds: ADVICE_EVENT_KINDS,
        from: window.from,
        to: window.to,
        limit: 1_000,
        ...(cursor ? { cursor } : {}),
        ...(query?.signal ? { signal: query.signal } : {}),
      });
      tallyEvents(page.items, tallies);
      read += page.items.length;
      cursor = page.nextCursor;
      isPartial = page.partial !== undefined;
    } while (cursor && read < ADVICE_EVENTS_CAP);
    return buildTtlAdviceReport(this.name, window, slackRows, tallies, cursor !== undefined || isPartial);
  }

  private async readSlackRows(from: Date, to: Date, prefix: string | undefined): Promise<RenewalSlackRow[]> {
    const hours = slackHours(from, to).map((t) => t / SLACK_HOUR_MS);
    const replies = await execPipeline(this.ctx, "renewalSlack", (p) => {
      for (const hour of hours) for (const keys of this.bucketKeys) p.hgetall(buildSlackKey(keys, hour));
    });
    const rows: RenewalSlackRow[] = [];
    for (const hash of replies) {
      for (const [field, raw] of Object.entries((hash ?? {}) as Record<string, string>)) {
        // '<ttl>|<bucket>|<group>': the group last, as it may itself contain '|'.
        const match = /^(\d+)\|(\d+)\|(.*)$/s.exec(field);
        if (!match) continue;
        const [, ttl, bucket, group] = match;
        const index = Number(bucket);
        if (!isSlackGroupInPrefix(group!, prefix) || index >= SLACK_BUCKET_COUNT) continue;
        const histogram = emptySlackHistogram();
        histogram[index] = Number(raw);
        rows.push({ group: group!, ttlMs: Number(ttl), histogram });
      }
    }
    return mergeSlackRows(rows);
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
    // Each bucket's totals and expiry index change together in one script, so one MULTI per
    // bucket (one slot, as a cluster requires) reads a consistent pair, and sums of consistent
    // pairs keep the equation. A standalone server takes them all in one MULTI.
    const read = (p: ChainableCommander, keys: BucketKeys) => p.hgetall(keys.totals).zcard(keys.idx);
    const replies = isCluster(this.client)
      ? (await Promise.all(this.bucketKeys.map((keys) => execPipeline(this.ctx, "lifetimeCounts", (p) => read(p, keys), this.client.multi())))).flat()
      : await execPipeline(this.ctx, "lifetimeCounts", (p) => this.bucketKeys.forEach((keys) => read(p, keys)), this.client.multi());
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
   * hashes (no TTL). The projector completes them (the kinds the hot path does not count, the
   * hold histogram and sum), so the projection is caught up first, as for the other read models.
   * A standalone server is read in one MULTI, one moment of every bucket; a cluster per node.
   */
  async lifetimeTotals(): Promise<LifetimeTotals> {
    if (!this.isNamespaceChecked) await this.checkNamespace("lifetimeTotals");
    await this.projector.project(READ_CATCH_UP_ROUNDS, { backfill: false });
    const replies = await execPipeline(
      this.ctx,
      "lifetimeTotals",
      (p) => {
        for (const keys of this.bucketKeys) p.hgetall(keys.totals);
      },
      isCluster(this.client) ? undefined : this.client.multi(),
    );
    const totals = emptyLifetimeTotals();
    for (const hash of replies) addTotalsHash(totals, (hash ?? {}) as Record<string, string>);
    return totals;
  }

  /**
   * Lifetime hold and slack histograms per prefix group, from the per-bucket `groups` hashes (no
   * TTL): holds folded in by the projector (caught up first, as for lifetimeTotals), slack counted
   * by renew. A standalone server is read in one MULTI; a cluster per node.
   */
  async groupTotals(query: GroupTotalsQuery): Promise<GroupTotals> {
    const q = parseOrThrow(ZGroupTotalsQuery, query, "groupTotals");
    if (!this.isNamespaceChecked) await this.checkNamespace("groupTotals");
    await this.projector.project(READ_CATCH_UP_ROUNDS, { backfill: false });
    const replies = await execPipeline(
      this.ctx,
      "groupTotals",
      (p) => {
        for (const keys of this.bucketKeys) p.hgetall(keys.groups);
      },
      isCluster(this.client) ? undefined : this.client.multi(),
    );
    const hold = newHoldTally();
    const slack = newSlackTally();
    for (const hash of replies) addGroupsHash((hash ?? {}) as Record<string, string>, q.prefixDepth, hold, slack);
    return { hold: hold.top(q.maxGroups, true), slack: slack.top(q.maxGroups, false) };
  }

  async health(): Promise<StoreHealth> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no reply within ${HEALTH_TIMEOUT_MS} ms`)), HEALTH_TIMEOUT_MS);
      });
      await Promise.race([this.client.ping(), timeout]);
      const latencyMs = Math.round((performance.now() - started) * 100) / 100;
      // The lag is part of the answer only when it comes in time; a slow read leaves it out.
      const lag = await Promise.race([this.projector.lag().catch(() => null), timeout.catch(() => null)]);
      const health: StoreHealth = { store: this.name, kind: "redis", ok: true, latencyMs };
      if (lag) health.projectionLagMs = lag.lagMs;
      return health;
    } catch (error) {
      const wrapped = new RedisStoreError(this.name, "health check", error, this.lastConnectionError);
      return { store: this.name, kind: "redis", ok: false, error: wrapped.message };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The connection (each master's, on a cluster): used while commands await replies, idle
   * when ready with none; pending counts commands queued while disconnected. Read from
   * ioredis's own queues, on demand (pool gauges).
   */
  connectionUsage(): ConnectionUsage | null {
    const connections = isCluster(this.client) ? this.client.nodes("master") : [this.client];
    let used = 0;
    let idle = 0;
    let pending = 0;
    for (const connection of connections) {
      // offlineQueue is not in ioredis's typings; it is where commands wait for a connection.
      const queues = connection as unknown as { commandQueue?: { length: number }; offlineQueue?: { length: number } };
      const inFlight = queues.commandQueue?.length ?? 0;
      pending += queues.offlineQueue?.length ?? 0;
      if (connection.status !== "ready") continue;
      if (inFlight > 0) used++;
      else idle++;
    }
    if (this.client.status === "end") return null;
    return { used, idle, max: connections.length, pending };
  }

  /** Quits the connection only if this store created it; a caller's client stays theirs. */
  async close(): Promise<void> {
    this.stopWatchingReconnects();
    if (!this.isOwnClient) return;
    try {
      await this.client.quit();
    } catch {
      // Already disconnected: nothing left to close.
      this.client.disconnect();
    }
  }

  /**
   * The check of the namespace's bucket count and of the servers' eviction policy (see the
   * options), before the first operation and again after a reconnect. Concurrent calls share one
   * check; a connection error leaves it to the next call.
   */
  private async checkNamespace(operation: string): Promise<void> {
    if (this.misconfiguration) throw this.misconfiguration;
    if (this.memoryPolicyRefusal && !this.isMemoryPolicyCheckDue()) throw this.memoryPolicyRefusal;
    this.namespaceCheck ??= this.runNamespaceCheckThroughReshard(operation).finally(() => {
      this.namespaceCheck = null;
    });
    await this.namespaceCheck;
  }

  /**
   * The check reads keys on every master; on a cluster in the middle of a reshard a read can meet a
   * slot that is moving (MOVED, ASK, TRYAGAIN, or a pipeline whose keys a moved slot now splits).
   * That says nothing about the namespace: the check runs again once ioredis has the new slot map.
   */
  private async runNamespaceCheckThroughReshard(operation: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.runNamespaceCheck(operation);
      } catch (error) {
        if (attempt >= NAMESPACE_CHECK_RESHARD_RETRIES || !isSlotMovingError(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
      }
    }
  }

  /** `operation`: the call that needs the check, named in a connection error. */
  private async runNamespaceCheck(operation: string): Promise<void> {
    const epoch = this.checkEpoch;
    const [conflict] = await Promise.all([
      this.isBucketCountChecked ? null : claimBucketCount(this.ctx, this.namespace, this.buckets, operation, this.hasPassedBucketCountCheck),
      this.checkServers(operation).catch((error: unknown) => {
        // A refusal is thrown below, after a bucket count mismatch (which outlives it) is recorded.
        if (!(error instanceof LeaseError && error === this.memoryPolicyRefusal)) throw error;
      }),
    ]);
    if (conflict) this.refuseOtherBucketCount(conflict.recorded, conflict.where);
    if (this.memoryPolicyRefusal) throw this.memoryPolicyRefusal;
    // A reconnect during the check: what it read may be from before; the next call checks again.
    if (epoch !== this.checkEpoch) return;
    this.isBucketCountChecked = true;
    this.hasPassedBucketCountCheck = true;
    this.isNamespaceChecked = true;
  }

  /** Sets and throws the misconfiguration of a namespace recorded with another bucket count (`where`: which record says so). */
  private refuseOtherBucketCount(recorded: string, where: string): void {
    if (recorded === "") return;
    this.misconfiguration = new LeaseError(
      `redis store "${this.name}": namespace "${this.namespace}" uses ${recorded} buckets (recorded in ${where}), this store was given ${this.buckets}; ` +
        "every process sharing a namespace must use the same buckets (or another namespace)",
      "misconfigured",
    );
    this.isNamespaceChecked = false;
    throw this.misconfiguration;
  }

  /** The next operation checks the namespace and the servers again. */
  private invalidateChecks(): void {
    this.checkEpoch++;
    this.isNamespaceChecked = false;
    this.isBucketCountChecked = false;
  }

  private isMemoryPolicyCheckDue(): boolean {
    return performance.now() - this.memoryPolicyCheckedAt >= this.memoryPolicyCheckMs;
  }

  /**
   * Reads every master's eviction policy and persistence: refuses operations (throws, and every
   * operation throws) while one may evict lock keys, lifts a refusal once none does, and warns
   * once per server that runs without an append-only file.
   */
  private async checkServers(operation: string): Promise<void> {
    const { servers, unreachable } = await readServerSettings(this.ctx, operation);
    for (const server of servers) this.warnIfNotDurable(server);
    const evicting = this.allowEvictingMemoryPolicy ? undefined : servers.find((s) => s.memoryPolicy !== null && s.memoryPolicy !== "noeviction");
    // A master that did not answer is read again by the next sweep (and once it reconnects).
    if (unreachable.length === 0) this.memoryPolicyCheckedAt = performance.now();
    if (evicting) {
      const where = servers.length > 1 ? `cluster master ${evicting.node}` : "the server";
      this.memoryPolicyRefusal = new LeaseError(
        `redis store "${this.name}": ${where}'s maxmemory-policy is ${evicting.memoryPolicy}, which can evict lock keys and end leases silently; ` +
          "set it to noeviction (on every master), or pass allowEvictingMemoryPolicy: true to accept that",
        "misconfigured",
      );
      this.isNamespaceChecked = false;
      throw this.memoryPolicyRefusal;
    }
    this.memoryPolicyRefusal = null;
  }

  private warnIfNotDurable(server: ServerSettings): void {
    if (server.isAppendOnly !== false || this.warned.has(`no_persistence ${server.node}`)) return;
    this.warned.add(`no_persistence ${server.node}`);
    this.onWarning({
      store: this.name,
      code: "no_persistence",
      message:
        `redis store "${this.name}": ${server.node} runs without an append-only file (appendonly no): a restart loses the leases and ` +
        "fencing tokens written since its last snapshot, if it takes any, and tokens issued after such a loss are only as monotonic as that server's clock",
    });
  }

  private isBucketStreamRead(q: EventQuery): boolean {
    const kinds = q.kinds ?? [];
    const isKindStreamRead = kinds.length > 0 && kinds.every((kind) => KIND_STREAM_KINDS.includes(kind));
    return !(q.resource || q.owner || q.task || q.leaseId || q.fencingToken || isKindStreamRead);
  }

  /**
   * Where an event query reads, most selective index first: a resource's history list (one
   * bucket); an owner's or a task's id streams (one per bucket, with each bucket's oldest
   * retained id and whether its id streams reach its projection cursor); for a lease id or token, the
   * grants hashes of the window's days name the resource, whose history is then read; the
   * per-kind streams when every kind asked for has one; else the bucket streams.
   */
  private async planEventSources(q: EventQuery, budget: ReadBudget): Promise<EventSourcePlan> {
    const historyOf = (resource: string) => {
      const bucket = bucketOf(resource, this.buckets);
      const keys = this.bucketKeys[bucket]!;
      return { listKey: buildEvidsKey(keys, resource), streamKey: keys.events, bucket };
    };
    if (q.resource) return { idLists: [historyOf(q.resource)] };
    if (q.owner !== undefined || q.task !== undefined) {
      const [field, value] = q.owner !== undefined ? (["owner", q.owner] as const) : (["task", q.task!] as const);
      budget.checkpoint();
      const replies = await execPipeline(this.ctx, "events", (p) => {
        for (const keys of this.bucketKeys) {
          p.hmget(keys.proj, "last", "ids");
          p.xrange(keys.events, "-", "+", "COUNT", 1);
        }
      });
      budget.spend(this.bucketKeys.length);
      let isIndexBuilding = false;
      const idStreams = this.bucketKeys.map((keys, bucket) => {
        const [last, ids] = (replies[2 * bucket] as (string | null)[] | null) ?? [];
        if ((last ?? "") !== (ids ?? "")) isIndexBuilding = true;
        const oldest = (replies[2 * bucket + 1] as [string, string[]][] | null)?.[0]?.[0] ?? null;
        return { key: buildIdStreamKey(keys, field, value), eventsKey: keys.events, bucket, retainedFrom: oldest };
      });
      return { idStreams, isIndexBuilding };
    }
    if (q.leaseId !== undefined || q.fencingToken !== undefined) {
      return { idLists: (await this.findGrantResources(q, budget)).map(historyOf) };
    }
    const kinds = [...new Set(q.kinds ?? [])];
    if (kinds.length > 0 && kinds.every((kind) => KIND_STREAM_KINDS.includes(kind))) {
      return { streams: this.bucketKeys.flatMap((keys, bucket) => kinds.map((kind) => ({ key: buildKindStreamKey(keys, kind), bucket }))) };
    }
    return { streams: this.bucketKeys.map((keys, bucket) => ({ key: keys.events, bucket })) };
  }

  /** The resources a lease id or token was seen on, from the grants hashes of the query's days (at most as many as they keep). */
  private async findGrantResources(q: EventQuery, budget: ReadBudget): Promise<string[]> {
    const lastDay = Math.floor((q.to?.getTime() ?? Date.now() + DAY_MS) / DAY_MS);
    const keptDays = Math.ceil(EVIDS_TTL_S / 86_400);
    const firstDay = Math.max(Math.floor((q.from?.getTime() ?? 0) / DAY_MS), lastDay - keptDays);
    const fields = [...(q.leaseId !== undefined ? [`l:${q.leaseId}`] : []), ...(q.fencingToken !== undefined ? [`t:${q.fencingToken}`] : [])];
    budget.checkpoint();
    const replies = (await execPipeline(this.ctx, "events", (p) => {
      for (let day = firstDay; day <= lastDay; day++) for (const keys of this.bucketKeys) p.hmget(buildGrantsKey(keys, day), ...fields);
    })) as (string | null)[][];
    budget.spend(replies.length);
    const resources = new Set<string>();
    // With both filters, the resource must be the one each of them names.
    for (const reply of replies) {
      const found = (reply ?? []).filter((r): r is string => r !== null);
      if (found.length === fields.length && found.every((r) => r === found[0])) resources.add(found[0]!);
    }
    return [...resources];
  }

  /**
   * `leaseId`: the lease id whose note the script reads and writes (KEYS[3]), when it names one.
   * `moreKeys`: keys after the shared resource KEYS, for scripts that take more (renew's slack hash).
   */
  private async callResourceScript(
    operation: LeaseOperation,
    resource: string,
    extra: readonly (string | number)[],
    leaseId?: string,
    moreKeys?: (keys: BucketKeys) => string[],
  ) {
    if (!this.isNamespaceChecked) await this.checkNamespace(operation);
    const bucket = bucketOf(resource, this.buckets);
    const bucketKeys = this.bucketKeys[bucket]!;
    const keys = buildResourceScriptKeys(bucketKeys, resource, leaseId);
    if (moreKeys) keys.push(...moreKeys(bucketKeys));
    keys.push(bucketKeys.proj);
    const reply = await callScript(this.ctx, LEASE_SCRIPTS[operation], keys, [resource, this.eventsMaxLen, ...extra]);
    return { reply, bucket };
  }

  private async recordOneEvent(operation: LeaseOperation, resource: string, args: readonly (string | number)[]): Promise<LeaseEvent> {
    const { reply, bucket } = await this.callResourceScript(operation, resource, args);
    // ["recorded", events]
    const event = this.toEvents(bucket, readScriptReply(reply, operation)[1]).at(-1);
    if (!event) throw new LeaseError(`redis store "${this.name}": ${operation} recorded no event`, "store_error");
    return event;
  }

  /** Records one lapsed lease's expiry (nothing if it was renewed, ended or recorded meanwhile); 1 if it did. */
  private async expireOne(bucket: number, resource: string): Promise<number> {
    const bucketKeys = this.bucketKeys[bucket]!;
    const keys = [...buildResourceScriptKeys(bucketKeys, resource), bucketKeys.proj];
    const reply = await callScript(this.ctx, LEASE_SCRIPTS.expire, keys, [resource, this.eventsMaxLen]);
    // ["expired", events]
    return this.toEvents(bucket, readScriptReply(reply, "expire")[1]).length;
  }

  /** Script reply events → LeaseEvents, in the order recorded: an operation's own event comes last (after any expiry it recorded on the way). */
  private toEvents(bucket: number, events: unknown): LeaseEvent[] {
    return replyEventsToRaw(events).flatMap((r) => toLeaseEvent(this.name, bucket, r) ?? []);
  }
}

/** Warnings already emitted by this process: stores of one process on one server report it once. */
const emittedWarnings = new Set<string>();

/** Tries of the namespace check that meets a moving slot (25 ms, doubling: about 1.5 s in all). */
const NAMESPACE_CHECK_RESHARD_RETRIES = 6;

/** A reply that only says a slot is moving between masters (its message, or its cause's). */
function isSlotMovingError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (/^(MOVED|ASK|TRYAGAIN) |same slots allocation group|CLUSTERDOWN/m.test(e.message) || /: (MOVED|ASK|TRYAGAIN) /.test(e.message)) return true;
  }
  return false;
}

function emitProcessWarning(warning: StoreWarning): void {
  if (emittedWarnings.has(warning.message)) return;
  emittedWarnings.add(warning.message);
  process.emitWarning(warning.message, { type: "LeasewatchWarning", code: warning.code });
}

function toRefusal(reason: unknown): "not_owner" | "expired" {
  return reason === "expired" ? "expired" : "not_owner";
}

export { RedisStoreError };
