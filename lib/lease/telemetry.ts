import type * as OtelApi from "@opentelemetry/api";
import type { Attributes, Context, Counter, Histogram, Meter, MeterProvider, ObservableResult, Span, Tracer, TracerProvider, UpDownCounter } from "@opentelemetry/api";
import type { Lease, LeaseStore } from "./types";

/**
 * OpenTelemetry from the worker's side: what a holder lives through and no store
 * records (how long an acquire waited, each round trip, how close a renew came to the
 * TTL, losses, pool use).
 *
 * Only `@opentelemetry/api` is used, and only when it is installed (an optional peer):
 * it is loaded on the first operation, so without it every call here is a no-op, and
 * without a registered SDK the API's own no-op instruments cost next to nothing.
 *
 * Attributes are bounded by construction: the store's name, an outcome or reason from a
 * fixed set, and a prefix group (the first `prefixDepth` `:`-segments, never the whole
 * resource, at most `maxGroups` distinct groups, the rest "other"). A resource name, lease
 * id or token never becomes a metric attribute. Spans carry the fencing token, because a
 * trace of one critical section is where it is wanted; never the lease id, which is the
 * capability to release the lease.
 */

type Api = typeof OtelApi;

export const INSTRUMENTATION_SCOPE = "@leasewatch/lease";
export const DEFAULT_TELEMETRY_PREFIX_DEPTH = 2;
export const DEFAULT_TELEMETRY_MAX_GROUPS = 20;
export const OTHER_PREFIX_GROUP = "other";
/** The group of a resource with no `:` (its only segment is the resource itself). */
export const NO_PREFIX_GROUP = "(none)";

export const ATTR_STORE = "leasewatch.store";
export const ATTR_OUTCOME = "leasewatch.outcome";
export const ATTR_OPERATION = "leasewatch.operation";
export const ATTR_REASON = "leasewatch.reason";
export const ATTR_PREFIX_GROUP = "leasewatch.prefix_group";
export const ATTR_CONNECTION_STATE = "leasewatch.connection.state";
/** Spans only. */
export const ATTR_FENCING_TOKEN = "leasewatch.lease.fencing_token";

/** Waits and round trips, seconds: fine below 50 ms (the acquire p99 alert), coarse up to a minute. */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Hold times, seconds: as the console's hold histogram. */
const HOLD_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];
/** Renewal slack, a fraction of the TTL: twentieths, as the stores record it. */
const SLACK_BUCKETS = Array.from({ length: 20 }, (_, i) => (i + 1) / 20);

export type StoreOperation = "acquire" | "renew" | "release" | "fenced_write";

export interface TelemetryOptions {
  /** Default: the global one (`metrics.getMeterProvider()`), read on first use. */
  meterProvider?: MeterProvider;
  /** Default: the global one (`trace.getTracerProvider()`), read on first use. */
  tracerProvider?: TracerProvider;
  /** `:`-segments of a resource kept in the prefix-group attribute (1–3, default 2). */
  prefixDepth?: number;
  /** Distinct prefix groups named before the rest share "other" (1–200, default 20). */
  maxGroups?: number;
  /** false: record nothing, not even into the API's no-op instruments (default true). */
  enabled?: boolean;
}

let loadedApi: Api | null | undefined;
let apiLoading: Promise<Api | null> | undefined;

/** The API module, or null when it is not installed; a promise only until the first load settled. */
function loadApi(): Api | null | Promise<Api | null> {
  if (loadedApi !== undefined) return loadedApi;
  apiLoading ??= import("@opentelemetry/api").then(
    (m) => (loadedApi = "metrics" in m ? m : (m as { default: Api }).default),
    () => (loadedApi = null),
  );
  return apiLoading;
}

/** The instruments of one meter and tracer. */
class Instruments {
  readonly acquireDuration: Histogram;
  readonly operationDuration: Histogram;
  readonly renewals: Counter;
  readonly lost: Counter;
  readonly active: UpDownCounter;
  readonly holdDuration: Histogram;
  readonly renewalSlack: Histogram;
  readonly fencingRejections: Counter;

