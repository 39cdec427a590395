import { setMaxListeners } from "node:events";
import type { MeterProvider } from "@opentelemetry/api";
import { Pool } from "pg";
import { z } from "zod";
import { createFencedTable, type LeaseStore, PostgresLeaseStore, RedisLeaseStore } from "@leasewatch/lease";
import { SQL_QUALIFIED_NAME } from "@leasewatch/lease/internal";
import { ZStoreConfig, type TStoreConfig } from "@/lib/server/store-config";
import { createCounters, type WorkloadCounters } from "./counters";
import { LEDGER_TENANT_COUNT } from "./names";
import { createRandom } from "./random";
import { createRateLimitedStore, TokenBucket } from "./rate-limited-store";
import { sleepFor } from "./sleep";
import { BASE_WORKER_COUNTS, WORKERS, type WorkerContext, type WorkerKind } from "./workers";

export type { WorkloadCounters } from "./counters";
export type { WorkerKind } from "./workers";

/** Hard ceiling on writes per second per store: a demo must never turn into a load test. */
export const MAX_OPS_PER_SECOND = 50;
/** The downstream table stale writers write to (fenced by token): demo data, in a schema of its own. */
export const DEMO_DOWNSTREAM_TABLE = "leasewatch_demo.ledger_exports";
/** How long stop() waits for workers to release what they hold before giving up on them. */
const STOP_GRACE_MS = 15_000;

const ZStoreInstance = z.custom<LeaseStore>(
  (value) =>
    typeof value === "object" &&
    value !== null &&
    typeof (value as LeaseStore).acquire === "function" &&
    typeof (value as LeaseStore).sweep === "function" &&
    typeof (value as LeaseStore).name === "string",
  { error: "each store must be a LeaseStore instance or a store config {name, kind, url}" },
);

