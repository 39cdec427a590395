/**
 * Lease traffic across a server restart, shared by the restart fault tests:
 * four LeaseClients cycle over three resources, the server restarts mid-run,
 * and the run records what a test needs to check afterwards.
 */
import { LeaseClient } from "@/lib/lease/client";
import { sleep } from "@/lib/lease/testing/isolation";
import type { ThrowawayServer } from "./servers";
import type { StoreFixture } from "./stores";

export interface RestartRun {
  /** Fencing tokens per resource, in acquisition order (one holder at a time per resource). */
  tokens: Map<string, bigint[]>;
  /** Acquisitions before and after the restart. */
  acquiredIn: { before: number; after: number };
}

/**
 * Runs the clients for 1.5 s, restarts `server`, runs them `afterMs` more, then
 * stops them and waits until every loop has finished. A failed attempt
 * (contention, a lease lost across the restart, the store briefly unreachable)
 * is retried after `retryMs`.
 */
export async function runAcrossRestart(
  fixture: StoreFixture,
  server: ThrowawayServer,
  options: { ttlMs: number; retryMs: number; afterMs: number },
): Promise<RestartRun> {
  const resources = ["acct:0", "acct:1", "acct:2"];
  const tokens = new Map<string, bigint[]>(resources.map((r) => [r, []]));
  let phase: "before" | "after" = "before";
  const acquiredIn = { before: 0, after: 0 };
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
      } catch {
        await sleep(options.retryMs);
      }
    }
  });

  await sleep(1_500);
  await server.restart();
  phase = "after";
  await sleep(options.afterMs);
  isRunning = false;
  await Promise.all(loops);
  return { tokens, acquiredIn };
}
