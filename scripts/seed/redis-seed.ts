import type { Redis } from "ioredis";
import { holdBucketIndex, resourcePrefix, type LeaseEventKind } from "@/lib/lease";
import { streamEntryToRaw } from "@/lib/lease/redis/codec";
import { buildHoldKeys, holdClass, holdsFromEntries } from "@/lib/lease/redis/held-at";
import { buildBucketKeys, buildKindStreamKey, buildResourceKeys, buildStatsKey } from "@/lib/lease/redis/keys";
import { EVIDS_TTL_S, FENCE_TTL_S, HOUR_TTL_S, INDEXED_EVENT_KINDS, MINUTE_TTL_S } from "@/lib/lease/redis/scripts";
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

const INDEXED_KINDS = new Set<string>(INDEXED_EVENT_KINDS);
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

function statsHash(stats: Map<string, StatsHash>, key: string, expireAt: number): StatsHash {
  let hash = stats.get(key);
  if (!hash) stats.set(key, (hash = { expireAt, fields: new Map() }));
  return hash;
}

function addStat(hash: StatsHash, field: string, by: number) {
  hash.fields.set(field, (hash.fields.get(field) ?? 0) + by);
}

/** The stream fields in the scripts' order, leaving out what a script would leave out. */
function toStreamFields(e: SyntheticEvent): string[] {
  const fields: Array<[string, string | undefined]> = [
    ["kind", e.kind],
    ["resource", e.resource],
    ["leaseId", e.leaseId],
    ["owner", e.owner],
    ["task", e.task],
    ["token", e.fencingToken],
    ["holdMs", e.holdMs === undefined ? undefined : String(Math.round(e.holdMs))],
    ["actor", e.actor],
    ["reason", e.reason],
    ["detail", e.detail ? JSON.stringify(e.detail) : undefined],
  ];
  return fields.flatMap(([k, v]) => (v === undefined ? [] : [k, v]));
}

async function flushPipeline(client: Redis, commands: Array<[string, ...(string | number)[]]>) {
  if (commands.length === 0) return;
  const results = await client.pipeline(commands).exec();
  commands.length = 0;
  const failed = results?.find(([error]) => error);
  if (failed?.[0]) throw failed[0];
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
  // A few thousand resources carry a million events: derive each one's keys once.
  const keysOf = new Map<string, ReturnType<typeof buildResourceKeys>>();
  for (const e of events) {
    let keys = keysOf.get(e.resource);
    if (!keys) keysOf.set(e.resource, (keys = buildResourceKeys(namespace, buckets, e.resource)));
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
    if (INDEXED_KINDS.has(e.kind)) commands.push(["xadd", buildKindStreamKey(keys, e.kind), "MAXLEN", "~", target.eventsMaxLen, id, ...fields]);
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
  for (const [b, tail] of last) {
    if (written0.get(b) === tail || !isCaughtUp.get(b)) continue;
    commands.push(["hset", buildBucketKeys(namespace, b).proj, "last", `${tail.ms}-${tail.seq}`]);
  }
  await flushPipeline(client, commands);
  return { written, skipped };
}

/** Per bucket: the projector's cursor (the last stream id folded into the read models), or null. */
async function readProjectionCursors(client: Redis, namespace: string, buckets: number): Promise<(string | null)[]> {
  const replies = await client.pipeline(Array.from({ length: buckets }, (_, b) => ["hget", buildBucketKeys(namespace, b).proj, "last"])).exec();
  return (replies ?? []).map(([, reply]) => (typeof reply === "string" ? reply : null));
}

/** Writes live leases exactly as the acquire script leaves them (lock with PX, lease hash, fence, indexes). */
export async function writeRedisLeases(target: RedisSeedTarget, leases: Iterable<SyntheticLease>, nowMs: number): Promise<number> {
  const { client, namespace, buckets } = target;
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
    commands.push(["zadd", keys.acq, l.acquiredAt, l.resource]);
    commands.push(["zadd", keys.names, 0, l.resource]);
    written += 1;
    if (commands.length >= PIPELINE_BATCH) await flushPipeline(client, commands);
  }
  await flushPipeline(client, commands);
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