export const ZWorkloadOptions = z.strictObject({
  stores: z.array(z.union([ZStoreConfig, ZStoreInstance])).min(1, { error: "give the workload at least one store" }),
  durationMs: z.number().int().positive().optional(),
  signal: z.instanceof(AbortSignal).optional(),
  /** Scales the number of workers of each kind (1 ≈ 15 writes/s per store). */
  intensity: z.number().min(0.25).max(4).default(1),
  /** Per-store write budget; never above MAX_OPS_PER_SECOND. */
  maxOpsPerSecond: z.number().int().min(1).max(MAX_OPS_PER_SECOND).default(MAX_OPS_PER_SECOND),
  /** Hours of past history written at start-up so every chart has data at once (0 = none). */
  backfillHours: z.number().min(0).max(48).default(0),
  /**
   * The Postgres database the stale writers' fenced downstream lives in.
   * Default: the first postgres store config's url, else DATABASE_URL, else none (no stale writers).
   */
  downstreamUrl: z.string().regex(/^postgres(ql)?:\/\//).optional(),
  /** `[schema.]table` of the fenced downstream (the schema is created if missing). */
  downstreamTable: z
    .string()
    .regex(SQL_QUALIFIED_NAME)
    .default(DEMO_DOWNSTREAM_TABLE),
  /** How many tenants' ledger rows the stale writers spread over (1 makes every store's writers meet on one row). */
  ledgerTenants: z.number().int().min(1).max(LEDGER_TENANT_COUNT).default(LEDGER_TENANT_COUNT),
  /** Only run these kinds (default: all). */
  kinds: z.array(z.enum(Object.keys(BASE_WORKER_COUNTS) as [WorkerKind, ...WorkerKind[]])).optional(),
  /**
   * The workload is load: by default it refuses store and downstream URLs that are not
   * on this machine (127.0.0.0/8, localhost, ::1). Set to point it elsewhere on purpose.
   */
  allowRemote: z.boolean().default(false),
  seed: z.number().int().optional(),
  /** The workers' OpenTelemetry metrics (LeaseClient and fencedWrite); default the global meter provider. */
  meterProvider: z.custom<MeterProvider>((v) => typeof (v as MeterProvider | null)?.getMeter === "function", { error: "meterProvider must be a MeterProvider" }).optional(),
  log: z.custom<(line: string) => void>((v) => typeof v === "function").optional(),
});
export type TWorkloadOptions = z.input<typeof ZWorkloadOptions>;

export interface WorkloadStats {
  isRunning: boolean;
  startedAt: Date;
  stoppedAt?: Date;
  workers: Record<WorkerKind, number>;
  backfill: Record<string, { events: number } | { error: string }>;
  stores: Record<string, WorkloadCounters & { opsPerSecond: number }>;
}

export interface Workload {
  /** Stops every worker (long holds release their leases), closes what the workload opened. */
  stop(): Promise<void>;
  stats(): WorkloadStats;
  /** Resolves when the workload has stopped (by stop(), the signal or durationMs). */
  done: Promise<void>;
}

/** Whether a URL's host is this machine. */
export function isLoopbackUrl(url: string): boolean {
  // redis+cluster://host:port,host:port/…: every seed node must be on this machine.
  const cluster = /^redis\+cluster:\/\/([^/?#]+)/.exec(url);
  if (cluster) return cluster[1]!.split(",").every((node) => isLoopbackUrl(`redis://${node}`));
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return false;
  }
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function isStoreInstance(value: TStoreConfig | LeaseStore): value is LeaseStore {
  return typeof (value as LeaseStore).acquire === "function";
}

async function openStore(config: TStoreConfig): Promise<LeaseStore> {
  if (config.kind === "postgres") {
    const store = new PostgresLeaseStore({ name: config.name, connectionString: config.url, schema: config.schema });
    await store.migrate();
    return store;
  }
  return new RedisLeaseStore({ name: config.name, url: config.url, namespace: config.namespace });
}

/**
 * Start a realistic, bounded workload against the given stores: well-behaved
 * holders, slow renewers, crashing holders, hot-spot contention, stale writers
 * hitting fencing, and a few long holds. Every write goes through a per-store
 * token bucket (≤ MAX_OPS_PER_SECOND). It stops by itself on stop(), on
 * `signal`, or after `durationMs`.
 */
export async function startWorkload(options: TWorkloadOptions): Promise<Workload> {
  const opts = ZWorkloadOptions.parse(options);
  const log = opts.log ?? (() => {});
  if (!opts.allowRemote) {
    const urls = [
      ...opts.stores.flatMap((s) => (isStoreInstance(s) ? [] : [{ what: `store ${s.name}`, url: s.url }])),
    ];
    const remote = urls.find((u) => !isLoopbackUrl(u.url));
    if (remote) throw new Error(`workload: ${remote.what} is not on this machine (${new URL(remote.url).host}); pass allowRemote: true to load it anyway`);
  }
  const random = createRandom(opts.seed);
  const owned: LeaseStore[] = [];
  const stores: LeaseStore[] = [];
  let downstreamPool: Pool | undefined;

  const closeOwned = async () => {
    await Promise.allSettled(owned.map((s) => s.close()));
    await downstreamPool?.end().catch(() => {});
  };

  try {
    for (const entry of opts.stores) {
      if (isStoreInstance(entry)) stores.push(entry);
      else {
        const store = await openStore(entry);
        owned.push(store);
        stores.push(store);
      }
    }
    const downstreamUrl =
      opts.downstreamUrl ??
      opts.stores.find((s): s is Extract<TStoreConfig, { kind: "postgres" }> => !isStoreInstance(s) && s.kind === "postgres")?.url ??
      process.env.DATABASE_URL;
    if (downstreamUrl && !opts.allowRemote && !isLoopbackUrl(downstreamUrl)) {
      throw new Error(`workload: the fenced downstream is not on this machine (${new URL(downstreamUrl).host}); pass allowRemote: true to use it anyway`);
    }
    if (downstreamUrl) {
      downstreamPool = new Pool({ connectionString: downstreamUrl, max: 2 });
      downstreamPool.on("error", (error) => log(`[workload] downstream pool: ${error.message}`));
      const [schema] = opts.downstreamTable.includes(".") ? opts.downstreamTable.split(".") : [];
      // The name passed the identifier regex above, so quoting it is safe.
      if (schema) await downstreamPool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await createFencedTable({ pool: downstreamPool, table: opts.downstreamTable });
    }
  } catch (error) {
    await closeOwned();
    throw error;
  }

  const backfill: WorkloadStats["backfill"] = {};
  if (opts.backfillHours > 0) {
    const { backfillHistory } = await import("../seed/backfill");
    for (const store of stores) {
      const config = opts.stores.find((s) => !isStoreInstance(s) && s.name === store.name) as TStoreConfig | undefined;
      try {
        const result = await backfillHistory({ store, config, hours: opts.backfillHours, seed: random.int(1, 2 ** 30) });
        backfill[store.name] = { events: result.events };
        log(`[workload] ${store.name}: backfilled ${result.events} events over ${opts.backfillHours} h`);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        backfill[store.name] = { error: message };
        log(`[workload] ${store.name}: backfill skipped (${message})`);
      }
    }
  }

  const controller = new AbortController();
  // Every sleeping worker listens on this one signal; dozens of listeners are expected.
  setMaxListeners(0, controller.signal);
  const onOuterAbort = () => controller.abort();
  opts.signal?.addEventListener("abort", onOuterAbort, { once: true });
  const durationTimer = opts.durationMs ? setTimeout(() => controller.abort(), opts.durationMs) : undefined;

  const kinds = (opts.kinds ?? (Object.keys(BASE_WORKER_COUNTS) as WorkerKind[])).filter(
    (kind) => kind !== "stale-writer" || downstreamPool !== undefined,
  );
  const workerCounts = Object.fromEntries(
    (Object.keys(BASE_WORKER_COUNTS) as WorkerKind[]).map((kind) => [
      kind,
      !kinds.includes(kind) ? 0 : kind === "sweeper" ? 1 : Math.max(1, Math.round(BASE_WORKER_COUNTS[kind] * opts.intensity)),
    ]),
  ) as Record<WorkerKind, number>;

  const startedAt = new Date();
  const startedAtMs = performance.now();
  const perStore = stores.map((store) => {
    const counters = createCounters();
    const bucket = new TokenBucket(opts.maxOpsPerSecond);
    return { store, counters, limited: createRateLimitedStore(store, bucket, counters) };
  });

  const loops: Promise<void>[] = [];
  for (const { limited, counters } of perStore) {
    for (const kind of Object.keys(workerCounts) as WorkerKind[]) {
      for (let i = 0; i < workerCounts[kind]; i++) {
        const ctx: WorkerContext = {
          store: limited,
          random: createRandom(random.int(1, 2 ** 30)),
          signal: controller.signal,
          counters,
          downstream: downstreamPool ? { pool: downstreamPool, table: opts.downstreamTable, ledgerTenants: opts.ledgerTenants } : undefined,
          meterProvider: opts.meterProvider,
        };
        // Stagger start-up so the stores don't see a thundering herd.
        const run = async () => {
          if (await sleepFor(random.between(0, 2_000), controller.signal)) await WORKERS[kind](ctx);
        };
        loops.push(
          run().catch((error: unknown) => {
            counters.errors += 1;
            counters.lastError = error instanceof Error ? error.message : String(error);
          }),
        );
      }
    }
  }
  log(
    `[workload] running on ${stores.map((s) => s.name).join(", ")}: ` +
      Object.entries(workerCounts)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${n} ${k}`)
        .join(", ") +
      ` (≤ ${opts.maxOpsPerSecond} writes/s per store)`,
  );

  let stoppedAt: Date | undefined;
  const done = (async () => {
    await new Promise<void>((resolve) => {
      if (controller.signal.aborted) resolve();
      else controller.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    clearTimeout(durationTimer);
    opts.signal?.removeEventListener("abort", onOuterAbort);
    // Workers release what they hold in `finally`; don't wait forever for a store that is down.
    await Promise.race([Promise.allSettled(loops), sleepFor(STOP_GRACE_MS)]);
    await closeOwned();
    stoppedAt = new Date();
    log("[workload] stopped");
  })();

  return {
    done,
    async stop() {
      controller.abort();
      await done;
    },
    stats() {
      const elapsedS = Math.max(0.001, (performance.now() - startedAtMs) / 1000);
      return {
        isRunning: stoppedAt === undefined,
        startedAt,
        stoppedAt,
        workers: workerCounts,
        backfill,
        stores: Object.fromEntries(
          perStore.map(({ store, counters }) => [store.name, { ...counters, opsPerSecond: Math.round((counters.ops / elapsedS) * 10) / 10 }]),
        ),
      };
    },
  };
}
