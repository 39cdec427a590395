/**
 * The workload's workers report their OpenTelemetry metrics (LeaseClient, fencedWrite) on a
 * Prometheus endpoint of their own: what a user's worker with the SDK's Prometheus exporter
 * shows, so the worker-side alerts and panels (ops/) have demo data.
 */
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";

export interface WorkerMetrics {
  meterProvider: MeterProvider;
  /** http://host:port/metrics */
  url: string;
  stop(): Promise<void>;
}

/** Serves the workers' metrics on host:port; rejects when the port is taken. */
export async function startWorkerMetrics(options: { host?: string; port: number }): Promise<WorkerMetrics> {
  const host = options.host ?? "127.0.0.1";
  let exporter: PrometheusExporter | undefined;
  await new Promise<void>((resolve, reject) => {
    exporter = new PrometheusExporter({ host, port: options.port }, (error) => (error ? reject(error) : resolve()));
  });
  const meterProvider = new MeterProvider({ readers: [exporter!] });
  return {
    meterProvider,
    url: `http://${host}:${options.port}/metrics`,
    stop: () => meterProvider.shutdown(),
  };
}
