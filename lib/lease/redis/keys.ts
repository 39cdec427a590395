/**
 * Key layout of the Redis store.
 *
 * Every key one Lua script call touches carries the same hash tag `{b<n>}`, where n is
 * the resource's bucket, and is passed in KEYS (built here, never inside Lua). That keeps
 * each call inside one Redis Cluster slot, and gives the console a fixed set of per-bucket
 * indexes to read.
 *
 * Written by the operations themselves (the hot path, scripts.ts):
 *   <ns>:{b7}:lock:<resource>     string leaseId, PX ttl — the enforcement
 *   <ns>:{b7}:lease:<resource>    hash of lease metadata, no TTL (sweep needs it after the lock vanished)
 *   <ns>:{b7}:note:<leaseId>:<resource>  string per lease id: how its acquire was answered ('held' from the grant,
 *                                 or a refusal) and how it ended (tells "expired" from "not_owner", answers a call sent
 *                                 again as the first); lives for the lease's TTL plus a minute after its grant, last
 *                                 renewal or end (buildNoteKey)
 *   <ns>:{b7}:fence:<resource>    last fencing token, long TTL
 *   <ns>:{b7}:forced:<leaseId>    string: the force_released event that ended this lease (JSON), a year
 *                                 (forceReleasedEvent: an open audit entry is resolved from it, not from history)
 *   <ns>:{b7}:idx                 zset resource → expiresAt ms (sweep, "expires" sort, countActive)
 *   <ns>:{b7}:events              stream of every event in the bucket, capped; an entry is one field-value pair, its
 *                                 fields' letters and their values (EVENT_FIELD_LETTERS in codec.ts); entries
 *                                 written by earlier versions, a pair per field, read the same
 *   <ns>:{b7}:totals              hash of lifetime counts, no TTL: acquired, released, expired, force_released and
 *                                 renewed from the hot path; the other kinds, hold histogram and sum from the projector
 *   <ns>:{b7}:slack:<hour>        hash of renewal-slack counts '<ttl>|<bucket>|<group>' per epoch hour (15 days), by renew
 *   <ns>:{b7}:groups              hash of lifetime counts per prefix group, no TTL: 's|<slack bucket>|<slack group>' by
 *                                 renew; 'h|<hold bucket>|<group>' and 'hs|<group>' (hold ms) by the projector
 * Read models, derived from the events stream by the projector (projector.ts):
 *   <ns>:{b7}:proj                hash: the projection cursor (last applied stream id, renewals applied, when), and
 *                                 'ids': the last stream id folded into the ido/idt streams (behind 'last' only while
 *                                 the projector indexes history projected before those streams existed); 'gap' (set by
 *                                 the hot path) and 'relist' when events were trimmed unprojected (projector.ts)
 *   <ns>:{b7}:acq                 zset resource → acquiredAt ms ("held_longest" / "newest" sorts)
 *   <ns>:{b7}:names               zset of resources, all score 0 (lex ranges for prefix filters)
 *   <ns>:{b7}:evids:<resource>    list: ids of this resource's recent events, newest first
 *   <ns>:{b7}:events:<kind>       stream per rare kind (expired, lost, contended, …): same entries and ids
 *   <ns>:{b7}:ido:<owner>         stream: one entry per event of this owner in the bucket, under the event's own id,
 *                                 holding only its kind ('k'); capped like the bucket stream, expiring like evids.
 *                                 Owner filters range over it by id (time) and fetch just the page's entries
 *   <ns>:{b7}:idt:<task>          stream: the same per task
 *                                 (the earlier owner / task id lists, evo:/evt:, are no longer written and expire)
 *   <ns>:{b7}:lo:<owner>          zset resource → acquiredAt ms of the bucket's live leases of this owner (owner lists)
 *   <ns>:{b7}:lt:<task>           zset: the same per task. Kept by the projector (ZADD on acquired, ZREM on an end);
 *                                 built for leases acquired before they existed by a backfill whose progress is
 *                                 'live' in <ns>:{b7}:proj ("r:<last resource>" while it walks names, "done" after)
 *   <ns>:{b7}:grants:<day>        hash 'l:<leaseId>' / 't:<token>' → resource, per epoch day of the event (15 days):
 *                                 where a lease id or token filter finds its resource's history
 *   <ns>:{b7}:stats:m:<minute>    hash of counters per epoch minute (~48 h)
 *   <ns>:{b7}:stats:h:<hour>      hash of counters per epoch hour (~32 days); also per prefix group (prefix-groups.ts)
 *                                 'g|<kind>|<group>' and 'gh|<hold bucket>|<group>', counted since 'groups' (ms) in proj
 *   <ns>:{b7}:stats:hc:<hour>     hash: the hour's contention per name ('cp:<name>'), the same counts as in stats:h,
 *                                 written in the same step: a read not under a prefix takes the hour's counters by
 *                                 HMGET and these, not the per-group fields (stats.ts readBucketHashes)
 *   <ns>:{b7}:stats:d:<day>       hash of counters per epoch day, summed from a closed day's hours (62 days; stats.ts)
 *   <ns>:{b7}:holds:c<k> / open / classes   the hold index heldAt() reads (see held-at.ts)
 *   <ns>:{b7}:buckets             the namespace's bucket count this bucket's locks are written with, no TTL:
 *                                 set by a store's namespace check, compared by every acquire (namespace-check.ts)
 * Outside the buckets:
 *   <ns>:buckets                  the namespace's bucket count, set by the first store to use it, no TTL
 *   <ns>:stats:hj:<hour>          a closed hour's (day's) counters summed over every bucket, without the per-group
 *   <ns>:stats:dj:<day>           fields, as one JSON string (stats.ts compactStoreWide): a chart reads one per closed
 *                                 hour or day instead of one hash per bucket; lives as long as the buckets' hour (day) hashes
 *   <ns>:stats:hs:<hour>          the same sums as a hash, as earlier versions write them: read when the string is absent
 *   <ns>:stats:ds:<day>
 */

