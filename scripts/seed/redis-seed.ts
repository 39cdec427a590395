import type { Redis } from "ioredis";
import { holdBucketIndex, type LeaseEventKind, resourcePrefix } from "@leasewatch/lease";
import {
  addGroupCounts,
  bucketOf,
  buildBucketKeys,
  buildEvidsKey,
  buildGrantsKey,
  buildHoldKeys,
  buildHourContentionKey,
  buildIdStreamKey,
  buildKindStreamKey,
  buildResourceKeys,
  buildStatsKey,
  EVIDS_TTL_S,
  FENCE_TTL_S,
  GROUP_TOTALS_DEPTH,
  holdClass,
  holdsFromEntries,
  HOUR_TTL_S,
  KIND_STREAM_KINDS,
  MINUTE_TTL_S,
  PREFIX_GROUPS_FIELD,
  rawToStreamFields,
  streamEntryToRaw,
} from "@leasewatch/lease/internal";
import type { SyntheticEvent } from "./history";

/**
 * Demo and benchmark data only: bulk writes that reproduce, key for key, what
 * the Redis store's scripts write (lib/lease/redis/scripts.ts and keys.ts) —
 * the bucket streams, the per-kind streams of rare kinds and each resource's
 * list of event ids (all under the same ids), the minute/hour
 * stats hashes with the same fields and expiries, the hold index (held-at.ts), and for live leases the lock
 * key, lease hash, fence key and the idx/acq/names indexes. Pipelined, because
 * a script call per event would take minutes for a million events.
 *
 * Stream ids carry the event time (`<ms>-<seq>`), exactly as the scripts ask
 * for `<NOW_MS>-*`, so the console reads backdated events at their real time.
 */
export interface RedisSeedTarget {
  client: Redis;
  namespace: string;
  buckets: number;
  /** Bucket stream cap (the store's eventsMaxLen). */
  eventsMaxLen: number;
  /** Length of each resource's list of recent event ids (the store's). */
  evidsMaxLen: number;
}

/** The kinds the projector copies into per-kind streams (contention included): a kind filter reads only those. */
const KIND_STREAMED = new Set<string>(KIND_STREAM_KINDS);
const PIPELINE_BATCH = 4_000;

export interface SyntheticLease {
  resource: string;
  leaseId: string;
  owner: string;
  task: string;
  fencingToken: string;
  acquiredAt: number;
  expiresAt: number;
  ttlMs: number;
  renewedAt: number;
  renewals: number;
}

/** One stats hash: when it expires (epoch seconds) and its counters, keyed by field (`acquired`, `hist:7`, `holdSum`, `cp:tenant_1:invoice-sync`…). */
interface StatsHash {
  expireAt: number;
  fields: Map<string, number>;
}

/** How many resources' keys resourceKeysCache holds before it starts over. */
const KEYS_CACHE_LIMIT = 100_000;

/**
 * A resource's keys, derived once while it is in the cache. A few thousand resources carry most
 * of a history's events, but each of a million live leases' resources comes once: the cache is
 * emptied when it reaches KEYS_CACHE_LIMIT rather than keeping every resource's keys (about a
 * kilobyte each) for the whole seed.
 */
function resourceKeysCache(namespace: string, buckets: number): (resource: string) => ReturnType<typeof buildResourceKeys> {
  const cache = new Map<string, ReturnType<typeof buildResourceKeys>>();
  return (resource) => {
    let keys = cache.get(resource);
    if (!keys) {
      if (cache.size >= KEYS_CACHE_LIMIT) cache.clear();
      cache.set(resource, (keys = buildResourceKeys(namespace, buckets, resource)));
    }
    return keys;
  };
}

function statsHash(stats: Map<string, StatsHash>, key: string, expireAt: number): StatsHash {
  let hash = stats.get(key);
  if (!hash) stats.set(key, (hash = { expireAt, fields: new Map() }));
  return hash;
}

function addStat(hash: StatsHash, field: string, by: number) {
  hash.fields.set(field, (hash.fields.get(field) ?? 0) + by);
}

