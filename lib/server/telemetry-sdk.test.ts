import { createServer } from "node:net";
import { context, metrics, propagation, trace } from "@opentelemetry/api";
import { afterEach, describe, expect, it } from "vitest";
import { LeaseClient } from "@leasewatch/lease";
import { createStoreFixture } from "@/test/support/stores";
import { planTelemetry, startTelemetry } from "./telemetry-sdk";

describe("planTelemetry", () => {
  it("starts nothing when no OTEL_* setting is there, or the SDK is disabled", () => {
    expect(planTelemetry("svc", {}).isEnabled).toBe(false);
    expect(planTelemetry("svc", { OTEL_RESOURCE_ATTRIBUTES: "a=b" }).isEnabled).toBe(false);
    expect(planTelemetry("svc", { OTEL_METRICS_EXPORTER: "prometheus", OTEL_SDK_DISABLED: "true" }).isEnabled).toBe(false);
    // A name alone exports nothing: no exporter was chosen and no endpoint given.
    expect(planTelemetry("svc", { OTEL_SERVICE_NAME: "x" })).toMatchObject({ isEnabled: false, traces: "none", metrics: "none" });
  });

  it("exports over OTLP what an endpoint is given for, and what the exporters name", () => {
    expect(planTelemetry("svc", { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toEqual({ isEnabled: true, serviceName: "svc", traces: "otlp", metrics: "otlp", logs: "none" });
    expect(planTelemetry("svc", { OTEL_METRICS_EXPORTER: "prometheus", OTEL_SERVICE_NAME: "worker-7" })).toEqual({
      isEnabled: true,
      serviceName: "worker-7",
      traces: "none",
      metrics: "prometheus",
      logs: "none",
    });
    expect(planTelemetry("svc", { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces" })).toMatchObject({ traces: "otlp", metrics: "none" });
    expect(planTelemetry("svc", { OTEL_TRACES_EXPORTER: "console", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_METRICS_EXPORTER: "none" })).toMatchObject({ traces: "console", metrics: "none" });
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("startTelemetry", () => {
  afterEach(() => {
    metrics.disable();
    trace.disable();
    propagation.disable();
    context.disable();
  });

  it("returns null and registers nothing without settings", async () => {
    expect(await startTelemetry("svc", {})).toBeNull();
    expect(metrics.getMeterProvider().constructor.name).toBe("NoopMeterProvider");
  });

  it("serves the library's instruments on the Prometheus exporter it was asked for", async () => {
    const port = await freePort();
    const saved = { ...process.env };
    Object.assign(process.env, { OTEL_METRICS_EXPORTER: "prometheus", OTEL_EXPORTER_PROMETHEUS_HOST: "127.0.0.1", OTEL_EXPORTER_PROMETHEUS_PORT: String(port), OTEL_SERVICE_NAME: "test-worker" });
    const running = await startTelemetry("svc");
    const fixture = await createStoreFixture("redis");
    try {
      expect(running?.plan).toMatchObject({ metrics: "prometheus", traces: "none", serviceName: "test-worker" });
      // No provider passed: the client finds the SDK's global one.
      await new LeaseClient(fixture.store, { owner: "w" }).withLease("tenant_1:jobs:42", async () => "done", { task: "t", ttlMs: 2_000 });
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(text).toMatch(/^leasewatch_lease_acquire_duration_count\{[^}]*leasewatch_outcome="granted"[^}]*\} 1$/m);
      expect(text).toMatch(/^leasewatch_store_operation_duration_count\{[^}]*leasewatch_operation="release"[^}]*\} 1$/m);
      expect(text).toContain('leasewatch_prefix_group="tenant_1:jobs"');
      expect(text).toMatch(/^leasewatch_pool_connections_max\{[^}]*leasewatch_store="redis-test"[^}]*\} 1$/m);
      expect(text).not.toContain("tenant_1:jobs:42");
    } finally {
      await running?.shutdown();
      await fixture.cleanup();
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    }
  });
});
