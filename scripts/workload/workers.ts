import type { Pool } from "pg";
import type { MeterProvider } from "@opentelemetry/api";
import { AcquireTimeoutError, fencedWrite, LeaseClient, LeaseLostError, type LeaseStore } from "@leasewatch/lease";
import type { WorkloadCounters } from "./counters";
import { HOT_RESOURCES, LONG_HOLD_RESOURCES, makeOwner, makeTask, pickLedgerResource, pickTenantResource } from "./names";
import type { Random } from "./random";
import { sleepFor } from "./sleep";

/** Everything one worker loop needs. `store` is the rate-limited, counting store. */
export interface WorkerContext {
  store: LeaseStore;
  random: Random;
  /** Aborted when the workload stops. */
  signal: AbortSignal;
  counters: WorkloadCounters;
  /**
   * A Postgres downstream for the fencing demo; stale writers are skipped without it.
   * Every store's stale writers share it (rows are keyed by store and resource).
   */
  downstream?: { pool: Pool; table: string; ledgerTenants?: number };
  /** Where the workers' OpenTelemetry metrics go (default: the global meter provider). */
  meterProvider?: MeterProvider;
}

export type WorkerKind = "well-behaved" | "slow-renewer" | "crashing" | "hot-spot" | "stale-writer" | "long-hold" | "sweeper";

/** How long a worker waits after an unexpected error, so a down store is not hammered. */
const ERROR_PAUSE_MS = 2_000;

function noteError(ctx: WorkerContext, error: unknown): Promise<boolean> {
  ctx.counters.errors += 1;
  ctx.counters.lastError = error instanceof Error ? error.message : String(error);
  return sleepFor(ERROR_PAUSE_MS, ctx.signal);
}

/** Classify what withLease threw; only the unexpected counts as an error. */
async function handleLeaseError(ctx: WorkerContext, error: unknown): Promise<void> {
  if (error instanceof AcquireTimeoutError) {
    ctx.counters.gaveUp += 1;
    return;
  }
  // A lost lease is a legitimate outcome (the client already recorded `lost`).
  if (error instanceof LeaseLostError) return;
  if (ctx.signal.aborted) return;
  await noteError(ctx, error);
}

/** Well-behaved holders: take a lease, do a bit of work, release. The bulk of healthy traffic. */
export async function runWellBehaved(ctx: WorkerContext): Promise<void> {
  const { random } = ctx;
  const client = new LeaseClient(ctx.store, { meterProvider: ctx.meterProvider, owner: makeOwner(random) });
  while (!ctx.signal.aborted) {
    const resource = pickTenantResource(random);
    // Mostly short jobs; one in five is a batch that runs for a minute or so (heartbeats keep it).
    const workMs = random.chance(0.2) ? random.between(10_000, 90_000) : Math.min(8_000, Math.max(50, random.logNormal(900, 0.9)));
    try {
      await client.withLease(resource, async ({ signal }) => sleepFor(workMs, signal, ctx.signal), {
        task: makeTask(random),
        ttlMs: 10_000,
        waitMs: random.chance(0.3) ? 2_000 : 0,
        signal: ctx.signal,
      });
    } catch (error) {
      await handleLeaseError(ctx, error);
    }
    await sleepFor(random.between(500, 3_000), ctx.signal);
  }
}

/**
 * Slow renewers run their own heartbeat loop (no LeaseClient) and sometimes
 * beat too late: the TTL runs out on the store's clock first, the renew is
 * refused (`renew_failed`) and the worker reports the lease `lost`.
 */
