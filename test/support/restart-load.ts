/**
 * Lease traffic across a server restart, shared by the restart fault tests:
 * four LeaseClients cycle over three resources, the server restarts mid-run,
 * and the run records what a test needs to check afterwards — including every
 * failed attempt, classified, so a test can assert the restart really broke
 * something and that nothing failed for another reason.
 */
import { AcquireTimeoutError, LeaseClient, LeaseError, LeaseLostError } from "@leasewatch/lease";
import { sleep } from "@leasewatch/lease/testing";
import type { ThrowawayServer } from "./servers";
import type { StoreFixture } from "./stores";

/** before: the server is up; during: restart() is under way (stop, then start); after: it is back. */
export type RestartPhase = "before" | "during" | "after";

export type FailureKind =
  /** Waited out waitMs while others held the resource (or kept winning the insert race). */
  | "contention"
  /** The holder lost its lease (a renew refused or not answered before the local deadline). */
  | "lost"
  /** The store could not be reached or dropped the connection. */
  | "connection"
  /** Anything else: a test should treat it as a bug. */
  | "other";

export interface FailedAttempt {
  phase: RestartPhase;
  kind: FailureKind;
  message: string;
}

export interface RestartRun {
  /** Fencing tokens per resource, in acquisition order (one holder at a time per resource). */
  tokens: Map<string, bigint[]>;
  /** Acquisitions in each phase. */
  acquiredIn: { before: number; during: number; after: number };
  /** How long each phase lasted, ms (measured, so rates can be compared). */
  phaseMs: Record<RestartPhase, number>;
  /** Every attempt that threw, in order. */
  failures: FailedAttempt[];
}

// Postgres: admin_shutdown, crash_shutdown, cannot_connect_now, connection_exception family.
const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "57P01", "57P02", "57P03", "08000", "08001", "08003", "08006"]);
const CONNECTION_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed|the database system is (starting up|shutting down)|terminating connection due to administrator command|MaxRetriesPerRequest|ECONNREFUSED/i;

function isConnectionError(error: unknown, depth = 0): boolean {
  if (depth > 4 || !(error instanceof Error)) return false;
  const code = (error as Error & { code?: unknown }).code;
  if (typeof code === "string" && CONNECTION_CODES.has(code)) return true;
  if (CONNECTION_MESSAGES.test(error.message)) return true;
  if (error instanceof AggregateError && error.errors.some((e) => isConnectionError(e, depth + 1))) return true;
  return isConnectionError(error.cause, depth + 1);
}

export function classifyFailure(error: unknown): FailureKind {
  if (error instanceof AcquireTimeoutError) return "contention";
  if (error instanceof LeaseLostError) return "lost";
  if (error instanceof LeaseError && error.code === "contention") return "contention";
  return isConnectionError(error) ? "connection" : "other";
}

/** How long a phase may be stretched while it waits for `minAcquiredPerPhase` (a busy machine). */
const PHASE_STRETCH_LIMIT_MS = 30_000;

/**
 * Runs the clients for 1.5 s, restarts `server`, runs them `afterMs` more, then
 * stops them and waits until every loop has finished. A failed attempt is
 * recorded with its phase and kind, and retried after `retryMs`.
 * `minAcquiredPerPhase`: the phases before and after the restart last until at least this
 * many acquisitions happened in them (up to PHASE_STRETCH_LIMIT_MS more), so a test can ask
 * for work on both sides of the restart without racing a loaded machine's clock.
 */
export async function runAcrossRestart(
  fixture: StoreFixture,
  server: ThrowawayServer,
  options: { ttlMs: number; retryMs: number; afterMs: number; minAcquiredPerPhase?: number },
): Promise<RestartRun> {
  const resources = ["acct:0", "acct:1", "acct:2"];
  const tokens = new Map<string, bigint[]>(resources.map((r) => [r, []]));
  let phase: RestartPhase = "before";
  const acquiredIn = { before: 0, during: 0, after: 0 };
  const failures: FailedAttempt[] = [];
  let isRunning = true;

  const loops = Array.from({ length: 4 }, async (_, i) => {
    const client = new LeaseClient(fixture.open(), { owner: `w${i}`, backoff: { baseMs: 5, capMs: 40 } });
    let n = i;
    while (isRunning) {
      const resource = resources[n++ % resources.length]!;
      try {
        await client.withLease(
          resource,
          async ({ fencingToken }) => {
            tokens.get(resource)!.push(BigInt(fencingToken));
            acquiredIn[phase] += 1;
            await sleep(10);
          },
          { task: "restart-run", ttlMs: options.ttlMs, waitMs: 300 },
        );
      } catch (error) {
        failures.push({ phase, kind: classifyFailure(error), message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
        await sleep(options.retryMs);
      }
    }
  });

  const minAcquired = options.minAcquiredPerPhase ?? 0;
  const stretch = async (p: "before" | "after") => {
    const deadline = performance.now() + PHASE_STRETCH_LIMIT_MS;
    while (acquiredIn[p] < minAcquired && performance.now() < deadline) await sleep(20);
  };
  const started = performance.now();
  await sleep(1_500);
  await stretch("before");
  const restarting = performance.now();
  phase = "during";
  await server.restart();
  const restarted = performance.now();
  phase = "after";
  await sleep(options.afterMs);
  await stretch("after");
  isRunning = false;
  const stopped = performance.now();
  await Promise.all(loops);
  return {
    tokens,
    acquiredIn,
    phaseMs: { before: restarting - started, during: restarted - restarting, after: stopped - restarted },
    failures,
  };
}
