import { describe, expect, it } from "vitest";
import { readFencedHistory } from "@leasewatch/lease";
import { sleep, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { findRepeatedEnds, findStaleWrites, findTokenOrderViolations, holdsOnRecord } from "@/test/support/history-checks";
import { checkConservation, collectEvents } from "@/test/support/stores";
import { spawnWorker } from "@/test/support/worker-process";
import { setUpFencedWorkerRuns } from "@/test/support/fenced-runs";

/**
 * Eight worker processes compete for two resources with short TTLs; before some
 * writes a worker freezes entirely (longer than the TTL) right after checking its
 * signal — the classic stale-holder race. Judged by the store's own events: tokens
 * rise in acquisition order, and every write the downstream accepted after its
 * lease had ended is one the fence could not yet refuse (no newer hold had
 * written); the store's books must balance.
 */
describe.each(["redis", "postgres"] as const)("concurrent safety run (%s)", (kind) => {
  const run = setUpFencedWorkerRuns(kind, "accounts");

  it("no stale write accepted that the fence could have refused, every refusal recorded, conservation holds", async () => {
    const ttlMs = 300;
    const resources = ["acct:0", "acct:1"];
    const workers = Array.from({ length: 8 }, (_, i) =>
      spawnWorker({
        store: run.fixture.spec,
        owner: `w${i}`,
        mode: "loop",
        resources,
        ttlMs,
        waitMs: 1_000,
        durationMs: 5_000,
        writeEveryMs: 15,
        writesPerHold: 3,
        pause: { probability: 0.2, minMs: ttlMs + 100, maxMs: ttlMs * 3 },
        backoff: { baseMs: 5, capMs: 40 },
        fenced: { url: TEST_DATABASE_URL, table: run.table, by: "accounts-db", history: true },
        seed: 1_000 + i,
      }),
    );
    const exits = await Promise.all(workers.map((w) => w.exited));
    for (const [i, w] of workers.entries()) {
      expect(w.linesOf("error"), `worker ${i}: ${w.errors}`).toEqual([]);
      expect(exits[i]?.code, w.errors).toBe(0);
    }

    const writes = workers.flatMap((w) => w.linesOf("write"));
    const accepted = writes.filter((l) => l.accepted === true);
    const refused = writes.filter((l) => l.accepted === false);
    expect(accepted.length).toBeGreaterThan(20);
    // The pauses must actually have produced stale writes, or this run proved nothing.
    const lineCounts: Record<string, number> = {};
    for (const line of workers.flatMap((w) => w.lines)) lineCounts[String(line.type)] = (lineCounts[String(line.type)] ?? 0) + 1;
    expect(refused.length, `what the workers did: ${JSON.stringify(lineCounts)}`).toBeGreaterThan(0);
    for (const r of refused) expect(BigInt(String(r.seenToken)) > BigInt(String(r.token))).toBe(true);

    // The downstream's own, append-only history of accepted writes, against the store's acquisition order.
    const history = await readFencedHistory({ pool: run.pool, table: run.table, store: run.fixture.store });
    expect(history).toHaveLength(accepted.length);
    const events = await collectEvents(run.fixture.store);
    const holds = holdsOnRecord(events);
    expect(findTokenOrderViolations(holds)).toEqual([]);
    expect(findRepeatedEnds(events)).toEqual([]);
    const { stale, unexplained } = findStaleWrites(holds, history);
    expect(unexplained).toEqual([]);
    // Stale writes the fence let through because no newer holder had written yet (its documented limit).
    console.info(`${kind}: ${accepted.length} writes accepted, ${refused.length} refused, ${stale.length} accepted after their lease ended (before a newer holder wrote)`);

    const rejectedEvents = await collectEvents(run.fixture.store, { kinds: ["fencing_rejected"] });
    expect(rejectedEvents).toHaveLength(refused.length);

    // Leases of workers that lost them lapse on the store; wait them out, sweep, and balance the books.
    await sleep(ttlMs + 200);
    await run.fixture.store.sweep();
    const books = await checkConservation(run.fixture.store);
    expect(books.acquired).toBe(books.ended + books.held);
    expect(books.held).toBe(0);
    // Granted, not started: a lease whose reply came after its local deadline is given back without running the work.
    expect(books.acquired).toBe(workers.flatMap((w) => w.linesOf("granted")).length);
  });
});