export async function runSlowRenewer(ctx: WorkerContext): Promise<void> {
  const { random, store } = ctx;
  const owner = makeOwner(random, "reports");
  const ttlMs = 3_000;
  while (!ctx.signal.aborted) {
    try {
      const resource = random.chance(0.7) ? `tenant_${random.skewed(400)}:report-export` : `queue:webhooks:shard-${random.int(0, 7)}`;
      const task = makeTask(random);
      const result = await store.acquire({ resource, owner, task, ttlMs });
      if (result.acquired) {
        const { leaseId, fencingToken } = result.lease;
        let isLost = false;
        const beats = random.int(2, 5);
        for (let i = 0; i < beats && !ctx.signal.aborted; i++) {
          const isLate = random.chance(0.25);
          await sleepFor(ttlMs * (isLate ? random.between(1.1, 1.6) : random.between(0.4, 0.7)), ctx.signal);
          const renewal = await store.renew({ resource, leaseId, ttlMs });
          if (!renewal.renewed) {
            await store.reportLost({ resource, leaseId, owner, task, fencingToken, reason: renewal.reason });
            isLost = true;
            break;
          }
        }
        if (!isLost) await store.release({ resource, leaseId });
      }
    } catch (error) {
      if (!ctx.signal.aborted) await noteError(ctx, error);
    }
    await sleepFor(random.between(1_000, 4_000), ctx.signal);
  }
}

/**
 * Crashing holders acquire and then "die": the lease is dropped without a
 * release or renew, exactly as if the process had been killed. The store's TTL
 * ends it and sweep (or the next acquire) records the `expired` event.
 */
export async function runCrashing(ctx: WorkerContext): Promise<void> {
  const { random, store } = ctx;
  while (!ctx.signal.aborted) {
    try {
      const resource = random.chance(0.8) ? `tenant_${random.skewed(400)}:billing-close:2026-11` : "cron:nightly-report";
      const ttlMs = random.int(2_000, 8_000);
      const result = await store.acquire({ resource, owner: makeOwner(random, "billing"), task: makeTask(random), ttlMs });
      if (result.acquired) {
        // Sometimes it manages one heartbeat before dying.
        if (random.chance(0.4) && (await sleepFor(ttlMs / 3, ctx.signal))) {
          await store.renew({ resource, leaseId: result.lease.leaseId, ttlMs });
        }
        ctx.counters.crashed += 1;
      }
    } catch (error) {
      if (!ctx.signal.aborted) await noteError(ctx, error);
    }
    await sleepFor(random.between(4_000, 12_000), ctx.signal);
  }
}

/** Hot spots: many workers on a few resources, waiting with back-off → `contended` events. */
export async function runHotSpot(ctx: WorkerContext): Promise<void> {
  const { random } = ctx;
  // A gentler back-off than the default: waiters still contend, without spending the whole write budget.
  const client = new LeaseClient(ctx.store, { meterProvider: ctx.meterProvider, owner: makeOwner(random, "scheduler"), backoff: { baseMs: 200, capMs: 1_500 } });
  while (!ctx.signal.aborted) {
    // The first two (the nightly cron and the migration) are the hottest.
    const resource = random.chance(0.5) ? random.pick(HOT_RESOURCES.slice(0, 2)) : random.pick(HOT_RESOURCES);
    try {
      await client.withLease(resource, async ({ signal }) => sleepFor(random.between(300, 1_500), signal, ctx.signal), {
        task: makeTask(random),
        ttlMs: 5_000,
        waitMs: 3_000,
        signal: ctx.signal,
      });
    } catch (error) {
      await handleLeaseError(ctx, error);
    }
    await sleepFor(random.between(300, 2_000), ctx.signal);
  }
}

/**
 * Stale writers: take a short lease, write downstream with its fencing token,
 * then stall past the TTL (a long GC pause). A rescuer takes the resource over
 * with a higher token and writes; when the stale writer wakes and writes with
 * its old token the downstream refuses it (`fencing_rejected`), and its renew
 * fails (`renew_failed` → `lost`).
 */
