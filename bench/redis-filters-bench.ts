/**
 * `npm run bench -- redis-filters [--events N] [--keep] [--reuse NAMESPACE]`: the console's event
 * filters (owner, kind, task over a 7-day window) on one Redis store whose read models were built
 * by the store's own projector.
 *
 * The bucket streams are filled with N events (default 300k) spread over the last 7 days, in the
 * store's entry format and under ids carrying the event time (as the scripts write them, but
 * backdated); nothing else is written. The store's projector then folds them into every read
 * model — listing zsets, per-kind streams, the owner / task indexes, grants — exactly as it
 * folds live events, so the reads measured are the reads a deployment makes.
 * `--keep` leaves the namespace for a later `--reuse <namespace>` (measure again, e.g. after a
 * change to the reads or the read models, on the same data).
 */
import { randomBytes } from "node:crypto";
import { loadavg } from "node:os";
import { Redis } from "ioredis";
import { listEvents } from "@/lib/console/events/list-events";
import { parseEventsParams, type SearchParamsInput } from "@/lib/console/shared/params";
import { bucketOf, buildBucketKeys, DEFAULT_BUCKETS } from "@leasewatch/lease/internal";
import { RedisLeaseStore } from "@leasewatch/lease";
import { generateHistory, type SyntheticEvent } from "../scripts/seed/history";
import { deleteRedisNamespace, toStreamFields } from "../scripts/seed/redis-seed";
import { createRandom } from "../scripts/workload/random";
import { log, quantile } from "./console-bench";
import type { BenchOutcome } from "./run";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const DAY_MS = 86_400_000;
const DAYS = 7;
const SAMPLES = 20;
const TARGET_MS = 200;
const PIPELINE_BATCH = 2_000;
/**
 * A busy owner and a busy task beside the generated ones (which are mostly rare): one service
 * pod that takes a fifth of all leases, one task that a tenth of them run. Chosen per lease, so
 * every event of a lease keeps its owner and task.
 */
const BUSY_OWNER = "worker-1@billing-0001";
const BUSY_TASK = "close-books";

interface Flags {
  events: number;
  keep: boolean;
  reuse?: string;
}

function readFlags(argv: readonly string[]): Flags {
  const valueOf = (flag: string) => {
    const i = argv.indexOf(flag);
    return i === -1 ? undefined : argv[i + 1];
  };
  const events = Number(valueOf("--events") ?? 300_000);
  if (!Number.isInteger(events) || events < 1_000 || events > 20_000_000) throw new Error("--events takes a whole number from 1000 to 20,000,000");
  const reuse = valueOf("--reuse");
  if (reuse !== undefined && !/^rfbench_[0-9a-f]{8}$/.test(reuse)) throw new Error(`--reuse takes the namespace a --keep run printed (got "${reuse}")`);
  return { events, keep: argv.includes("--keep"), reuse };
}

function hashOf(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) >>> 0;
  return hash;
}

/** Appends the events to their bucket streams (ids `<ms>-<seq>`, increasing per bucket) and nothing else. */
async function fillBucketStreams(redis: Redis, namespace: string, events: Iterable<SyntheticEvent>): Promise<number> {
  const last = new Map<number, { ms: number; seq: number }>();
  let pipeline = redis.pipeline();
  let queued = 0;
  let written = 0;
  for (const e of events) {
    const bucket = bucketOf(e.resource, DEFAULT_BUCKETS);
    const tail = last.get(bucket);
    const ms = Math.round(e.at);
    const seq = tail && tail.ms >= ms ? tail.seq + 1 : 0;
    const at = tail && tail.ms > ms ? tail.ms : ms;
    last.set(bucket, { ms: at, seq });
    const spread = e.leaseId ? hashOf(e.leaseId) : 1;
    const busy = { ...e, owner: spread % 5 === 0 ? BUSY_OWNER : e.owner, task: spread % 10 === 0 ? BUSY_TASK : e.task };
    pipeline.xadd(buildBucketKeys(namespace, bucket).events, `${at}-${seq}`, ...toStreamFields(busy));
    written += 1;
    if (++queued >= PIPELINE_BATCH) {
      await pipeline.exec();
      pipeline = redis.pipeline();
      queued = 0;
    }
  }
  if (queued > 0) await pipeline.exec();
  return written;
}

async function projectAll(store: RedisLeaseStore): Promise<number> {
  let applied = 0;
  for (;;) {
    const result = await store.project();
    applied += result.applied;
    if (result.isCaughtUp) return applied;
  }
}

