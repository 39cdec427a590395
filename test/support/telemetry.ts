/**
 * An OpenTelemetry SDK that keeps everything in memory, for tests that check what the
 * library reports: the SDK's own in-memory exporters, read on demand.
 */
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { AggregationTemporality, DataPointType, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from "@opentelemetry/sdk-trace";

/** One data point as collected: a counter's or gauge's value, a histogram's count and sum. */
export interface MetricPoint {
  name: string;
  unit: string;
  attributes: Record<string, unknown>;
  value?: number;
  count?: number;
  sum?: number;
}

export interface TestTelemetry {
  meterProvider: MeterProvider;
  tracerProvider: TracerProvider;
  /** Every data point now (cumulative since the start). */
  collect(): Promise<MetricPoint[]>;
  /** Every span ended so far. */
  spans(): ReadableSpan[];
  shutdown(): Promise<void>;
}

export function createTestTelemetry(): TestTelemetry {
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Exports only when asked (forceFlush): no timer races with the test.
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spanExporter })] });
  return {
    meterProvider,
    tracerProvider,
    async collect() {
      metricExporter.reset();
      await reader.forceFlush();
      const points: MetricPoint[] = [];
      for (const resourceMetrics of metricExporter.getMetrics()) {
        for (const scope of resourceMetrics.scopeMetrics) {
          for (const metric of scope.metrics) {
            for (const point of metric.dataPoints) {
              const base = { name: metric.descriptor.name, unit: metric.descriptor.unit, attributes: { ...point.attributes } };
              if (metric.dataPointType === DataPointType.HISTOGRAM) {
                const value = point.value as { count: number; sum?: number };
                points.push({ ...base, count: value.count, sum: value.sum ?? 0 });
              } else points.push({ ...base, value: point.value as number });
            }
          }
        }
      }
      return points;
    },
    spans: () => spanExporter.getFinishedSpans(),
    async shutdown() {
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
    },
  };
}

/** Makes `context.with` / the active span follow async work, as an SDK in a service does. Returns the undo. */
export function enableContextPropagation(): () => void {
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  return () => {
    context.disable();
    manager.disable();
  };
}

/** Points of `name` whose attributes include `match`. */
export function pointsOf(points: MetricPoint[], name: string, match: Record<string, unknown> = {}): MetricPoint[] {
  return points.filter((p) => p.name === name && Object.entries(match).every(([k, v]) => p.attributes[k] === v));
}

/** Sum of the values (counters) or counts (histograms) of the matching points. */
export function totalOf(points: MetricPoint[], name: string, match: Record<string, unknown> = {}): number {
  return pointsOf(points, name, match).reduce((sum, p) => sum + (p.value ?? p.count ?? 0), 0);
}
