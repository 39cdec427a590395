import { afterAll, describe, expect, it } from "vitest";
import { LeaseClient, type LeaseClientEvent, LeaseLostError } from "@leasewatch/lease";
import { sleep } from "@leasewatch/lease/testing";
import { startPostgres, startRedis, stopAllServers } from "@/test/support/servers";
import { collectEvents, createStoreFixture, recordCalls } from "@/test/support/stores";

afterAll(stopAllServers);

/**
 * The store becomes unreachable while a lease is held. The client cannot renew,
 * so when its local deadline passes it must abort the work ("deadline_passed")
 * and never renew again — even when the store comes back.
 */
describe("LeaseClient when the store goes away", () => {
  it("redis killed: renews fail, the deadline passes, the work is aborted", async () => {
    const server = await startRedis();
    const fixture = await createStoreFixture("redis", { url: server.url });
    const recorded = recordCalls(fixture.open());
    let callsAtLoss = -1;
    let callsAtKill = -1;
    const renewErrors: LeaseClientEvent[] = [];
    // `lost` is emitted before the client reports it to the store.
    const onEvent = (e: LeaseClientEvent) => {
      if (e.type === "lost") callsAtLoss = recorded.calls.length;
      if (e.type === "renew_error") renewErrors.push(e);
    };
    const client = new LeaseClient(recorded.store, { owner: "w", onEvent });
    let reason: unknown;
    const run = client.withLease(
      "job:outage",
      async ({ signal }) => {
        callsAtKill = recorded.calls.length;
        await server.kill9();
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
        reason = signal.reason;
        return "done";
      },
      { task: "t", ttlMs: 600 },
    );
    await expect(run).rejects.toMatchObject({ name: "LeaseLostError", reason: "deadline_passed" });
    expect(reason).toBeInstanceOf(LeaseLostError);
    // The client really tried to keep it: renews were sent while the store was gone, and they failed.
    expect(recorded.calls.slice(callsAtKill, callsAtLoss).filter((c) => c === "renew").length).toBeGreaterThan(0);
    expect(renewErrors.length).toBeGreaterThan(0);
    await server.restart();
    await sleep(600);
    // After the loss: the best-effort `lost` report and the release by lease id, and no renew, ever.
    expect(callsAtLoss).toBeGreaterThan(0);
    expect(recorded.calls.slice(callsAtLoss).sort()).toEqual(["release", "reportLost"]);
    await fixture.cleanup();
  });

  it("postgres frozen (SIGSTOP): renews hang, the deadline passes, lost is recorded once it thaws", async () => {
    const server = await startPostgres();
    const fixture = await createStoreFixture("postgres", { url: server.url });
    const recorded = recordCalls(fixture.open());
    let callsAtLoss = -1;
    let callsAtPause = -1;
    // `lost` is emitted before the client reports it to the store.
    const onEvent = (e: LeaseClientEvent) => {
      if (e.type === "lost") callsAtLoss = recorded.calls.length;
    };
    const client = new LeaseClient(recorded.store, { owner: "w", onEvent });
    const run = client.withLease(
      "job:frozen",
      async ({ signal }) => {
        callsAtPause = recorded.calls.length;
        server.pause();
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
        server.resume();
        return "done";
      },
      { task: "t", ttlMs: 600 },
    );
    await expect(run).rejects.toMatchObject({ name: "LeaseLostError", reason: "deadline_passed" });
    // The report is best effort; with the server back it lands.
    let lost = await collectEvents(fixture.store, { resource: "job:frozen", kinds: ["lost"] });
    for (let i = 0; i < 50 && lost.length === 0; i++) {
      await sleep(100);
      lost = await collectEvents(fixture.store, { resource: "job:frozen", kinds: ["lost"] });
    }
    expect(lost.map((e) => e.reason)).toEqual(["deadline_passed"]);
    // A renew was sent into the frozen server (it hung): the loss came from the deadline, not from never trying.
    expect(recorded.calls.slice(callsAtPause, callsAtLoss)).toContain("renew");
    // The hung renew may still have landed after the thaw, but after the loss only the report and a release by id were sent.
    await sleep(600);
    expect(callsAtLoss).toBeGreaterThan(0);
    expect(recorded.calls.slice(callsAtLoss).sort()).toEqual(["release", "reportLost"]);
    expect(await fixture.store.get("job:frozen")).toBeNull();
    await fixture.cleanup();
  });
});