export interface BucketKeys {
  /** `<ns>:{b<n>}:` — per-resource keys are this plus `lock:` etc. */
  base: string;
  idx: string;
  acq: string;
  names: string;
  events: string;
  /** Prefix of the stats hashes: `m:<minute>` / `h:<hour>` follow. */
  stats: string;
  totals: string;
  /** Lifetime histograms per prefix group (see above and group-totals.ts in the store). */
  groups: string;
  proj: string;
  /** The bucket count this bucket's locks are written with (see namespace-check.ts). */
  bucketCount: string;
}

export interface ResourceKeys extends BucketKeys {
  lock: string;
  lease: string;
  fence: string;
  evids: string;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a (32 bit) over the UTF-8 bytes: cheap, stable across processes and versions. */
function hashResource(resource: string): number {
  let hash = FNV_OFFSET;
  // Every operation hashes its resource: ASCII (the usual case) is its own UTF-8, so it is
  // hashed without encoding; anything else goes through the encoder for the exact bytes.
  for (let i = 0; i < resource.length; i++) {
    const code = resource.charCodeAt(i);
    if (code > 0x7f) return hashUtf8(resource);
    hash = Math.imul(hash ^ code, FNV_PRIME);
  }
  return hash >>> 0;
}

function hashUtf8(resource: string): number {
  let hash = FNV_OFFSET;
  for (const byte of Buffer.from(resource, "utf8")) hash = Math.imul(hash ^ byte, FNV_PRIME);
  return hash >>> 0;
}

export function bucketOf(resource: string, buckets: number): number {
  return hashResource(resource) % buckets;
}

/** Where a namespace records its bucket count (see namespace-check.ts). */
export function buildNamespaceBucketsKey(namespace: string): string {
  return `${namespace}:buckets`;
}

/** Where bucket `bucket` of a namespace records the bucket count its locks are written with. */
export function buildBucketCountKey(namespace: string, bucket: number): string {
  return `${namespace}:{b${bucket}}:buckets`;
}

export function buildBucketKeys(namespace: string, bucket: number): BucketKeys {
  const base = `${namespace}:{b${bucket}}:`;
  return {
    base,
    idx: `${base}idx`,
    acq: `${base}acq`,
    names: `${base}names`,
    events: `${base}events`,
    stats: `${base}stats:`,
    totals: `${base}totals`,
    groups: `${base}groups`,
    proj: `${base}proj`,
    bucketCount: buildBucketCountKey(namespace, bucket),
  };
}

export function buildResourceKeys(namespace: string, buckets: number, resource: string): ResourceKeys & { bucket: number } {
  const bucket = bucketOf(resource, buckets);
  const keys = buildBucketKeys(namespace, bucket);
  return {
    ...keys,
    bucket,
    lock: `${keys.base}lock:${resource}`,
    lease: `${keys.base}lease:${resource}`,
    fence: `${keys.base}fence:${resource}`,
    evids: `${keys.base}evids:${resource}`,
  };
}

/**
 * The note of lease id `leaseId` on `resource` (see scripts.ts). The script also compares the
 * lease id stored in it, so a lease id containing ':' cannot read another resource's note.
 */
export function buildNoteKey(keys: BucketKeys, resource: string, leaseId: string): string {
  return `${keys.base}note:${leaseId}:${resource}`;
}

/**
 * The KEYS of a resource script, in the order scripts.ts reads them: lock, lease, note (of
 * `leaseId`; a name never written when the call names no lease), fence, idx, events, totals.
 * Built straight from the bucket's keys: it runs on every operation.
 */
export function buildResourceScriptKeys(keys: BucketKeys, resource: string, leaseId = ""): string[] {
  const base = keys.base;
  return [`${base}lock:${resource}`, `${base}lease:${resource}`, buildNoteKey(keys, resource, leaseId), `${base}fence:${resource}`, keys.idx, keys.events, keys.totals];
}

/** The record of how lease `leaseId` was force-released (written by the forceRelease script). */
export function buildForceReleasedKey(keys: BucketKeys, leaseId: string): string {
  return `${keys.base}forced:${leaseId}`;
}

/** A resource's history list of event ids (a read model). */
export function buildEvidsKey(keys: BucketKeys, resource: string): string {
  return `${keys.base}evids:${resource}`;
}

/** A bucket's stream of one owner's (`ido`) or one task's (`idt`) event ids and kinds (a read model). */
export function buildIdStreamKey(keys: BucketKeys, field: "owner" | "task", value: string): string {
  return `${keys.base}${field === "owner" ? "ido" : "idt"}:${value}`;
}

/** The 'live' field of a bucket's projection hash once its owner / task live zsets are built (the backfill is done). */
export const LIVE_INDEX_DONE = "done";

/** A bucket's zset of the live leases (resource → acquiredAt ms) of one owner (`lo`) or one task (`lt`) (a read model). */
export function buildLiveIndexKey(keys: BucketKeys, field: "owner" | "task", value: string): string {
  return `${keys.base}${field === "owner" ? "lo" : "lt"}:${value}`;
}

/** A bucket's hash of lease ids and fencing tokens seen on epoch day `day`, each → its resource (a read model). */
export function buildGrantsKey(keys: BucketKeys, day: number): string {
  return `${keys.base}grants:${day}`;
}

/** Stream of one indexed event kind in a bucket (a read model). */
export function buildKindStreamKey(keys: BucketKeys, kind: string): string {
  return `${keys.events}:${kind}`;
}

/** Per-bucket stats hash key for an epoch minute / hour / day (a read model). */
export function buildStatsKey(keys: BucketKeys, unit: "m" | "h" | "d", index: number): string {
  return `${keys.stats}${unit}:${index}`;
}

/** A bucket's contention per name for an epoch hour, beside its stats hash (a read model; see stats.ts). */
export function buildHourContentionKey(keys: BucketKeys, hour: number): string {
  return `${keys.stats}hc:${hour}`;
}

/** A closed hour's (day's) counters summed over the namespace's buckets, one JSON string (a read model; see stats.ts). */
export function buildStoreWideStatsKey(namespace: string, unit: "h" | "d", index: number): string {
  return `${namespace}:stats:${unit}j:${index}`;
}

/** The same sums as a hash, as earlier versions of the store write them (read when the string is absent). */
export function buildStoreWideStatsHashKey(namespace: string, unit: "h" | "d", index: number): string {
  return `${namespace}:stats:${unit}s:${index}`;
}

/** CRC16/XMODEM, the hash Redis Cluster maps keys to slots with. */
function crc16(bytes: Buffer): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The Redis Cluster slot of a key: of its hash tag (`{b7}`) when it has a non-empty one, else of the whole key. */
export function clusterSlotOf(key: string): number {
  const open = key.indexOf("{");
  if (open !== -1) {
    const close = key.indexOf("}", open + 1);
    if (close > open + 1) return crc16(Buffer.from(key.slice(open + 1, close), "utf8")) % 16384;
  }
  return crc16(Buffer.from(key, "utf8")) % 16384;
}

/**
 * The bucket's renewal-slack hash for epoch hour `hour`. Passed to renew in KEYS: the hour is
 * the caller's clock, a filing label only — the slack itself is measured on the store's clock.
 */
export function buildSlackKey(keys: BucketKeys, hour: number): string {
  return `${keys.base}slack:${hour}`;
}