/** An expiry's detail as record_expiry in the scripts encodes it (expiredAt is the lease hash's string). */
function expiryDetail(e: SyntheticEvent): string {
  return JSON.stringify({ renewals: e.renewals ?? 0, expiredAt: String(Math.round(e.expiredAt ?? e.at)), recordedBy: "sweep" });
}

/** The stream entry fields the scripts would write for this event (packed, see rawToStreamFields). */
export function toStreamFields(e: SyntheticEvent): string[] {
  return rawToStreamFields({
    kind: e.kind,
    resource: e.resource,
    leaseId: e.leaseId,
    owner: e.owner,
    task: e.task,
    token: e.fencingToken,
    holdMs: e.holdMs === undefined ? undefined : String(Math.round(e.holdMs)),
    actor: e.actor,
    reason: e.reason,
    detail: e.detail ? JSON.stringify(e.detail) : e.kind === "expired" ? expiryDetail(e) : undefined,
  });
}

async function flushPipeline(client: Redis, commands: Array<[string, ...(string | number)[]]>) {
  if (commands.length === 0) return;
  const results = await client.pipeline(commands).exec();
  commands.length = 0;
  const failed = results?.find(([error]) => error);
  if (failed?.[0]) throw failed[0];
}

/** Connections a bulk seed writes over side by side (see LaneWriter). */
const LANES = 8;
const LANE_BATCH = 2_000;

/**
 * Pipelines over several connections at once. A busy shared Redis serves each connection a
 * slice of every event-loop turn, so one connection waiting on its pipeline's reply leaves most
 * of the server's turns unused (measured: 8 pipelines of 4 000 SETs took 8.5 s one after the
 * other, 1.3 s over 8 connections). Commands go to a lane by their key, so the writes to one key
 * (the appends to a stream, above all) keep their order; drain() waits for everything sent.
 */
class LaneWriter {
  private readonly queues: Array<Array<[string, ...(string | number)[]]>>;
  private readonly inFlight: Array<Promise<void> | null>;
  private failure: Error | undefined;
  private constructor(private readonly clients: Redis[]) {
    this.queues = clients.map(() => []);
    this.inFlight = clients.map(() => null);
  }

  static open(client: Redis): LaneWriter {
    return new LaneWriter(Array.from({ length: LANES }, () => client.duplicate()));
  }

  /** Queues a command on its key's lane; returns a promise to await only when that lane had to wait. */
  push(command: [string, ...(string | number)[]]): Promise<void> | undefined {
    const lane = bucketOf(String(command[1]), this.clients.length);
    const queue = this.queues[lane]!;
    queue.push(command);
    return queue.length >= LANE_BATCH ? this.send(lane) : undefined;
  }

  private async send(lane: number): Promise<void> {
    const previous = this.inFlight[lane];
    // One pipeline in flight per lane: the next one fills meanwhile.
    if (previous) await previous;
    if (this.failure) throw this.failure;
    const queue = this.queues[lane]!;
    if (queue.length === 0) return;
    const sent: Promise<void> = flushPipeline(this.clients[lane]!, queue.splice(0)).then(
      () => {
        if (this.inFlight[lane] === sent) this.inFlight[lane] = null;
      },
      (error: unknown) => {
        // Kept, not thrown here: the next send or drain() reports it.
        this.failure ??= error instanceof Error ? error : new Error(String(error));
      },
    );
    this.inFlight[lane] = sent;
  }

  async drain(): Promise<void> {
    await Promise.all(this.clients.map((_, lane) => this.send(lane)));
    await Promise.all(this.inFlight);
    if (this.failure) throw this.failure;
  }

  close(): void {
    for (const client of this.clients) client.disconnect();
  }
}

/** Per bucket: the id (`<ms>-<seq>`) of the newest entry of its event stream, for buckets that have one. */
export async function readStreamTails(client: Redis, namespace: string, buckets: number): Promise<Map<number, { ms: number; seq: number }>> {
  const tails = new Map<number, { ms: number; seq: number }>();
  const replies = await client
    .pipeline(Array.from({ length: buckets }, (_, b) => ["xrevrange", buildBucketKeys(namespace, b).events, "+", "-", "COUNT", "1"]))
    .exec();
  replies?.forEach(([, reply], b) => {
    const entry = (reply as Array<[string, string[]]> | null)?.[0];
    if (entry) {
      const [ms, seq] = entry[0].split("-").map(Number);
      tails.set(b, { ms: ms ?? 0, seq: seq ?? 0 });
    }
  });
  return tails;
}