/** Owners and tasks of events spread over the window, read from the store (as console-scale-bench samples them). */
async function sampleFilterValues(store: RedisLeaseStore): Promise<{ owners: string[]; tasks: string[] }> {
  const to = Date.now();
  const owners = new Set<string>();
  const tasks = new Set<string>();
  for (const daysAgo of [0.5, 2, 4, 6]) {
    const at = to - daysAgo * DAY_MS;
    const page = await store.events({ from: new Date(at - 3_600_000), to: new Date(at), limit: 50 });
    for (const e of page.items) {
      if (e.owner) owners.add(e.owner);
      if (e.task) tasks.add(e.task);
    }
  }
  return { owners: [...owners].slice(0, 40), tasks: [...tasks].slice(0, 40) };
}

async function measure(store: RedisLeaseStore): Promise<boolean> {
  const values = await sampleFilterValues(store);
  const random = createRandom(17);
  const filters: Array<[string, () => SearchParamsInput]> = [
    ["owner", () => ({ owner: random.pick(values.owners) })],
    ["owner (busy)", () => ({ owner: BUSY_OWNER })],
    ["owner (busy) + kind", () => ({ owner: BUSY_OWNER, kind: random.pick(["expired", "contended", "released"]) })],
    ["kind", () => ({ kind: random.pick(["expired", "contended", "force_released", "released,expired", "fencing_rejected"]) })],
    ["task", () => ({ task: random.pick(values.tasks) })],
    ["task (busy)", () => ({ task: BUSY_TASK })],
  ];
  let isMet = true;
  for (const [name, make] of filters) {
    const ms: number[] = [];
    let items = 0;
    let partial = 0;
    let refused: string | undefined;
    for (let i = 0; i < SAMPLES + 2; i++) {
      const parsed = parseEventsParams({ store: store.name, window: "7d", ...make() });
      if (!parsed.ok) {
        refused = parsed.problem.message;
        break;
      }
      const started = performance.now();
      const result = await listEvents(parsed.params, { entries: [{ store }] });
      const took = performance.now() - started;
      if (!result.ok) {
        refused = result.problem.message;
        break;
      }
      const view = result.view.stores[0];
      if (!view?.ok) throw new Error(`events by ${name}: the store read failed: ${JSON.stringify(view).slice(0, 200)}`);
      // The first two warm the connection and the scripts.
      if (i < 2) continue;
      ms.push(took);
      items += result.view.items.length;
      if (view.data.partial) partial += 1;
    }
    if (refused) {
      console.log(`events by ${name.padEnd(19)} 7 d: refused (400): ${refused}`);
      isMet = false;
      continue;
    }
    const p50 = quantile(ms, 0.5);
    const p95 = quantile(ms, 0.95);
    isMet &&= p95 <= TARGET_MS;
    console.log(
      `events by ${name.padEnd(19)} 7 d: p50 ${p50.toFixed(1)} ms  p95 ${p95.toFixed(1)} ms  (target ≤ ${TARGET_MS})  ` +
        `${(items / ms.length).toFixed(0)} events per page, ${partial}/${ms.length} partial  ${p95 <= TARGET_MS ? "ok" : "MISS"}`,
    );
  }
  return isMet;
}

export async function run(): Promise<BenchOutcome> {
  const flags = readFlags(process.argv.slice(2));
  const namespace = flags.reuse ?? `rfbench_${randomBytes(4).toString("hex")}`;
  const redis = new Redis(REDIS_URL);
  const store = new RedisLeaseStore({ name: "redis-filters", url: REDIS_URL, namespace, buckets: DEFAULT_BUCKETS });
  try {
    if (!flags.reuse) {
      const nowMs = Date.now();
      const started = performance.now();
      const written = await fillBucketStreams(
        redis,
        namespace,
        generateHistory({ from: nowMs - DAYS * DAY_MS, to: nowMs, targetEvents: flags.events, random: createRandom(20261126) }),
      );
      log(`${namespace}: ${written.toLocaleString("en")} events over ${DAYS} days in the bucket streams in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
    const started = performance.now();
    const applied = await projectAll(store);
    log(`${namespace}: projector applied ${applied.toLocaleString("en")} events in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const lengths = await redis
      .pipeline(Array.from({ length: DEFAULT_BUCKETS }, (_, b) => ["xlen", buildBucketKeys(namespace, b).events]))
      .exec();
    const total = (lengths ?? []).reduce((n, [, len]) => n + Number(len), 0);
    const [one, five] = loadavg();
    log(`${total.toLocaleString("en")} events retained in ${DEFAULT_BUCKETS} buckets; load average ${one!.toFixed(2)} ${five!.toFixed(2)}`);
    const isMet = await measure(store);
    const [after1, after5] = loadavg();
    log(`load average after measuring ${after1!.toFixed(2)} ${after5!.toFixed(2)}`);
    return { isMet };
  } finally {
    await store.close();
    if (flags.keep || flags.reuse) log(`kept: --reuse ${namespace}`);
    else await deleteRedisNamespace(redis, namespace);
    redis.disconnect();
  }
}
