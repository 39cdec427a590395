/**
 * What each part of the Redis store's acquire costs the server: the acquire function as the store
 * loads it, and copies of it each with one part left out, each loaded as a library of its own. Blocks of
 * uncontended acquires (16 in flight, each loop on a resource of its own, its lease's keys
 * dropped between acquires) run in turn, variant after variant, for
 * several cycles, so a machine whose speed drifts shifts all of them alike; what a variant saves
 * against "as the store runs it" is what that part costs. The time is the server's own, from INFO
 * commandstats (the FCALL's µs, the commands it makes included).
 *
 *   node --import tsx bench/redis-acquire-breakdown.ts
 *
 * Knobs: LW_PROFILE_CYCLES (40), LW_PROFILE_BLOCK (1 000 calls a variant a cycle). The variants'
 * libraries and keys are removed afterwards. Use a Redis of your own: commandstats are reset.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { freshRedisNamespace, TEST_REDIS_URL } from "@leasewatch/lease/testing";
import { LEASE_LIBRARY } from "@leasewatch/lease/internal";

const CYCLES = Number(process.env.LW_PROFILE_CYCLES ?? 40);
const BLOCK = Number(process.env.LW_PROFILE_BLOCK ?? 1_000);
const CONCURRENCY = 16;

interface Variant {
  name: string;
  /** The acquire function's registration, changed (the text must change). */
  edit?: (code: string) => string;
}

function without(text: string, instead = ""): (code: string) => string {
  return (code) => code.replace(text, instead);
}

const VARIANTS: readonly Variant[] = [
  { name: "as the store runs it" },
  { name: "- the note read", edit: without("local note = read_note(c, lease_id)", "local note = NO_NOTE") },
  { name: "- the grant's note", edit: without("write_note(c, { lease_id, 'held', owner, task, token, '', '', call_id }, ttl)") },
  { name: "- the event", edit: without("append_event(c, { '', 'kind', 'acquired', 'resource', c.resource, 'leaseId', lease_id, 'owner', owner, 'task', task, 'token', token })") },
  { name: "- the fencing token's key", edit: without("local last = redis.call('SET', c.fence, token, 'EX', FENCE_TTL_S, 'GET')", "local last = nil") },
  { name: "- the totals", edit: without("redis.call('HINCRBY', c.totals, 'acquired', '1')") },
  { name: "- the bucket count check", edit: without("local bucket_count = redis.call('GET', KEYS[8])", "local bucket_count = ARGV[8]") },
  { name: "only the call and TIME", edit: without("local owner, task, ttl, lease_id, call_id = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]", "if true then return 1 end") },
];

/** The library with the acquire function's registration changed and every name made its own. */
function variantLibrary(variant: Variant, index: number): { name: string; code: string; acquire: string } {
  const functionName = /redis\.register_function\('(lw_[0-9a-f]+_acquire)'/.exec(LEASE_LIBRARY.code)?.[1];
  if (!functionName) throw new Error("the lease library registers no acquire function");
  const version = functionName.split("_")[1]!;
  const start = LEASE_LIBRARY.code.indexOf(`redis.register_function('${functionName}'`);
  const end = LEASE_LIBRARY.code.indexOf("redis.register_function(", start + 1);
  const original = LEASE_LIBRARY.code.slice(start, end);
  const edited = variant.edit ? variant.edit(original) : original;
  if (variant.edit && edited === original) throw new Error(`variant "${variant.name}" no longer matches the acquire function's text`);
  const tag = `breakdown${index}`;
  const name = `leasewatch_${tag}`;
  const code = (LEASE_LIBRARY.code.slice(0, start) + edited + LEASE_LIBRARY.code.slice(end)).replaceAll(version, tag).replace(/^#!lua name=\S+/, `#!lua name=${name}`);
  return { name, code, acquire: functionName.replace(version, tag) };
}

async function fcallStats(admin: Redis): Promise<{ calls: number; usec: number }> {
  const line = (await admin.info("commandstats")).split("\n").find((l) => l.startsWith("cmdstat_fcall:"));
  const m = line ? /calls=(\d+),usec=(\d+)/.exec(line) : null;
  return { calls: Number(m?.[1] ?? 0), usec: Number(m?.[2] ?? 0) };
}

async function main(): Promise<void> {
  const fresh = freshRedisNamespace();
  const redis = new Redis(TEST_REDIS_URL);
  const libraries = VARIANTS.map(variantLibrary);
  const totals = VARIANTS.map(() => ({ calls: 0, usec: 0 }));
  // One hash tag: every key of a call in one slot, as the store's are.
  const key = (part: string) => `${fresh.namespace}:{b}:${part}`;
  const removeKeys = async () => {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${fresh.namespace}:*`, "COUNT", 5_000);
      if (keys.length > 0) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== "0");
  };
  try {
    for (const library of libraries) await redis.function("LOAD", "REPLACE", library.code);
    await redis.set(key("buckets"), "1");
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const order = VARIANTS.map((_, i) => i);
      if (cycle % 2 === 1) order.reverse();
      for (const i of order) {
        await redis.config("RESETSTAT");
        let sent = 0;
        // Each loop acquires its own resource and drops the lease's keys (DEL, not counted as
        // FCALL time) before the next acquire: the keyspace keeps one size, so no variant pays
        // more of the dictionary's growth than another.
        const loop = async (_: unknown, l: number) => {
          const resource = `breakdown:${l}`;
          const own = (part: string) => key(`${part}:${resource}`);
          while (sent < BLOCK) {
            sent++;
            const leaseId = randomUUID();
            await redis.fcall(
              libraries[i]!.acquire, 9,
              own("lock"), own("lease"), own("note"), own("fence"), key("idx"), key("events"), key("totals"), key("buckets"), key("proj"),
              resource, 100_000, "breakdown-owner", "breakdown-task", 30_000, leaseId, leaseId, "1",
            );
            await redis.del(own("lock"), own("lease"), own("note"));
            await redis.zrem(key("idx"), resource);
          }
        };
        await Promise.all(Array.from({ length: CONCURRENCY }, loop));
        const stats = await fcallStats(redis);
        totals[i]!.calls += stats.calls;
        totals[i]!.usec += stats.usec;
      }
    }
    const base = totals[0]!.usec / totals[0]!.calls;
    console.log(`uncontended acquires, ${CYCLES} cycles of ${BLOCK} calls a variant; server µs a call (INFO commandstats)`);
    VARIANTS.forEach((variant, i) => {
      const us = totals[i]!.usec / totals[i]!.calls;
      const delta = i === 0 ? "" : `${us - base >= 0 ? "+" : ""}${(us - base).toFixed(2)}`;
      console.log(`${variant.name.padEnd(38)} ${us.toFixed(2).padStart(7)} ${delta.padStart(8)}`);
    });
  } finally {
    await removeKeys();
    for (const library of libraries) await redis.function("DELETE", library.name).catch(() => undefined);
    await redis.quit();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
