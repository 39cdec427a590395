import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createFencedDownstream, createStoreFixture, type FencedDownstream, type StoreFixture } from "@/test/support/stores";
import { createTestTelemetry, enableContextPropagation, pointsOf, totalOf, type MetricPoint, type TestTelemetry } from "@/test/support/telemetry";
import { LeaseClient } from "./client";
import { LeaseLostError } from "./errors";
import { fencedWrite } from "./fencing";
import { instrumentStore } from "./telemetry";
import { sleep, TEST_DATABASE_URL } from "./testing/isolation";
import type { LeaseStore } from "./types";

/**
 * What the library reports through OpenTelemetry, read back from the SDK's in-memory
 * exporters after known sequences of operations on real stores.
 */
const RESOURCE = "tenant_7:billing-close:2026-04";
const GROUP = "tenant_7:billing-close";

describe.each(["redis", "postgres"] as const)("OpenTelemetry on %s", (kind) => {
  let fixture: StoreFixture;
  let store: LeaseStore;
  let otel: TestTelemetry;
  let pool: pg.Pool;
  let downstream: FencedDownstream;
  let disableContext: () => void;
  const storeName = kind === "redis" ? "redis-test" : "pg-test";
  const makeClient = (owner = "worker-1") => new LeaseClient(store, { owner, meterProvider: otel.meterProvider, tracerProvider: otel.tracerProvider });

  beforeAll(async () => {
    disableContext = enableContextPropagation();
    pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
    downstream = await createFencedDownstream(pool, "invoices");
  });
  afterAll(async () => {
    await downstream.drop();
    await pool.end();
    disableContext();
  });
  beforeEach(async () => {
    fixture = await createStoreFixture(kind);
    store = fixture.store;
    otel = createTestTelemetry();
  });
  afterEach(async () => {
    await otel.shutdown();
    await fixture.cleanup();
  });

  it("times a contended acquire's whole wait, backoff included, in seconds", async () => {
    const holder = await store.acquire({ resource: RESOURCE, owner: "other", task: "t", ttlMs: 10_000 });
    expect(holder.acquired).toBe(true);
    if (!holder.acquired) return;
    // Released 300 ms from now: the worker waits at least that long.
    const releasing = sleep(300).then(() => store.release({ resource: RESOURCE, leaseId: holder.lease.leaseId }));
    await makeClient().withLease(RESOURCE, async () => "done", { task: "t", ttlMs: 5_000, waitMs: 10_000 });
    await releasing;

    const points = await otel.collect();
    const [wait, ...others] = pointsOf(points, "leasewatch.lease.acquire.duration");
    expect(others).toEqual([]);
    expect(wait).toMatchObject({ unit: "s", count: 1, attributes: { "leasewatch.store": storeName, "leasewatch.outcome": "granted", "leasewatch.prefix_group": GROUP } });
    // About 0.3: at least the 300 ms the holder kept it, and nowhere near 300 (milliseconds).
    expect(wait!.sum).toBeGreaterThanOrEqual(0.29);
    expect(wait!.sum).toBeLessThan(5);
    // Each attempt is one round trip: refused ones first, then the grant.
    expect(totalOf(points, "leasewatch.store.operation.duration", { "leasewatch.operation": "acquire", "leasewatch.outcome": "granted" })).toBe(1);
    expect(totalOf(points, "leasewatch.store.operation.duration", { "leasewatch.operation": "acquire", "leasewatch.outcome": "contended" })).toBeGreaterThanOrEqual(1);
    expect(totalOf(points, "leasewatch.store.operation.duration", { "leasewatch.operation": "release", "leasewatch.outcome": "released" })).toBe(1);
    // A round trip on loopback is far below the whole wait.
    const [granted] = pointsOf(points, "leasewatch.store.operation.duration", { "leasewatch.operation": "acquire", "leasewatch.outcome": "granted" });
    expect(granted!.sum).toBeLessThan(wait!.sum!);
    expect(totalOf(points, "leasewatch.lease.active")).toBe(0);
    expect(pointsOf(points, "leasewatch.lease.hold.duration", { "leasewatch.outcome": "released" })).toHaveLength(1);
  });

  it("records a gave-up acquire as a timeout", async () => {
    await store.acquire({ resource: RESOURCE, owner: "other", task: "t", ttlMs: 10_000 });
    await expect(makeClient().withLease(RESOURCE, async () => "never", { task: "t", ttlMs: 5_000, waitMs: 150 })).rejects.toThrow();
    const points = await otel.collect();
    expect(pointsOf(points, "leasewatch.lease.acquire.duration").map((p) => p.attributes["leasewatch.outcome"])).toEqual(["timeout"]);
    expect(totalOf(points, "leasewatch.lease.active")).toBe(0);
  });

  it("counts renewals by outcome, their slack, and the lease as active while held", async () => {
    const ttlMs = 600;
    let duringWork: MetricPoint[] = [];
    await makeClient().withLease(
      RESOURCE,
      async () => {
        // Two heartbeat periods and then some.
        await sleep(ttlMs);
        duringWork = await otel.collect();
      },
      { task: "t", ttlMs },
    );
    expect(totalOf(duringWork, "leasewatch.lease.active", { "leasewatch.prefix_group": GROUP })).toBe(1);

    const points = await otel.collect();
    const renewed = totalOf(points, "leasewatch.lease.renewals", { "leasewatch.outcome": "renewed" });
    expect(renewed).toBeGreaterThanOrEqual(1);
    expect(pointsOf(points, "leasewatch.lease.renewals").every((p) => p.attributes["leasewatch.outcome"] === "renewed")).toBe(true);
    expect(totalOf(points, "leasewatch.store.operation.duration", { "leasewatch.operation": "renew", "leasewatch.outcome": "renewed" })).toBe(renewed);
    const [slack] = pointsOf(points, "leasewatch.lease.renewal.slack");
    expect(slack).toMatchObject({ unit: "1", count: renewed });
    // Renewed at about a third of the TTL: well over half of it was left each time, never more than all of it.
    expect(slack!.sum! / renewed).toBeGreaterThan(0.3);
    expect(slack!.sum! / renewed).toBeLessThanOrEqual(1);
    expect(totalOf(points, "leasewatch.lease.active")).toBe(0);
    expect(totalOf(points, "leasewatch.lease.lost")).toBe(0);
  });

  it("counts a lost lease once, with its reason, as an event on the hold span", async () => {
    const ttlMs = 900;
    const run = makeClient().withLease(
      RESOURCE,
      async ({ signal, lease }) => {
        await store.forceRelease({ resource: lease.resource, leaseId: lease.leaseId, actor: "alice", reason: "stuck" });
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      },
      { task: "t", ttlMs },
    );
    await expect(run).rejects.toBeInstanceOf(LeaseLostError);
    // Longer than several heartbeats: nothing more is counted after the loss.
    await sleep(ttlMs);

    const points = await otel.collect();
    expect(pointsOf(points, "leasewatch.lease.lost").map((p) => [p.attributes["leasewatch.reason"], p.value])).toEqual([["not_owner", 1]]);
    expect(totalOf(points, "leasewatch.lease.renewals", { "leasewatch.outcome": "not_owner" })).toBe(1);
    expect(totalOf(points, "leasewatch.lease.renewals", { "leasewatch.outcome": "renewed" })).toBe(0);
    expect(totalOf(points, "leasewatch.lease.active")).toBe(0);
    expect(pointsOf(points, "leasewatch.lease.hold.duration").map((p) => [p.attributes["leasewatch.outcome"], p.count])).toEqual([["lost", 1]]);

    const [hold, ...moreHolds] = otel.spans().filter((s) => s.name === "lease.hold");
    expect(moreHolds).toEqual([]);
    expect(hold!.events.map((e) => [e.name, e.attributes?.["leasewatch.reason"]])).toEqual([["lease.lost", "not_owner"]]);
    expect(hold!.status.code).toBe(2); // SpanStatusCode.ERROR
  });

  it("nests the work's spans: renewals, the fenced write and the release under lease.hold", async () => {
    const tracer = otel.tracerProvider.getTracer("worker");
    const ttlMs = 600;
    let token = "";
    await tracer.startActiveSpan("job", async (job) => {
      await makeClient().withLease(
        RESOURCE,
        async ({ fencingToken }) => {
          token = fencingToken;
          const write = { pool, table: downstream.table, key: "invoice-1", value: { total: 42 }, resource: RESOURCE, by: "invoices-db", store, meterProvider: otel.meterProvider, tracerProvider: otel.tracerProvider };
          expect(await fencedWrite({ ...write, fencingToken })).toMatchObject({ accepted: true });
          // An older token, as a paused former holder would send.
          expect(await fencedWrite({ ...write, fencingToken: String(BigInt(fencingToken) - 1n) })).toMatchObject({ accepted: false });
          await sleep(ttlMs / 2);
        },
        { task: "t", ttlMs },
      );
      job.end();
    });

    const spans = otel.spans();
    const byName = (name: string) => spans.filter((s) => s.name === name);
    const [job] = byName("job");
    const [hold] = byName("lease.hold");
    const parentOf = (s: (typeof spans)[number]) => s.parentSpanContext?.spanId;
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    // The acquire is the work's sibling: both children of the caller's span.
    expect(byName("lease.acquire").map(parentOf)).toEqual([job!.spanContext().spanId]);
    expect(parentOf(hold!)).toBe(job!.spanContext().spanId);
    expect(hold!.attributes).toMatchObject({ "leasewatch.lease.fencing_token": token, "leasewatch.prefix_group": GROUP, "leasewatch.outcome": "released" });
    const holdId = hold!.spanContext().spanId;
    expect(byName("lease.renew").length).toBeGreaterThanOrEqual(1);
    expect(byName("lease.renew").every((s) => parentOf(s) === holdId)).toBe(true);
    expect(byName("lease.release").map(parentOf)).toEqual([holdId]);
    expect(byName("lease.fenced_write").map((s) => [parentOf(s), s.attributes["leasewatch.outcome"]])).toEqual([
      [holdId, "accepted"],
      [holdId, "rejected"],
    ]);

    const points = await otel.collect();
    expect(pointsOf(points, "leasewatch.fencing.rejections").map((p) => [p.attributes["leasewatch.store"], p.attributes["leasewatch.prefix_group"], p.value])).toEqual([[storeName, GROUP, 1]]);
    expect(totalOf(points, "leasewatch.store.operation.duration", { "leasewatch.operation": "fenced_write" })).toBe(2);
  });

  it("never puts a resource name, lease id or token in a metric attribute", async () => {
    const resources = [RESOURCE, "tenant_7:billing-close:2026-05", "tenant_8:payroll:run-1", "lonely-resource"];
    const seenIds: string[] = [];
    const client = makeClient();
    for (const resource of resources) {
      await client.withLease(
        resource,
        async ({ lease, fencingToken }) => {
          seenIds.push(lease.leaseId, fencingToken);
        },
        { task: "t", ttlMs: 2_000 },
      );
    }
    const points = await otel.collect();
    const values = points.flatMap((p) => Object.values(p.attributes).map(String));
    for (const secret of [...resources, ...seenIds]) expect(values).not.toContain(secret);
    for (const value of values) for (const resource of resources) expect(value.includes(resource)).toBe(false);
    expect(new Set(pointsOf(points, "leasewatch.lease.hold.duration").map((p) => p.attributes["leasewatch.prefix_group"]))).toEqual(
      new Set([GROUP, "tenant_8:payroll", "(none)"]),
    );
    // Spans carry the token on the hold span only, and never a resource name or lease id.
    for (const span of otel.spans()) {
      const spanValues = Object.values(span.attributes).map(String);
      for (const resource of resources) expect(spanValues).not.toContain(resource);
      for (const id of seenIds.filter((_, i) => i % 2 === 0)) expect(spanValues).not.toContain(id);
    }
  });

  it("observes the store's connections", async () => {
    await makeClient().withLease(RESOURCE, async () => "done", { task: "t", ttlMs: 2_000 });
    const points = await otel.collect();
    const [max] = pointsOf(points, "leasewatch.pool.connections.max", { "leasewatch.store": storeName });
    expect(max!.value).toBeGreaterThanOrEqual(1);
    const used = totalOf(points, "leasewatch.pool.connections", { "leasewatch.store": storeName, "leasewatch.connection.state": "used" });
    const idle = totalOf(points, "leasewatch.pool.connections", { "leasewatch.store": storeName, "leasewatch.connection.state": "idle" });
    // Nothing in flight between operations: every open connection is idle.
    expect(used).toBe(0);
    expect(idle).toBeGreaterThanOrEqual(1);
    expect(idle).toBeLessThanOrEqual(max!.value!);
    expect(totalOf(points, "leasewatch.pool.pending_requests", { "leasewatch.store": storeName })).toBe(0);
  });

  it("traces a store used directly (instrumentStore) under the caller's span", async () => {
    const traced = instrumentStore(store, { meterProvider: otel.meterProvider, tracerProvider: otel.tracerProvider });
    const tracer = otel.tracerProvider.getTracer("api");
    await tracer.startActiveSpan("request", async (request) => {
      const result = await traced.acquire({ resource: RESOURCE, owner: "o", task: "t", ttlMs: 2_000 });
      if (result.acquired) await traced.release({ resource: RESOURCE, leaseId: result.lease.leaseId });
      request.end();
    });
    // The rest of the store is the store's own.
    expect(traced.name).toBe(store.name);
    expect(await traced.get(RESOURCE)).toBeNull();
    const spans = otel.spans();
    const requestId = spans.find((s) => s.name === "request")!.spanContext().spanId;
    expect(spans.filter((s) => s.name.startsWith("lease.")).map((s) => [s.name, s.parentSpanContext?.spanId, s.attributes["leasewatch.outcome"]])).toEqual([
      ["lease.acquire", requestId, "granted"],
      ["lease.release", requestId, "released"],
    ]);
  });
});
