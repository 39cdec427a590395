/**
 * The services' OpenTelemetry SDK (console, lock API, sweeper, workload workers): the official
 * Node SDK, set up only from the standard environment, and only when some of it is set.
 *
 * - Nothing starts unless one of OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_ENDPOINT (or its
 *   _TRACES_ / _METRICS_ form), OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER is set, and
 *   OTEL_SDK_DISABLED is not true.
 * - Traces and metrics each go where their OTEL_*_EXPORTER says (otlp, console, prometheus for
 *   metrics, none). Left unset, a signal is exported over OTLP when an OTLP endpoint is set and
 *   not at all otherwise: the SDK's own default (OTLP to localhost) would send into nothing and
 *   log failures. Logs stay with the services' own logger unless OTEL_LOGS_EXPORTER says otherwise.
 * - The Prometheus exporter serves /metrics on OTEL_EXPORTER_PROMETHEUS_HOST:PORT (default
 *   0.0.0.0:9464).
 * - W3C traceparent and baggage are read from and written to requests (OTEL_PROPAGATORS to change).
 */

const SETTINGS = [
  "OTEL_SERVICE_NAME",
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
  "OTEL_TRACES_EXPORTER",
  "OTEL_METRICS_EXPORTER",
] as const;

type Env = Record<string, string | undefined>;

export interface TelemetryPlan {
  /** Whether an SDK starts at all. */
  isEnabled: boolean;
  serviceName: string;
  traces: string;
  metrics: string;
  logs: string;
}

const isSet = (value: string | undefined): value is string => value !== undefined && value.trim() !== "";

/** What the environment asks for; pure, so it can be tested and printed. */
export function planTelemetry(defaultServiceName: string, env: Env = process.env): TelemetryPlan {
  const hasEndpoint = (signal: "TRACES" | "METRICS") => isSet(env.OTEL_EXPORTER_OTLP_ENDPOINT) || isSet(env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`]);
  const traces = isSet(env.OTEL_TRACES_EXPORTER) ? env.OTEL_TRACES_EXPORTER.trim() : hasEndpoint("TRACES") ? "otlp" : "none";
  const metrics = isSet(env.OTEL_METRICS_EXPORTER) ? env.OTEL_METRICS_EXPORTER.trim() : hasEndpoint("METRICS") ? "otlp" : "none";
  const logs = isSet(env.OTEL_LOGS_EXPORTER) ? env.OTEL_LOGS_EXPORTER.trim() : "none";
  const isDisabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true";
  const isAsked = SETTINGS.some((name) => isSet(env[name]));
  return {
    isEnabled: isAsked && !isDisabled && (traces !== "none" || metrics !== "none" || logs !== "none"),
    serviceName: isSet(env.OTEL_SERVICE_NAME) ? env.OTEL_SERVICE_NAME.trim() : defaultServiceName,
    traces,
    metrics,
    logs,
  };
}

export interface RunningTelemetry {
  plan: TelemetryPlan;
  /** Flushes what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Starts the SDK when the environment asks for one (see above); null otherwise. Call it before
 * the service creates its stores and server, so their spans and instruments find the SDK.
 */
export async function startTelemetry(defaultServiceName: string, env: Env = process.env): Promise<RunningTelemetry | null> {
  const plan = planTelemetry(defaultServiceName, env);
  if (!plan.isEnabled) return null;
  // The SDK reads its exporters from process.env: fill in the choices made above for what was left unset.
  process.env.OTEL_TRACES_EXPORTER = plan.traces;
  process.env.OTEL_METRICS_EXPORTER = plan.metrics;
  process.env.OTEL_LOGS_EXPORTER = plan.logs;
  const { NodeSDK } = await import("@opentelemetry/sdk-node");
  const sdk = new NodeSDK({ serviceName: plan.serviceName });
  sdk.start();
  return { plan, shutdown: () => sdk.shutdown() };
}

/** One line for the service's log: where its telemetry goes. */
export function describeTelemetry(running: RunningTelemetry | null, env: Env = process.env): string {
  if (!running) return "OpenTelemetry off (no OTEL_* settings)";
  const { plan } = running;
  const where = plan.metrics.includes("prometheus") ? ` (Prometheus on ${env.OTEL_EXPORTER_PROMETHEUS_HOST || "0.0.0.0"}:${env.OTEL_EXPORTER_PROMETHEUS_PORT || "9464"}/metrics)` : "";
  return `OpenTelemetry on as ${plan.serviceName}: traces ${plan.traces}, metrics ${plan.metrics}${where}`;
}