/**
 * Appends `events` (in time order) to the bucket and resource streams and adds
 * their counters to the stats hashes.
 *
 * - mode "add" (demo backfill into a live namespace): counters are HINCRBY'd onto
 *   what is there; events at or before a bucket stream's last id are skipped
 *   (that time is already covered), so a re-run never double counts.
 * - mode "fresh" (benchmark into an empty namespace): counters are written with
 *   one HSET per hash.
 */
export async function writeRedisEvents(
  target: RedisSeedTarget,
  events: Iterable<SyntheticEvent>,
  mode: "add" | "fresh",
  nowMs: number,
): Promise<{ written: number; skipped: number }> {
  const { client, namespace, buckets } = target;
  const last = mode === "add" ? await readStreamTails(client, namespace, buckets) : new Map<number, { ms: number; seq: number }>();
  // The read models are written here directly, so the projector must start after the seeded
  // events: a bucket's cursor moves to its new tail if it had reached the old one (else the
  // projector still has live events to fold first, and would count the seeded ones again).
  const cursors = await readProjectionCursors(client, namespace, buckets);
  const isCaughtUp = new Map<number, boolean>(
    Array.from({ length: buckets }, (_, b) => {
      const tail = last.get(b);
      return [b, (tail ? `${tail.ms}-${tail.seq}` : null) === cursors[b]];
    }),
  );
  const written0 = new Map([...last]);
  /** Per bucket: the newest time the stream already covered before this run. */
  const covered = new Map<number, number>([...last].map(([b, tail]) => [b, tail.ms]));
  const stats = new Map<string, StatsHash>();
  const evidsKeys = new Set<string>();
  /** Per bucket: acquire times by lease id, so a seeded expiry's hold starts where its acquire was. */
  const holdStarts = new Map<number, Map<string, number>>();
  const commands: Array<[string, ...(string | number)[]]> = [];
  let written = 0;
  let skipped = 0;
  const keysOf = resourceKeysCache(namespace, buckets);
  for (const e of events) {
    const keys = keysOf(e.resource);
    if (e.at <= (covered.get(keys.bucket) ?? -1)) {
      skipped += 1;
      continue;
    }
    const tail = last.get(keys.bucket);
    const seq = tail && tail.ms === e.at ? tail.seq + 1 : 0;
    last.set(keys.bucket, { ms: e.at, seq });
    const id = `${e.at}-${seq}`;
    const fields = toStreamFields(e);
    commands.push(["xadd", keys.events, "MAXLEN", "~", target.eventsMaxLen, id, ...fields]);
    if (KIND_STREAMED.has(e.kind)) commands.push(["xadd", buildKindStreamKey(keys, e.kind), "MAXLEN", "~", target.eventsMaxLen, id, ...fields]);
    // Newest first, as the scripts LPUSH them.
    commands.push(["lpush", keys.evids, id]);
    evidsKeys.add(keys.evids);
    written += 1;
    // The hold index heldAt() reads, as the projector would fold it — for the buckets whose cursor
    // moves past the seeded events below (the projector folds the others' itself).
    if (isCaughtUp.get(keys.bucket)) {
      let starts = holdStarts.get(keys.bucket);
      if (!starts) holdStarts.set(keys.bucket, (starts = new Map()));
      const hk = buildHoldKeys(keys);
      const { holds, acquired, ended } = holdsFromEntries([streamEntryToRaw([id, fields])], starts);
      for (const [leaseId, ms] of acquired) commands.push(["hset", hk.open, leaseId, ms]);
      if (ended.length > 0) commands.push(["hdel", hk.open, ...ended]);
      for (const h of holds) {
        const k = holdClass(h.e - h.s);
        commands.push(["zadd", hk.classKey(k), h.e, JSON.stringify(h)], ["sadd", hk.classes, k]);
      }
    }

    // The same counters count() in the scripts writes, per minute and per hour.
    const minute = Math.floor(e.at / 60_000);
    const hour = Math.floor(e.at / 3_600_000);
    // Each hash expires its lifetime after its minute / hour ends, as the scripts set it.
    const hashes = [statsHash(stats, buildStatsKey(keys, "h", hour), (hour + 1) * 3_600 + HOUR_TTL_S)];
    // Minute hashes live 48 h in the real store; older ones would already be gone.
    const minuteExpireAt = (minute + 1) * 60 + MINUTE_TTL_S;
    if (minuteExpireAt > nowMs / 1000) hashes.push(statsHash(stats, buildStatsKey(keys, "m", minute), minuteExpireAt));
    for (const hash of hashes) {
      addStat(hash, e.kind, 1);
      if (e.holdMs !== undefined) {
        addStat(hash, `hist:${holdBucketIndex(e.holdMs)}`, 1);
        addStat(hash, "holdSum", Math.round(e.holdMs));
      }
      if (e.renewals) addStat(hash, "renewed", e.renewals);
      // Only the 3-segment prefix is counted; the store sums shallower depths on read.
      if (e.kind === ("contended" satisfies LeaseEventKind)) addStat(hash, `cp:${resourcePrefix(e.resource, 3)}`, 1);
    }
    // Per prefix group, in the hour's hash only (as the projector counts them).
    addGroupCounts(buildStatsKey(keys, "h", hour), e.kind, e.resource, e.holdMs, (key, field, n) => addStat(stats.get(key)!, field, n));
    // The hour's contention per name again, beside its hash (as the projector writes it).
    if (e.kind === ("contended" satisfies LeaseEventKind)) {
      addStat(statsHash(stats, buildHourContentionKey(keys, hour), (hour + 1) * 3_600 + HOUR_TTL_S), `cp:${resourcePrefix(e.resource, 3)}`, 1);
    }
    if (commands.length >= PIPELINE_BATCH) await flushPipeline(client, commands);
  }
  await flushPipeline(client, commands);

  for (const key of evidsKeys) {
    commands.push(["ltrim", key, 0, target.evidsMaxLen - 1], ["expire", key, EVIDS_TTL_S]);
    if (commands.length >= PIPELINE_BATCH) await flushPipeline(client, commands);
  }
  for (const [key, { expireAt, fields }] of stats) {
    if (mode === "fresh") commands.push(["hset", key, ...[...fields].flatMap(([f, v]) => [f, v])]);
    else for (const [f, v] of fields) commands.push(["hincrby", key, f, v]);
    commands.push(["expireat", key, expireAt]);
    if (commands.length >= PIPELINE_BATCH) await flushPipeline(client, commands);
  }
  await flushPipeline(client, commands);
  // A bucket that never projected anything counts per group from its first event (projector.ts).
  cursors.forEach((cursor, b) => {
    if (cursor === null) commands.push(["hsetnx", buildBucketKeys(namespace, b).proj, PREFIX_GROUPS_FIELD, 0]);
  });
  for (const [b, tail] of last) {
    if (written0.get(b) === tail || !isCaughtUp.get(b)) continue;
    commands.push(["hset", buildBucketKeys(namespace, b).proj, "last", `${tail.ms}-${tail.seq}`]);
  }
  await flushPipeline(client, commands);
  return { written, skipped };
}

