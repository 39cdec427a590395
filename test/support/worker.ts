/**
 * A standalone worker process for fault tests. Started with
 * `node --import tsx test/support/worker.ts` (see worker-process.ts), spec as JSON
 * in LW_WORKER_SPEC. It acquires leases with LeaseClient and writes one JSON line
 * per thing that happened to stdout, so a test can kill -9 / SIGSTOP / SIGCONT it
 * and check what it did:
 *
 *   {"type":"acquired","resource","leaseId","token"} (work started)   {"type":"granted",…} (store granted it)   {"type":"renewed"|"renew_refused"|"renew_error"|"lost",…}
 *   {"type":"write","accepted",…,"token","seenToken"?}  {"type":"released"|"lost_error"|"timeout"|"error",…}  {"type":"done"}
 *
 * Modes:
 * - hold:   one withLease on resources[0]; writes every writeEveryMs for durationMs.
 * - manual: client.acquire() and its own loop: sleep, renew, print, write, print.
 * - loop:   withLease over random resources until durationMs; each hold does a few
 *           writes; before a write it may freeze the whole process (Atomics.wait, a
 *           stop-the-world pause like a long GC) AFTER checking the signal — the
 *           race fencing exists for.
 * `ignoreSignal` makes a zombie: it keeps writing after the lease was lost.
 */
import pg from "pg";
import { z } from "zod";
import { AcquireTimeoutError, fencedWrite, LeaseClient, type LeaseClientEvent, LeaseLostError } from "@leasewatch/lease";
import { createRandom, sleep } from "@leasewatch/lease/testing";
import { openStore, ZStoreSpec } from "./stores";

export const ZWorkerSpec = z.strictObject({
  store: ZStoreSpec,
  owner: z.string(),
  mode: z.enum(["hold", "manual", "loop"]),
  resources: z.array(z.string()).min(1),
  task: z.string().default("work"),
  ttlMs: z.number().int(),
  waitMs: z.number().int().default(0),
  durationMs: z.number().int().default(60_000),
  writeEveryMs: z.number().int().default(100),
  writesPerHold: z.number().int().default(3),
  ignoreSignal: z.boolean().default(false),
  fenced: z.strictObject({ url: z.string(), table: z.string(), by: z.string(), history: z.boolean().default(false) }).optional(),
  pause: z.strictObject({ probability: z.number().min(0).max(1), minMs: z.number().int(), maxMs: z.number().int() }).optional(),
  backoff: z.strictObject({ baseMs: z.number().int(), capMs: z.number().int() }).optional(),
  seed: z.number().int().default(1),
});
export type WorkerSpec = z.input<typeof ZWorkerSpec>;

function print(line: Record<string, unknown>): void {
  // stdout to a pipe is synchronous on Linux: a line printed is a line the test sees, even if we are killed next.
  process.stdout.write(`${JSON.stringify({ ...line, pid: process.pid, t: Math.round(performance.now()) })}\n`);
}

/** Freezes the whole process, timers included (a stop-the-world pause). */
const freeze = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function printClientEvent(event: LeaseClientEvent): void {
  switch (event.type) {
    case "renewed":
      return print({ type: "renewed", resource: event.resource, leaseId: event.leaseId, renewals: event.renewals });
    case "renew_refused":
      return print({ type: "renew_refused", resource: event.resource, leaseId: event.leaseId, reason: event.reason });
    case "renew_error":
      return print({ type: "renew_error", resource: event.resource, leaseId: event.leaseId, error: describeError(event.error) });
    case "lost":
      return print({ type: "lost", resource: event.resource, leaseId: event.leaseId, reason: event.reason });
    case "released":
      return print({ type: "released", resource: event.resource, leaseId: event.leaseId, released: event.result.released });
    // Every lease the store granted, including one whose reply came too late for the work to start.
    case "acquired":
      return print({ type: "granted", resource: event.lease.resource, leaseId: event.lease.leaseId, token: event.lease.fencingToken });
    default:
      return;
  }
}