  constructor(
    readonly api: Api,
    readonly meter: Meter,
    readonly tracer: Tracer,
  ) {
    const seconds = (name: string, description: string, buckets: number[]) =>
      meter.createHistogram(name, { description, unit: "s", advice: { explicitBucketBoundaries: buckets } });
    this.acquireDuration = seconds("leasewatch.lease.acquire.duration", "Time from the first acquire attempt to granted, gave up or error, backoff included", DURATION_BUCKETS);
    this.operationDuration = seconds("leasewatch.store.operation.duration", "Round trip of one store call (acquire, renew, release, fenced write)", DURATION_BUCKETS);
    this.holdDuration = seconds("leasewatch.lease.hold.duration", "Time a lease was held by this process, from the acquire's send to its release or loss", HOLD_BUCKETS);
    this.renewals = meter.createCounter("leasewatch.lease.renewals", { description: "Renew attempts, by outcome (renewed, not_owner, expired, timeout, error)" });
    this.lost = meter.createCounter("leasewatch.lease.lost", { description: "Leases this process lost, by reason" });
    this.active = meter.createUpDownCounter("leasewatch.lease.active", { description: "Leases held by this process" });
    this.renewalSlack = meter.createHistogram("leasewatch.lease.renewal.slack", {
      description: "Fraction of the TTL left when a renewal's reply arrived (worker's clock)",
      unit: "1",
      advice: { explicitBucketBoundaries: SLACK_BUCKETS },
    });
    this.fencingRejections = meter.createCounter("leasewatch.fencing.rejections", { description: "Writes a fenced downstream refused for a stale token" });
  }
}

/** Instruments per (meter provider, tracer provider), so clients sharing providers share them. */
const instrumentsByProviders = new WeakMap<object, WeakMap<object, Instruments>>();

function instrumentsFor(api: Api, meterProvider: MeterProvider, tracerProvider: TracerProvider): Instruments {
  let byTracer = instrumentsByProviders.get(meterProvider);
  if (!byTracer) instrumentsByProviders.set(meterProvider, (byTracer = new WeakMap()));
  let instruments = byTracer.get(tracerProvider);
  if (!instruments) {
    instruments = new Instruments(api, meterProvider.getMeter(INSTRUMENTATION_SCOPE), tracerProvider.getTracer(INSTRUMENTATION_SCOPE));
    byTracer.set(tracerProvider, instruments);
  }
  return instruments;
}

/** What telemetry needs of a store: its name, and its connections when it has a pool. */
export type TelemetryStore = Pick<LeaseStore, "name"> & Partial<Pick<LeaseStore, "connectionUsage">>;

/** Stores whose connection use is already observed, per meter provider: one callback each. */
const observedStores = new WeakMap<object, WeakSet<TelemetryStore>>();

/**
 * Observable gauges of a store's connections (`connectionUsage()`), once per store and
 * meter provider. Holds the store weakly: a store nobody uses any more is not kept alive.
 */
function observeConnections(meterProvider: MeterProvider, meter: Meter, store: TelemetryStore): void {
  if (typeof store.connectionUsage !== "function") return;
  let seen = observedStores.get(meterProvider);
  if (!seen) observedStores.set(meterProvider, (seen = new WeakSet()));
  if (seen.has(store)) return;
  seen.add(store);
  const connections = meter.createObservableGauge("leasewatch.pool.connections", { description: "Store connections of this process, by state (used, idle)", unit: "{connection}" });
  const max = meter.createObservableGauge("leasewatch.pool.connections.max", { description: "Most connections the store's pool may open", unit: "{connection}" });
  const pending = meter.createObservableGauge("leasewatch.pool.pending_requests", { description: "Requests waiting for a connection (pg) or queued while disconnected (Redis)", unit: "{request}" });
  const ref = new WeakRef(store);
  const name = store.name;
  const observe = (which: "connections" | "max" | "pending") => (result: ObservableResult) => {
    const usage = ref.deref()?.connectionUsage?.();
    if (!usage) return;
    if (which === "connections") {
      result.observe(usage.used, { [ATTR_STORE]: name, [ATTR_CONNECTION_STATE]: "used" });
      result.observe(usage.idle, { [ATTR_STORE]: name, [ATTR_CONNECTION_STATE]: "idle" });
    } else if (which === "max") result.observe(usage.max, { [ATTR_STORE]: name });
    else result.observe(usage.pending, { [ATTR_STORE]: name });
  };
  connections.addCallback(observe("connections"));
  max.addCallback(observe("max"));
  pending.addCallback(observe("pending"));
}

/** The prefix group of `resource`: its first `depth` segments, never all of them. */
export function telemetryPrefixGroup(resource: string, depth: number): string {
  const segments = resource.split(":");
  const kept = Math.min(depth, segments.length - 1);
  return kept <= 0 ? NO_PREFIX_GROUP : segments.slice(0, kept).join(":");
}

/**
 * Telemetry of one store as one client (or server) uses it. Every method is safe to call
 * before the API has loaded (it then records nothing) and never throws.
 */
