import type { Redis } from "ioredis";
import { Pool } from "pg";
import { type LeaseStore, PostgresLeaseStore, RedisLeaseStore } from "@leasewatch/lease";
import { DEFAULT_EVENTS_MAX_LEN, parseTimeReply, RESOURCE_EVENTS_MAX_LEN } from "@leasewatch/lease/internal";
import type { TStoreConfig } from "@/lib/server/store-config";
import { createRandom } from "../workload/random";
import { assertValidHistory, generateHistory, toLeaseEvent, type SyntheticEvent } from "./history";
import { readLatestEventAt, writePostgresEvents } from "./pg-seed";
import { readStreamTails, writeRedisEvents, type RedisSeedTarget } from "./redis-seed";

/**
 * Demo only: writes the last few hours of believable history into a store at
 * start-up, so every chart of the console has something to show within a
 * minute instead of after hours of workload.
 *
 * Live stores keep their append-only order: history is only ever added AFTER
 * the newest event a store already has (a re-run of the demo fills the gap
 * since the last run, never the time before it), so nothing is counted twice
 * and event ids keep following time. Times are on the store's clock.
 */
export interface BackfillOptions {
  store: LeaseStore;
  /** Needed for Postgres (the connection and schema); Redis stores carry their own client. */
  config?: TStoreConfig;
  hours: number;
  seed?: number;
  /** Events per second of history (default 4 — about what the live workload records). */
  eventsPerSecond?: number;
}

export interface BackfillResult {
  events: number;
  from?: Date;
  to?: Date;
  /** Why nothing was written, when nothing was. */
  skipped?: string;
}

/** Gaps shorter than this are left alone: the live workload fills them within a minute. */
const MIN_GAP_MS = 10 * 60_000;

function planWindow(nowMs: number, hours: number, latestMs: number | null): { from: number; to: number } | null {
  const from = Math.max(nowMs - hours * 3_600_000, latestMs === null ? -Infinity : latestMs + 1);
  return nowMs - from < MIN_GAP_MS ? null : { from, to: nowMs };
}

async function backfillRedis(store: RedisLeaseStore, opts: BackfillOptions): Promise<BackfillResult> {
  // The seeder pipelines across buckets (slots): a cluster gets its history from the live workload only.
  if (store.isCluster) return { events: 0, skipped: "history backfill needs a standalone Redis" };
  const client = store.client as Redis;
  const target: RedisSeedTarget = {
    client,
    namespace: store.namespace,
    buckets: store.buckets,
    eventsMaxLen: DEFAULT_EVENTS_MAX_LEN,
    evidsMaxLen: RESOURCE_EVENTS_MAX_LEN,
  };
  const nowMs = parseTimeReply(await client.time());
  const tails = await readStreamTails(client, store.namespace, store.buckets);
  let latestMs: number | null = null;
  for (const { ms } of tails.values()) latestMs = Math.max(latestMs ?? 0, ms);
  const window = planWindow(nowMs, opts.hours, latestMs);
  if (!window) return { events: 0, skipped: "the store already has recent history" };
  const random = createRandom(opts.seed);
  // Redis tokens are floored at the store clock in µs; history tokens follow the same rule.
  const events = [
    ...generateHistory({
      from: window.from,
      to: window.to,
      targetEvents: Math.round(((window.to - window.from) / 1000) * (opts.eventsPerSecond ?? 4)),
      random,
      tokenFor: (n, at) => String(BigInt(Math.round(at)) * 1000n + BigInt(n % 1000)),
    }),
  ];
  // Checked whole before the first write: a demo must never show an impossible history.
  assertValidHistory(events.map((e, i) => toLeaseEvent(e, i)), `backfill of ${store.name}`);
  const { written } = await writeRedisEvents(target, events, "add", nowMs);
  return { events: written, from: new Date(window.from), to: new Date(window.to) };
}

async function backfillPostgres(store: PostgresLeaseStore, opts: BackfillOptions): Promise<BackfillResult> {
  if (opts.config?.kind !== "postgres") return { events: 0, skipped: "no connection config for this Postgres store" };
  const schema = opts.config.schema ?? store.schema;
  const pool = new Pool({ connectionString: opts.config.url, max: 2 });
  pool.on("error", () => {});
  try {
    const { rows } = await pool.query<{ now: Date }>("SELECT clock_timestamp() AS now");
    const nowMs = rows[0]!.now.getTime();
    const latest = await readLatestEventAt(pool, schema);
    const window = planWindow(nowMs, opts.hours, latest?.getTime() ?? null);
    if (!window) return { events: 0, skipped: "the store already has recent history" };
    const events: SyntheticEvent[] = [
      ...generateHistory({
        from: window.from,
        to: window.to,
        targetEvents: Math.round(((window.to - window.from) / 1000) * (opts.eventsPerSecond ?? 4)),
        random: createRandom(opts.seed),
      }),
    ];
    const written = await writePostgresEvents(pool, schema, events, { validate: true });
    // The store's own rollup path builds the chart data for the backfilled range.
    await store.refreshRollups({ since: new Date(window.from) });
    return { events: written, from: new Date(window.from), to: new Date(window.to) };
  } finally {
    await pool.end();
  }
}

export async function backfillHistory(opts: BackfillOptions): Promise<BackfillResult> {
  if (opts.store instanceof RedisLeaseStore) return backfillRedis(opts.store, opts);
  if (opts.store instanceof PostgresLeaseStore) return backfillPostgres(opts.store, opts);
  return { events: 0, skipped: `don't know how to backfill a ${opts.store.kind} store of this type` };
}