export async function runStaleWriter(ctx: WorkerContext): Promise<void> {
  const { random, store, downstream } = ctx;
  if (!downstream) return;
  const owner = makeOwner(random, "ledger");
  const rescuer = new LeaseClient(store, { meterProvider: ctx.meterProvider, owner: makeOwner(random, "ledger") });
  const ttlMs = 1_000;
  while (!ctx.signal.aborted) {
    try {
      const resource = pickLedgerResource(random, downstream.ledgerTenants);
      const task = makeTask(random);
      const result = await store.acquire({ resource, owner, task, ttlMs });
      if (result.acquired) {
        const { leaseId, fencingToken } = result.lease;
        const write = (who: { owner: string; task: string; leaseId: string; fencingToken: string }) =>
          fencedWrite({
            pool: downstream.pool,
            table: downstream.table,
            key: resource,
            value: { writer: who.owner, task: who.task, at: new Date().toISOString() },
            fencingToken: who.fencingToken,
            resource,
            store,
            by: "ledger-db",
            meterProvider: ctx.meterProvider,
            owner: who.owner,
            task: who.task,
            leaseId: who.leaseId,
          });
        const stale = { owner, task, leaseId, fencingToken };
        const first = await write(stale);
        if (first.accepted) ctx.counters.fencedAccepted += 1;
        // The rescuer notices the lapsed lease shortly after the TTL and takes over.
        const rescue = sleepFor(ttlMs * 1.2, ctx.signal).then(async (isOnTime) => {
          if (!isOnTime) return;
          await rescuer.withLease(
            resource,
            async ({ lease, signal }) => {
              const w = await write(lease);
              if (w.accepted) ctx.counters.fencedAccepted += 1;
              await sleepFor(800, signal, ctx.signal);
            },
            { task: makeTask(random), ttlMs: 5_000, waitMs: 2_000, signal: ctx.signal },
          );
          // Handled here, not where it is awaited: if the stale writer's own steps throw first
          // (a store going down), the rescue must not become an unhandled rejection meanwhile.
        }).catch((error: unknown) => handleLeaseError(ctx, error));
        // The pause: longer than the TTL, and longer than the rescuer's first write.
        await sleepFor(ttlMs * 1.6, ctx.signal);
        const late = await write(stale);
        if (late.accepted) ctx.counters.fencedAccepted += 1;
        else ctx.counters.fencedRejected += 1;
        const renewal = await store.renew({ resource, leaseId, ttlMs });
        if (!renewal.renewed) await store.reportLost({ resource, leaseId, owner, task, fencingToken, reason: renewal.reason });
        else await store.release({ resource, leaseId });
        await rescue;
      }
    } catch (error) {
      if (!ctx.signal.aborted) await noteError(ctx, error);
    }
    await sleepFor(random.between(8_000, 20_000), ctx.signal);
  }
}

/** Occasional long holds (minutes), so the leases page has countdowns and "held for" variety. */
export async function runLongHold(ctx: WorkerContext): Promise<void> {
  const { random } = ctx;
  const client = new LeaseClient(ctx.store, { meterProvider: ctx.meterProvider, owner: makeOwner(random, "maintenance") });
  while (!ctx.signal.aborted) {
    const resource = random.pick(LONG_HOLD_RESOURCES);
    try {
      await client.withLease(
        resource,
        async ({ signal }) => {
          ctx.counters.longHolds += 1;
          await sleepFor(random.between(2 * 60_000, 8 * 60_000), signal, ctx.signal);
        },
        { task: makeTask(random), ttlMs: 30_000, waitMs: 0, signal: ctx.signal },
      );
    } catch (error) {
      await handleLeaseError(ctx, error);
    }
    await sleepFor(random.between(5_000, 30_000), ctx.signal);
  }
}

/** Clients sweep opportunistically; so does the workload, every few seconds. */
export async function runSweeper(ctx: WorkerContext): Promise<void> {
  while (await sleepFor(5_000, ctx.signal)) {
    try {
      await ctx.store.sweep();
    } catch (error) {
      if (!ctx.signal.aborted) await noteError(ctx, error);
    }
  }
}

export const WORKERS: Record<WorkerKind, (ctx: WorkerContext) => Promise<void>> = {
  "well-behaved": runWellBehaved,
  "slow-renewer": runSlowRenewer,
  crashing: runCrashing,
  "hot-spot": runHotSpot,
  "stale-writer": runStaleWriter,
  "long-hold": runLongHold,
  sweeper: runSweeper,
};

/** Workers per kind at intensity 1 (≈ 15 writes/s per store). */
export const BASE_WORKER_COUNTS: Record<WorkerKind, number> = {
  "well-behaved": 4,
  "slow-renewer": 2,
  crashing: 1,
  "hot-spot": 4,
  "stale-writer": 1,
  "long-hold": 3,
  sweeper: 1,
};
