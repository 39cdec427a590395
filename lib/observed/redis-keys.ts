import { Cluster, type Redis } from "ioredis";

/**
 * Redis lock keys that other libraries write, read-only, found by pattern:
 * redlock and redis-semaphore's mutex keep one string key per lock whose value
 * is the holder's random identifier and whose TTL is the lease; redis-semaphore's
 * semaphore keeps a sorted set of holder identifiers scored by acquire time.
 * Which keys are locks is configuration (`patterns`), e.g. `locks:*` for
 * redlock resources named that way, `mutex:*` and `semaphore:*` for
 * redis-semaphore's defaults.
 *
 * SCAN walks the whole keyspace to find matches, so every read is bounded: by
 * keys examined, keys matched and time, on every master of a cluster; what it
 * did not get to is reported, never silently dropped.
 */

export interface RedisLockKey {
  key: string;
  /** `string`: one holder (redlock, mutex); `zset`: several (semaphore). */
  type: "string" | "zset";
  /** The holders' identifiers as stored: the value of a string key, the members of a sorted set. */
  holders: Array<{ value: string; since: Date | null }>;
  /** Remaining TTL in ms; null when the key has none (a lock that never expires). */
  ttlMs: number | null;
}

export interface RedisKeysOptions {
  patterns: string[];
  /** Keys SCAN may examine per read, over all masters; default 200,000. */
  maxExamined?: number;
  /** Matching keys read per read; default 5,000. */
  maxMatched?: number;
  /** The read stops after this long; default 1,000 ms. */
  budgetMs?: number;
}

export interface RedisKeysSnapshot {
  keys: RedisLockKey[];
  /** False when a budget ran out before every master was scanned to the end. */
  complete: boolean;
  examined: number;
  at: Date;
}

const SCAN_COUNT = 1_000;

function mastersOf(client: Redis | Cluster): Redis[] {
  return client instanceof Cluster ? client.nodes("master") : [client];
}

/** Turns a pattern into a cheap test, so keys matched by one pattern's SCAN are not read twice. */
function patternOf(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${body}$`, "s");
}

export async function readRedisLockKeys(client: Redis | Cluster, options: RedisKeysOptions): Promise<RedisKeysSnapshot> {
  if (options.patterns.length === 0) throw new Error("redis-keys needs at least one key pattern (e.g. locks:*)");
  const maxExamined = options.maxExamined ?? 200_000;
  const maxMatched = options.maxMatched ?? 5_000;
  const deadline = Date.now() + (options.budgetMs ?? 1_000);
  const seen = new Set<string>();
  const found: Array<{ node: Redis; key: string }> = [];
  let examined = 0;
  let complete = true;
  // One pass per master with a MATCH per pattern; a single pattern needs one SCAN, several need one each.
  outer: for (const node of mastersOf(client)) {
    for (const pattern of options.patterns) {
      let cursor = "0";
      do {
        if (examined >= maxExamined || found.length >= maxMatched || Date.now() >= deadline) {
          complete = false;
          break outer;
        }
        const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", SCAN_COUNT);
        cursor = next;
        examined += SCAN_COUNT;
        for (const key of keys) {
          if (seen.has(key)) continue;
          if (found.length >= maxMatched) {
            complete = false;
            continue;
          }
          seen.add(key);
          found.push({ node, key });
        }
      } while (cursor !== "0");
    }
  }
  const keys = await readKeys(found);
  return { keys, complete, examined: Math.min(examined, maxExamined), at: new Date() };
}

async function readKeys(found: Array<{ node: Redis; key: string }>): Promise<RedisLockKey[]> {
  const byNode = new Map<Redis, string[]>();
  for (const { node, key } of found) byNode.set(node, [...(byNode.get(node) ?? []), key]);
  const out: RedisLockKey[] = [];
  for (const [node, keys] of byNode) {
    const first = node.pipeline();
    for (const key of keys) first.type(key).pttl(key).get(key);
    // GET on a sorted set answers WRONGTYPE; that reply is expected and read as "not a string".
    const replies = (await first.exec()) ?? [];
    const zsets: string[] = [];
    const ttls = new Map<string, number | null>();
    keys.forEach((key, i) => {
      const type = replies[i * 3]?.[1] as string;
      const pttl = replies[i * 3 + 1]?.[1] as number;
      const ttlMs = pttl >= 0 ? pttl : null;
      if (type === "string") out.push({ key, type: "string", holders: [{ value: String(replies[i * 3 + 2]?.[1] ?? ""), since: null }], ttlMs });
      else if (type === "zset") {
        zsets.push(key);
        ttls.set(key, ttlMs);
      }
      // Keys that vanished between SCAN and now (type "none") and other types are not locks.
    });
    if (zsets.length > 0) {
      const second = node.pipeline();
      for (const key of zsets) second.zrange(key, "0", "-1", "WITHSCORES");
      const members = (await second.exec()) ?? [];
      zsets.forEach((key, i) => {
        const flat = (members[i]?.[1] as string[] | undefined) ?? [];
        const holders: RedisLockKey["holders"] = [];
        for (let j = 0; j + 1 < flat.length; j += 2) holders.push({ value: flat[j]!, since: Number.isFinite(Number(flat[j + 1])) ? new Date(Number(flat[j + 1])) : null });
        out.push({ key, type: "zset", holders, ttlMs: ttls.get(key) ?? null });
      });
    }
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Whether `key` is one of the configured lock keys (force-release touches nothing else). */
export function isObservedKey(key: string, patterns: string[]): boolean {
  return patterns.some((p) => patternOf(p).test(key));
}

// Compare-and-delete: the key goes only while it still holds the value shown.
const RELEASE_STRING = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
// One semaphore holder goes only while it is still a member.
const RELEASE_MEMBER = `if redis.call('TYPE', KEYS[1])['ok'] == 'zset' then return redis.call('ZREM', KEYS[1], ARGV[1]) end return 0`;

/** Force-release of one holder shown in the console; false when the key no longer shows it. */
export async function releaseRedisLockKey(client: Redis | Cluster, input: { key: string; type: "string" | "zset"; value: string }): Promise<boolean> {
  const script = input.type === "string" ? RELEASE_STRING : RELEASE_MEMBER;
  const removed = (await client.eval(script, 1, input.key, input.value)) as number;
  return removed === 1;
}
