import { describe, expect, it } from "vitest";
import { readFencedHistory } from "@leasewatch/lease";
import { TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { collectEvents } from "@/test/support/stores";
import { spawnWorker, type WorkerLine } from "@/test/support/worker-process";
import { setUpFencedWorkerRuns } from "@/test/support/fenced-runs";

/**
 * A holder is frozen (SIGSTOP) past its TTL; another worker takes over and writes
 * downstream; the old holder is thawed (SIGCONT) and carries on as if nothing
 * happened. Its renew is refused (not_owner), its write is refused by the fenced
 * downstream and recorded as fencing_rejected; the new holder's writes stand.
 */
describe.each(["redis", "postgres"] as const)("SIGSTOP a holder past its TTL (%s)", (kind) => {
  const run = setUpFencedWorkerRuns(kind, "ledger");

  it("the thawed holder's renew fails and its fenced write is rejected and recorded", async () => {
    const resource = "ledger:tenant_42";
    const fenced = { url: TEST_DATABASE_URL, table: run.table, by: "ledger-db", history: true };
    const isWrite = (accepted: boolean) => (l: WorkerLine) => l.type === "write" && l.accepted === accepted;

    // The old holder runs its own loop (renew, then write) and ignores losing: a zombie.
    const old = spawnWorker({ store: run.fixture.spec, owner: "old", mode: "manual", resources: [resource], ttlMs: 600, writeEveryMs: 100, ignoreSignal: true, fenced });
    const oldLease = await old.waitFor((l) => l.type === "acquired");
    await old.waitFor((l) => l.type === "renew" && l.renewed === true);
    await old.waitFor(isWrite(true));
    old.signal("SIGSTOP");

    const next = spawnWorker({
      store: run.fixture.spec,
      owner: "new",
      mode: "hold",
      resources: [resource],
      ttlMs: 5_000,
      waitMs: 15_000,
      writeEveryMs: 50,
      durationMs: 20_000,
      backoff: { baseMs: 10, capMs: 100 },
      fenced,
    });
    const newLease = await next.waitFor((l) => l.type === "acquired");
    await next.waitFor(isWrite(true));
    expect(BigInt(String(newLease.token)) > BigInt(String(oldLease.token))).toBe(true);

    const thawedAt = old.lines.length;
    old.signal("SIGCONT");
    // If it was frozen mid-request, the first line after the thaw may be the answer
    // to a renew or write sent before the freeze; the first *refused* renew is ours.
    const renew = await old.waitFor((l) => l.type === "renew" && l.renewed === false, 10_000, thawedAt);
    expect(renew).toMatchObject({ reason: "not_owner" });
    await old.exited;
    const staleWrites = old.lines.filter(isWrite(false));
    expect(staleWrites.length).toBeGreaterThanOrEqual(1);
    for (const stale of staleWrites) {
      expect(stale).toMatchObject({ token: oldLease.token });
      expect(BigInt(String(stale.seenToken)) >= BigInt(String(newLease.token))).toBe(true);
    }
    // The last thing the zombie tried was a write after its refused renew: refused.
    expect(old.linesOf("write").at(-1)).toMatchObject({ accepted: false });

    // The new holder keeps writing, accepted.
    const afterStale = next.lines.length;
    await next.waitFor(isWrite(true), 10_000, afterStale);
    await next.kill9();
    expect(next.linesOf("write").every((l) => l.accepted === true)).toBe(true);

    // The downstream's own history: only fresh tokens, never backwards.
    const history = await readFencedHistory({ pool: run.pool, table: run.table });
    const tokens = history.map((h) => BigInt(h.fencingToken));
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]! >= tokens[i - 1]!).toBe(true);
    const firstNew = history.findIndex((h) => h.fencingToken === newLease.token);
    expect(firstNew).toBeGreaterThanOrEqual(0);
    const oldAfterNew = history.slice(firstNew).filter((h) => h.fencingToken === oldLease.token);
    expect(oldAfterNew).toEqual([]);

    // The store heard about it: the refused write, the refused renew, and the loss.
    const rejected = await collectEvents(run.fixture.store, { resource, kinds: ["fencing_rejected"] });
    expect(rejected).toHaveLength(staleWrites.length);
    for (const event of rejected) expect(event).toMatchObject({ fencingToken: oldLease.token, leaseId: oldLease.leaseId, owner: "old" });
    const lost = await collectEvents(run.fixture.store, { resource, kinds: ["lost"] });
    expect(lost.map((e) => [e.leaseId, e.reason])).toEqual([[oldLease.leaseId, "not_owner"]]);
    expect((await collectEvents(run.fixture.store, { resource, kinds: ["renew_failed"] })).map((e) => e.leaseId)).toEqual([oldLease.leaseId]);
  });
});