export class LeaseTelemetry {
  readonly storeName: string;
  private readonly prefixDepth: number;
  private readonly maxGroups: number;
  private readonly groups = new Set<string>();
  private instruments: Instruments | null | undefined;

  constructor(
    private readonly store: TelemetryStore,
    private readonly options: TelemetryOptions = {},
  ) {
    this.storeName = store.name;
    this.prefixDepth = Math.min(3, Math.max(1, Math.trunc(options.prefixDepth ?? DEFAULT_TELEMETRY_PREFIX_DEPTH)));
    this.maxGroups = Math.min(200, Math.max(1, Math.trunc(options.maxGroups ?? DEFAULT_TELEMETRY_MAX_GROUPS)));
    if (options.enabled === false) this.instruments = null;
  }

  /** Resolves the instruments; awaits only the first time the API module is loaded. */
  ready(): void | Promise<void> {
    if (this.instruments !== undefined) return;
    const api = loadApi();
    if (api instanceof Promise) return api.then((loaded) => this.resolve(loaded));
    this.resolve(api);
  }

  private resolve(api: Api | null): void {
    if (this.instruments !== undefined) return;
    if (!api) {
      this.instruments = null;
      return;
    }
    const meterProvider = this.options.meterProvider ?? api.metrics.getMeterProvider();
    const tracerProvider = this.options.tracerProvider ?? api.trace.getTracerProvider();
    this.instruments = instrumentsFor(api, meterProvider, tracerProvider);
    observeConnections(meterProvider, this.instruments.meter, this.store);
  }

  /** The bounded prefix-group attribute value for `resource`. */
  groupOf(resource: string): string {
    const group = telemetryPrefixGroup(resource, this.prefixDepth);
    if (this.groups.has(group)) return group;
    if (this.groups.size >= this.maxGroups) return OTHER_PREFIX_GROUP;
    this.groups.add(group);
    return group;
  }

  private attributes(group: string, extra?: Attributes): Attributes {
    return { [ATTR_STORE]: this.storeName, [ATTR_PREFIX_GROUP]: group, ...extra };
  }

  /**
   * One store call as a round trip: a `lease.<operation>` span (child of `parent`, or of the
   * active context) and `leasewatch.store.operation.duration`, both with the outcome
   * `outcomeOf` names (or "error" when it threw).
   */
  async storeCall<T>(operation: StoreOperation, resource: string, call: () => Promise<T>, outcomeOf: (result: T) => string, parent?: Context): Promise<T> {
    const inst = this.instruments;
    if (!inst) return call();
    const group = this.groupOf(resource);
    const span = inst.tracer.startSpan(`lease.${operation}`, { kind: inst.api.SpanKind.CLIENT, attributes: this.attributes(group) }, parent ?? inst.api.context.active());
    const startedAt = performance.now();
    let outcome = "error";
    try {
      // Recording spans become the active context, so a pg or ioredis instrumentation nests under them.
      const result = span.isRecording() ? await inst.api.context.with(inst.api.trace.setSpan(parent ?? inst.api.context.active(), span), call) : await call();
      outcome = outcomeOf(result);
      return result;
    } catch (error) {
      outcome = errorOutcome(error);
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: inst.api.SpanStatusCode.ERROR, message: outcome });
      throw error;
    } finally {
      inst.operationDuration.record((performance.now() - startedAt) / 1000, this.attributes(group, { [ATTR_OPERATION]: operation, [ATTR_OUTCOME]: outcome }));
      span.setAttribute(ATTR_OUTCOME, outcome);
      span.end();
    }
  }

  /** The whole wait of one acquire (first attempt to outcome, backoff included). */
  recordAcquireWait(resource: string, seconds: number, outcome: "granted" | "timeout" | "aborted" | "error"): void {
    this.instruments?.acquireDuration.record(seconds, this.attributes(this.groupOf(resource), { [ATTR_OUTCOME]: outcome }));
  }

  /** One renew attempt as the holder saw it. */
  recordRenewal(resource: string, outcome: string): void {
    this.instruments?.renewals.add(1, this.attributes(this.groupOf(resource), { [ATTR_OUTCOME]: outcome }));
  }

  /** Fraction of the TTL left when a renewal's reply arrived. */
  recordRenewalSlack(resource: string, fraction: number): void {
    this.instruments?.renewalSlack.record(Math.min(1, Math.max(0, fraction)), this.attributes(this.groupOf(resource)));
  }

  recordFencingRejection(resource: string): void {
    this.instruments?.fencingRejections.add(1, this.attributes(this.groupOf(resource)));
  }

  /** A granted lease: counted active until `end()` of the returned record. */
  leaseStarted(lease: Lease, sentAt: number): HeldLeaseTelemetry {
    return new HeldLeaseTelemetry(this.instruments ?? null, this.attributes(this.groupOf(lease.resource)), lease.fencingToken, sentAt);
  }
}