const HOT_PATH_TOTAL_KINDS = new Set<string>(["acquired", "released", "expired", "force_released"]);
const TERMINAL_KINDS = new Set<string>(["released", "expired", "force_released"]);
/** As the projector counts contention (projector.ts). */
const CONTENTION_PREFIX_DEPTH = 3;
const DAY_MS = 86_400_000;

export interface StreamSeedOptions {
  nowMs: number;
  /**
   * Folds the bucket streams into the read models until every bucket is caught up: the
   * store's own projector (RedisLeaseStore.project / projectHolds).
   */
  project: () => Promise<void>;
  /**
   * Events a bucket may take between projections. Kept well under the stream cap, so no event
   * is trimmed before the projector has folded it (default: a fifth of the cap).
   */
  projectEvery?: number;
  /** Called after each projection with the events written so far. */
  onProjected?: (written: number) => void;
  /**
   * Per bucket: the time (ms) from which its events go through the stream and the projector
   * (default: all of them). Earlier events are ones the capped stream would have trimmed by
   * the end (estimateStreamCutoffs): they are counted instead — see writeRedisStreamEvents.
   */
  streamFrom?: readonly number[];
}

/**
 * Per bucket, the time from which `margin` × the stream cap of its events remain, estimated from
 * a smaller `sample` history with the same rhythm (its events per bucket scaled to `events`).
 * Events before it are ones the capped stream trims anyway; the caller checks afterwards that
 * every stream is full (XLEN ≥ cap), which is what makes that true.
 */