async function main(): Promise<void> {
  const spec = ZWorkerSpec.parse(JSON.parse(process.env.LW_WORKER_SPEC ?? process.argv[2] ?? "{}"));
  const random = createRandom(spec.seed);
  const store = openStore(spec.store);
  const pool = spec.fenced ? new pg.Pool({ connectionString: spec.fenced.url, max: 2 }) : null;
  pool?.on("error", () => undefined);
  const client = new LeaseClient(store, {
    owner: spec.owner,
    random,
    onEvent: printClientEvent,
    ...(spec.backoff ? { backoff: spec.backoff } : {}),
  });
  const startedAt = performance.now();
  // SIGUSR2 ends the run early, as if durationMs had passed: a test stops its workers once the
  // thing it waited for (a reshard, a restart) is over, however long that took on a busy machine.
  let isStopRequested = false;
  process.on("SIGUSR2", () => {
    isStopRequested = true;
  });
  const isTimeLeft = () => !isStopRequested && performance.now() - startedAt < spec.durationMs;

  const write = async (resource: string, token: string, leaseId: string) => {
    if (!pool || !spec.fenced) return;
    const r = await fencedWrite({
      pool,
      table: spec.fenced.table,
      key: resource,
      value: { owner: spec.owner, token },
      fencingToken: token,
      resource,
      store,
      by: spec.fenced.by,
      history: spec.fenced.history,
      owner: spec.owner,
      task: spec.task,
      leaseId,
    });
    print(r.accepted ? { type: "write", resource, accepted: true, token } : { type: "write", resource, accepted: false, token, seenToken: r.seenToken });
  };

  print({ type: "ready" });
  try {
    if (spec.mode === "manual") {
      const resource = spec.resources[0]!;
      const handle = await client.acquire(resource, { task: spec.task, ttlMs: spec.ttlMs, waitMs: spec.waitMs });
      print({ type: "acquired", resource, leaseId: handle.leaseId, token: handle.fencingToken });
      await write(resource, handle.fencingToken, handle.leaseId);
      while (isTimeLeft() && !handle.isLost) {
        await sleep(spec.writeEveryMs);
        try {
          const r = await handle.renew();
          print({ type: "renew", resource, renewed: r.renewed, reason: r.renewed ? null : r.reason });
          if (!r.renewed && !spec.ignoreSignal) break;
        } catch (error) {
          print({ type: "renew_error", resource, error: describeError(error) });
        }
        await write(resource, handle.fencingToken, handle.leaseId);
      }
      if (!handle.isLost) print({ type: "released", resource, released: (await handle.release()).released });
    } else {
      const holds = spec.mode === "hold" ? 1 : Number.POSITIVE_INFINITY;
      for (let n = 0; n < holds && isTimeLeft(); n++) {
        const resource = spec.resources[Math.floor(random() * spec.resources.length)]!;
        try {
          await client.withLease(
            resource,
            async ({ signal, fencingToken, lease }) => {
              print({ type: "acquired", resource, leaseId: lease.leaseId, token: fencingToken });
              const writes = spec.mode === "hold" ? Number.POSITIVE_INFINITY : spec.writesPerHold;
              for (let w = 0; w < writes && (spec.mode === "loop" || isTimeLeft()); w++) {
                if (signal.aborted && !spec.ignoreSignal) throw signal.reason;
                // The pause sits between the check above and the write below.
                if (spec.pause && random() < spec.pause.probability) {
                  const ms = spec.pause.minMs + Math.floor(random() * (spec.pause.maxMs - spec.pause.minMs));
                  print({ type: "pause", resource, ms });
                  freeze(ms);
                }
                await write(resource, fencingToken, lease.leaseId);
                await sleep(spec.writeEveryMs);
              }
            },
            { task: spec.task, ttlMs: spec.ttlMs, waitMs: spec.waitMs },
          );
        } catch (error) {
          if (error instanceof LeaseLostError) print({ type: "lost_error", resource, reason: error.reason });
          else if (error instanceof AcquireTimeoutError) print({ type: "timeout", resource });
          else throw error;
        }
      }
    }
  } catch (error) {
    print({ type: "error", error: describeError(error) });
    process.exitCode = 1;
  } finally {
    await store.close().catch(() => undefined);
    await pool?.end().catch(() => undefined);
    print({ type: "done" });
  }
}

void main();