function errorOutcome(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "renew_timeout") return "timeout";
  // The store kept losing insert races, or found its own resend's lease lapsed: not acquired.
  if (code === "contention" || code === "lease_ended") return "contended";
  return "error";
}

/**
 * One held lease: the active count, the hold duration when it ends (once, however it
 * ends), and the `lease.hold` span when `withLease` runs work under it.
 */
export class HeldLeaseTelemetry {
  private hasEnded = false;
  private holdSpan: Span | undefined;
  private holdContext: Context | undefined;

  constructor(
    private readonly inst: Instruments | null,
    private readonly attrs: Attributes,
    private readonly fencingToken: string,
    private readonly sentAt: number,
  ) {
    inst?.active.add(1, attrs);
  }

  /** Parent for this lease's renew and release spans: the hold span once there is one. */
  get parentContext(): Context | undefined {
    return this.holdContext;
  }

  /** Opens `lease.hold` (child of the active context); `run` runs work inside it. */
  startHold(): void {
    const inst = this.inst;
    if (!inst || this.holdSpan) return;
    const parent = inst.api.context.active();
    this.holdSpan = inst.tracer.startSpan("lease.hold", { attributes: { ...this.attrs, [ATTR_FENCING_TOKEN]: this.fencingToken } }, parent);
    this.holdContext = inst.api.trace.setSpan(parent, this.holdSpan);
  }

  /** Runs `fn` with the hold span active, so the work's own spans (a fenced write) nest under it. */
  run<T>(fn: () => T): T {
    if (!this.inst || !this.holdContext || !this.holdSpan?.isRecording()) return fn();
    return this.inst.api.context.with(this.holdContext, fn);
  }

  /** The lease is known lost: counted once, and an event on the hold span. */
  lost(reason: string, now: number): void {
    if (this.inst) {
      this.inst.lost.add(1, { ...this.attrs, [ATTR_REASON]: reason });
      this.holdSpan?.addEvent("lease.lost", { [ATTR_REASON]: reason });
      this.holdSpan?.setStatus({ code: this.inst.api.SpanStatusCode.ERROR, message: `lease lost: ${reason}` });
    }
    this.end("lost", now);
  }

  /** The lease ended for this process (released, lost, or given up on): counted once. */
  end(outcome: "released" | "lost" | "release_failed", now: number): void {
    if (this.hasEnded) return;
    this.hasEnded = true;
    if (!this.inst) return;
    this.inst.active.add(-1, this.attrs);
    this.inst.holdDuration.record(Math.max(0, now - this.sentAt) / 1000, { ...this.attrs, [ATTR_OUTCOME]: outcome });
    this.holdSpan?.setAttribute(ATTR_OUTCOME, outcome);
  }

  /** Closes the hold span (after the release, so it is the span's child). */
  endHold(): void {
    this.holdSpan?.end();
  }
}

/**
 * A store whose acquire, renew and release calls are traced and timed (for callers that use a
 * store directly, such as an HTTP lock API): `lease.acquire` / `lease.renew` / `lease.release`
 * spans under the active context, and `leasewatch.store.operation.duration`. Every other
 * member is the store's own.
 */
export function instrumentStore<S extends LeaseStore>(store: S, options: TelemetryOptions = {}): S {
  const telemetry = new LeaseTelemetry(store, options);
  const traced = {
    async acquire(input: Parameters<LeaseStore["acquire"]>[0]) {
      await telemetry.ready();
      return telemetry.storeCall("acquire", input.resource, () => store.acquire(input), (r) => (r.acquired ? "granted" : "contended"));
    },
    async renew(input: Parameters<LeaseStore["renew"]>[0]) {
      await telemetry.ready();
      return telemetry.storeCall("renew", input.resource, () => store.renew(input), (r) => (r.renewed ? "renewed" : r.reason));
    },
    async release(input: Parameters<LeaseStore["release"]>[0]) {
      await telemetry.ready();
      return telemetry.storeCall("release", input.resource, () => store.release(input), (r) => (r.released ? "released" : r.reason));
    },
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === "acquire" || property === "renew" || property === "release") return traced[property];
      const value: unknown = Reflect.get(target, property, target);
      // Bound to the store itself: its methods use private fields a proxy does not have.
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