export function estimateStreamCutoffs(
  sample: Iterable<SyntheticEvent>,
  target: Pick<RedisSeedTarget, "namespace" | "buckets" | "eventsMaxLen">,
  events: number,
  margin = 1.1,
): number[] {
  const times = Array.from({ length: target.buckets }, () => [] as number[]);
  const bucketOfResource = new Map<string, number>();
  let sampled = 0;
  for (const e of sample) {
    let b = bucketOfResource.get(e.resource);
    if (b === undefined) bucketOfResource.set(e.resource, (b = buildResourceKeys(target.namespace, target.buckets, e.resource).bucket));
    times[b]!.push(e.at);
    sampled += 1;
  }
  return times.map((ts) => {
    const expected = (ts.length / Math.max(1, sampled)) * events;
    const kept = (margin * target.eventsMaxLen) / Math.max(1, expected);
    if (kept >= 1 || ts.length === 0) return Number.NEGATIVE_INFINITY;
    return ts[Math.floor((1 - kept) * ts.length)]!;
  });
}

/**
 * Benchmark volume into an empty namespace, writing only what the hot-path scripts write per
 * event — the event appended to its bucket stream (capped as the store caps it) and the durable
 * lifetime counters (`totals`: acquired and the terminal kinds, renewals) — and letting the
 * store's own projector derive every read model from the streams, as it does live: listing
 * zsets, per-kind streams, per-resource / owner / task id lists, lease id and token → resource
 * hashes, minute and hour stats, the hold index, the per-group histograms and the rest of the
 * totals. The streams are projected every `projectEvery` events per bucket, so the stats count
 * every event even though only the capped tail stays in the streams.
 *
 * Events a bucket's capped stream would have trimmed by the end (before `streamFrom`) are not
 * appended: what the projector would have derived from them and kept is written directly,
 * with the projector's own fields — their counts in the stats hashes (hours still alive, and
 * minutes), the lifetime totals and per-group histograms, their entries in the per-kind
 * streams (same ids and fields, same cap), their lease id / token → resource hashes, and the
 * holds still open when the bucket's stream begins. Their ids in the per-resource, owner and
 * task lists are left out: those would name entries the stream no longer has.
 *
 * Two things the live store does by the clock are set here to what it would have left:
 * - Expiries. The projector sets a key's lifetime from the moment it projects; live, that is the
 *   moment of the key's newest event. After each projection the stats hashes get EXPIREAT
 *   (end of their minute / hour + their TTL: already-past ones are deleted, as they would be
 *   gone), and at the end the id lists and grants hashes get their newest event + EVIDS_TTL_S.
 * - Renewals. A renew only counts itself in `totals` (no event); the projector moves new
 *   renewals into the stats of the minute it runs in. Here each hold's renewals are counted
 *   into the stats of its end's minute and hour, and into `totals` and the cursor's
 *   `renewed` together, so the projector does not count them again at seeding time.
 */
