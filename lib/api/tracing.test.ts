import { context, propagation, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiFixture, type ApiFixture } from "@/test/support/api-server";
import { createTestTelemetry, enableContextPropagation, type TestTelemetry } from "@/test/support/telemetry";

/**
 * One trace from a worker calling the lock API over HTTP to the store call: the caller's
 * `traceparent` is continued by the API's request span, and the store calls run under it.
 * The SDK is registered globally, as a service's would be.
 */
let api: ApiFixture;
let token: string;
let otel: TestTelemetry;
let disableContext: () => void;

beforeAll(async () => {
  otel = createTestTelemetry();
  disableContext = enableContextPropagation();
  trace.setGlobalTracerProvider(otel.tracerProvider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  api = await startApiFixture();
  token = await api.createToken({ prefixes: ["ten1:"] });
});
afterAll(async () => {
  await api?.close();
  trace.disable();
  propagation.disable();
  disableContext();
  await otel.shutdown();
});

describe.each(["postgres", "redis"] as const)("a worker's trace through the lock API on %s", (kind) => {
  it("continues the caller's traceparent into the request span and the store calls under it", async () => {
    const store = kind === "postgres" ? api.pg.spec.name : api.redis.spec.name;
    const worker = otel.tracerProvider.getTracer("python-worker");
    const resource = `ten1:billing-close:${kind}`;
    const callerSpan = worker.startSpan("close-books");
    const callerContext = trace.setSpan(context.active(), callerSpan);
    // What any W3C-speaking client sends: traceparent of its current span.
    const headers: Record<string, string> = {};
    propagation.inject(callerContext, headers);
    expect(headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);

    const acquired = await api.call(token, "POST", "/v1/locks/acquire", { store, resource, ownerId: "w1", task: "close", ttlMs: 10_000 }, headers);
    expect(acquired.body.acquired).toBe(true);
    const handle = String(acquired.body.leaseId);
    expect((await api.call(token, "POST", `/v1/locks/${handle}/renew`, { ttlMs: 10_000 }, headers)).body.renewed).toBe(true);
    expect((await api.call(token, "DELETE", `/v1/locks/${handle}`, undefined, headers)).body.released).toBe(true);
    callerSpan.end();

    const traceId = callerSpan.spanContext().traceId;
    const spans = otel.spans().filter((s) => s.spanContext().traceId === traceId);
    const parentOf = (s: (typeof spans)[number]) => s.parentSpanContext?.spanId;
    const requests = spans.filter((s) => s.instrumentationScope.name === "@leasewatch/api");
    expect(requests.map((s) => [s.name, s.attributes["http.response.status_code"], parentOf(s)])).toEqual([
      ["POST /v1/locks/acquire", 200, callerSpan.spanContext().spanId],
      ["POST /v1/locks/:leaseId/renew", 200, callerSpan.spanContext().spanId],
      ["DELETE /v1/locks/:leaseId", 200, callerSpan.spanContext().spanId],
    ]);
    // Each store call is a child of its request's span, in the caller's trace.
    const storeCalls = spans.filter((s) => s.name.startsWith("lease."));
    expect(storeCalls.map((s) => [s.name, s.attributes["leasewatch.store"], s.attributes["leasewatch.outcome"], parentOf(s)])).toEqual([
      ["lease.acquire", store, "granted", requests[0]!.spanContext().spanId],
      ["lease.renew", store, "renewed", requests[1]!.spanContext().spanId],
      ["lease.release", store, "released", requests[2]!.spanContext().spanId],
    ]);
    // The resource name stays out of span attributes; its prefix group is there.
    expect(storeCalls.every((s) => s.attributes["leasewatch.prefix_group"] === "ten1:billing-close")).toBe(true);
    expect(storeCalls.flatMap((s) => Object.values(s.attributes))).not.toContain(resource);
  });
});