export async function writeRedisStreamEvents(
  target: RedisSeedTarget,
  events: Iterable<SyntheticEvent>,
  options: StreamSeedOptions,
): Promise<{ written: number }> {
  const { client, namespace, buckets } = target;
  const projectEvery = Math.max(1, Math.min(options.projectEvery ?? Math.floor(target.eventsMaxLen / 5), Math.floor(target.eventsMaxLen / 2)));
  const bucketKeys = Array.from({ length: buckets }, (_, b) => buildBucketKeys(namespace, b));
  const last = new Map<number, { ms: number; seq: number }>();
  const sinceProjection = new Array<number>(buckets).fill(0);
  /** Per bucket: the hot path's counters since the last projection. */
  const totals = bucketKeys.map(() => new Map<string, number>());
  /** Stats hashes touched since the last projection: key → expireAt (s), and renewals to add. */
  const statsExpiry = new Map<string, number>();
  const statsRenewed = new Map<string, number>();
  /** Id lists and grants hashes: key → expireAt (s) after their newest event. */
  const listExpiry = new Map<string, number>();
  const lanes = LaneWriter.open(client);
  const keysOf = resourceKeysCache(namespace, buckets);
  let written = 0;
  const nowS = options.nowMs / 1000;
  const streamFrom = options.streamFrom ?? [];
  /** Counters of the events not streamed: key → field → n (stats hashes, totals, groups). */
  const counted = new Map<string, Map<string, number>>();
  const count = (key: string, field: string, n: number) => {
    let fields = counted.get(key);
    if (!fields) counted.set(key, (fields = new Map()));
    fields.set(field, (fields.get(field) ?? 0) + n);
  };
  /** Per bucket, the holds still open among the events not streamed (leaseId → acquired ms). */
  const openHolds = bucketKeys.map(() => new Map<string, number>());
  const isStreaming = bucketKeys.map((_, b) => !(Number.isFinite(streamFrom[b]) && streamFrom[b]! > Number.NEGATIVE_INFINITY));
  /** Grants of the events not streamed: key → fields, flushed in slices. */
  const grants = new Map<string, string[]>();
  let grantFields = 0;
  const flushGrants = async () => {
    for (const [key, fields] of grants) {
      for (let i = 0; i < fields.length; i += 2_000) await lanes.push(["hset", key, ...fields.slice(i, i + 2_000)]);
    }
    grants.clear();
    grantFields = 0;
  };

  const projectNow = async () => {
    await lanes.drain();
    await options.project();
    for (const [key, expireAt] of statsExpiry) {
      const renewed = statsRenewed.get(key);
      if (renewed && expireAt > nowS) await lanes.push(["hincrby", key, "renewed", renewed]);
      await lanes.push(["expireat", key, expireAt]);
    }
    statsExpiry.clear();
    statsRenewed.clear();
    for (const [b, fields] of totals.entries()) {
      for (const [field, n] of fields) await lanes.push(["hincrby", bucketKeys[b]!.totals, field, n]);
      const renewed = fields.get("renewed");
      // Counted into the stats above: the cursor takes them as projected.
      if (renewed) await lanes.push(["hincrby", bucketKeys[b]!.proj, "renewed", renewed]);
      fields.clear();
    }
    await lanes.drain();
    sinceProjection.fill(0);
    options.onProjected?.(written);
  };

  /** What the projector (and the hot path's counters) would have made of an event the stream then trimmed. */
  const countUnstreamed = (e: SyntheticEvent, keys: ReturnType<typeof buildResourceKeys>, id: string): Promise<void> | undefined => {
    const b = keys.bucket;
    const isTerminal = TERMINAL_KINDS.has(e.kind);
    const holdMs = Math.round(e.holdMs ?? 0);
    const minute = Math.floor(e.at / 60_000);
    const hour = Math.floor(minute / 60);
    const statsKeys: string[] = [];
    if ((minute + 1) * 60 + MINUTE_TTL_S > nowS) statsKeys.push(buildStatsKey(keys, "m", minute));
    if ((hour + 1) * 3_600 + HOUR_TTL_S > nowS) statsKeys.push(buildStatsKey(keys, "h", hour));
    for (const key of statsKeys) {
      if (isTerminal) {
        count(key, `${e.kind}:h${holdBucketIndex(holdMs)}`, 1);
        count(key, "holdSum", holdMs);
      } else {
        count(key, e.kind, 1);
        if (e.kind === "contended") count(key, `cp:${resourcePrefix(e.resource, CONTENTION_PREFIX_DEPTH)}`, 1);
      }
      if (e.renewals) count(key, "renewed", e.renewals);
    }
    if (statsKeys.length > 0 && (hour + 1) * 3_600 + HOUR_TTL_S > nowS) {
      addGroupCounts(buildStatsKey(keys, "h", hour), e.kind, e.resource, holdMs, count);
      // The hour's contention per name again, beside its hash, as the projector writes it.
      if (e.kind === "contended") count(buildHourContentionKey(keys, hour), `cp:${resourcePrefix(e.resource, CONTENTION_PREFIX_DEPTH)}`, 1);
    }
    const bk = bucketKeys[b]!;
    count(bk.totals, e.kind, 1);
    if (e.renewals) {
      count(bk.totals, "renewed", e.renewals);
      count(bk.proj, "renewed", e.renewals);
    }
    if (isTerminal) {
      const hb = holdBucketIndex(holdMs);
      count(bk.totals, `hold:h${hb}`, 1);
      count(bk.totals, "holdSum", holdMs);
      const group = resourcePrefix(e.resource, GROUP_TOTALS_DEPTH);
      count(bk.groups, `h|${hb}|${group}`, 1);
      count(bk.groups, `hs|${group}`, holdMs);
      openHolds[b]!.delete(e.leaseId);
    } else if (e.kind === "acquired") {
      openHolds[b]!.set(e.leaseId, e.at);
    }
    const day = Math.floor(e.at / DAY_MS);
    const grantsExpireAt = ((day + 1) * DAY_MS) / 1000 + EVIDS_TTL_S;
    if (grantsExpireAt > nowS) {
      const key = buildGrantsKey(keys, day);
      let fields = grants.get(key);
      if (!fields) grants.set(key, (fields = []));
      fields.push(`l:${e.leaseId}`, e.resource, `t:${e.fencingToken}`, e.resource);
      grantFields += 2;
      listExpiry.set(key, grantsExpireAt);
    }
    return KIND_STREAMED.has(e.kind) ? lanes.push(["xadd", buildKindStreamKey(keys, e.kind), "MAXLEN", "~", target.eventsMaxLen, id, ...toStreamFields(e)]) : undefined;
  };

  try {
  for (const e of events) {
    const keys = keysOf(e.resource);
    const b = keys.bucket;
    const tail = last.get(b);
    const seq = tail && tail.ms === e.at ? tail.seq + 1 : 0;
    last.set(b, { ms: e.at, seq });
    const id = `${e.at}-${seq}`;
    written += 1;
    if (!isStreaming[b] && e.at >= streamFrom[b]!) {
      isStreaming[b] = true;
      // The holds this bucket's stream begins inside of, as the projector would have left them open.
      const open = openHolds[b]!;
      if (open.size > 0) await lanes.push(["hset", buildHoldKeys(keys).open, ...[...open].flat()]);
      open.clear();
    }
    if (!isStreaming[b]) {
      const waiting = countUnstreamed(e, keys, id);
      if (waiting) await waiting;
      if (grantFields >= 200_000) await flushGrants();
      continue;
    }
    const waiting = lanes.push(["xadd", keys.events, "MAXLEN", "~", target.eventsMaxLen, id, ...toStreamFields(e)]);
    if (waiting) await waiting;

    const counters = totals[b]!;
    if (HOT_PATH_TOTAL_KINDS.has(e.kind)) counters.set(e.kind, (counters.get(e.kind) ?? 0) + 1);
    const minute = Math.floor(e.at / 60_000);
    const hour = Math.floor(minute / 60);
    const minuteKey = buildStatsKey(keys, "m", minute);
    const hourKey = buildStatsKey(keys, "h", hour);
    statsExpiry.set(minuteKey, (minute + 1) * 60 + MINUTE_TTL_S);
    statsExpiry.set(hourKey, (hour + 1) * 3_600 + HOUR_TTL_S);
    if (e.renewals) {
      counters.set("renewed", (counters.get("renewed") ?? 0) + e.renewals);
      statsRenewed.set(minuteKey, (statsRenewed.get(minuteKey) ?? 0) + e.renewals);
      statsRenewed.set(hourKey, (statsRenewed.get(hourKey) ?? 0) + e.renewals);
    }
    const listExpireAt = Math.floor(e.at / 1000) + EVIDS_TTL_S;
    listExpiry.set(buildEvidsKey(keys, e.resource), listExpireAt);
    if (e.owner) listExpiry.set(buildIdStreamKey(keys, "owner", e.owner), listExpireAt);
    if (e.task) listExpiry.set(buildIdStreamKey(keys, "task", e.task), listExpireAt);
    const day = Math.floor(e.at / DAY_MS);
    listExpiry.set(buildGrantsKey(keys, day), ((day + 1) * DAY_MS) / 1000 + EVIDS_TTL_S);

    if (++sinceProjection[b]! >= projectEvery) await projectNow();
  }
  await projectNow();
  await flushGrants();
  for (const [key, fields] of counted) {
    for (const [field, n] of fields) await lanes.push(["hincrby", key, field, n]);
    const expireAt = key.includes(":stats:m:") ? (Number(key.slice(key.lastIndexOf(":") + 1)) + 1) * 60 + MINUTE_TTL_S
      : key.includes(":stats:h:") || key.includes(":stats:hc:") ? (Number(key.slice(key.lastIndexOf(":") + 1)) + 1) * 3_600 + HOUR_TTL_S
      : undefined;
    if (expireAt !== undefined) await lanes.push(["expireat", key, expireAt]);
  }
  for (const [key, expireAt] of listExpiry) await lanes.push(["expireat", key, expireAt]);
  await lanes.drain();
  return { written };
  } finally {
    lanes.close();
  }
}

/** Per bucket: the projector's cursor (the last stream id folded into the read models), or null. */
async function readProjectionCursors(client: Redis, namespace: string, buckets: number): Promise<(string | null)[]> {
  const replies = await client.pipeline(Array.from({ length: buckets }, (_, b) => ["hget", buildBucketKeys(namespace, b).proj, "last"])).exec();
  return (replies ?? []).map(([, reply]) => (typeof reply === "string" ? reply : null));
}

/** Writes live leases exactly as the acquire and renew scripts leave them (lock with PX, lease hash, fence, expiry index; by default the listing zsets too). */
export async function writeRedisLeases(
  target: RedisSeedTarget,
  leases: Iterable<SyntheticLease>,
  nowMs: number,
  options: { readModels?: boolean } = {},
): Promise<number> {
  // Without read models (writeRedisStreamEvents), the projector lists the leases from their acquired events.
  const readModels = options.readModels ?? true;
  const { client, namespace, buckets } = target;
  const lanes = LaneWriter.open(client);
  const commands: Array<[string, ...(string | number)[]]> = [];
  let written = 0;
  for (const l of leases) {
    const keys = buildResourceKeys(namespace, buckets, l.resource);
    commands.push(["set", keys.lock, l.leaseId, "PX", Math.max(1, l.expiresAt - nowMs)]);
    commands.push([
      "hset",
      keys.lease,
      "leaseId", l.leaseId,
      "owner", l.owner,
      "task", l.task,
      "token", l.fencingToken,
      "acquiredAt", String(l.acquiredAt),
      "expiresAt", String(l.expiresAt),
      "ttlMs", String(l.ttlMs),
      "renewedAt", String(l.renewedAt),
      "renewals", String(l.renewals),
    ]);
    commands.push(["set", keys.fence, l.fencingToken, "EX", FENCE_TTL_S]);
    commands.push(["zadd", keys.idx, l.expiresAt, l.resource]);
    if (readModels) commands.push(["zadd", keys.acq, l.acquiredAt, l.resource], ["zadd", keys.names, 0, l.resource]);
    written += 1;
    for (const command of commands.splice(0)) await lanes.push(command);
  }
  try {
    await lanes.drain();
  } finally {
    lanes.close();
  }
  return written;
}

/** Deletes every key of `namespace` (SCAN + UNLINK). Never FLUSHDB: others share this Redis. */
export async function deleteRedisNamespace(client: Redis, namespace: string): Promise<number> {
  let cursor = "0";
  let deleted = 0;
  do {
    const [next, keys] = await client.scan(cursor, "MATCH", `${namespace}:*`, "COUNT", 2_000);
    cursor = next;
    if (keys.length > 0) deleted += await client.unlink(...keys);
  } while (cursor !== "0");
  return deleted;
}
