/**
 * Server-only: `/api/metrics` in Prometheus text format (prom-client). A fresh
 * registry per scrape, filled from each store's rollups — nothing is counted in
 * the console's request path.
 *
 * `leasewatch_events_total` must be a monotonic counter, but the stores keep
 * per-minute rollups, not lifetime totals. So this process keeps a running total
 * per store and kind: each scrape reads the last few minutes and adds what each
 * minute gained since the previous scrape. Like any Prometheus counter it starts
 * from zero when the console restarts (`rate()`/`increase()` handle that); minutes
 * older than the look-back that were never scraped are not counted.
 */
import { Counter, Gauge, Registry } from "prom-client";
import { histogramQuantile } from "@/lib/lease/histogram";
import { HOLD_HISTOGRAM_BOUNDS_MS, LEASE_EVENT_KINDS, type CounterKind, type LeaseStore, type StatsBucket } from "@/lib/lease/types";
import { AUDIT_OUTCOMES } from "@/lib/audit/chain";
import type { AuditLog } from "@/lib/audit/log";
import { fanOutStores, resolveEntries, STORE_TIMEOUT_MS, withTimeout, type ReadOptions } from "./fan-out";
import { DEFAULT_DEPTH, MINUTE_MS } from "./params";

/** Gauges such as the contention rate are over this window. */
export const METRICS_WINDOW_MS = 5 * MINUTE_MS;
/** How far back each scrape re-reads minutes to find what changed (covers a missed scrape or two). */
export const COUNTER_LOOKBACK_MS = 15 * MINUTE_MS;
/** Prefix series are limited to the most contended few, to bound label cardinality. */
export const TOP_PREFIX_SERIES = 10;
const COUNTED_KINDS: readonly CounterKind[] = [...LEASE_EVENT_KINDS, "renewed"];

/** Per store: counts already folded into the totals, by minute, and the running totals. */
export interface CounterState {
  stores: Map<string, { seen: Map<number, Partial<Record<CounterKind, number>>>; totals: Record<CounterKind, number> }>;
}

export function createCounterState(): CounterState {
  return { stores: new Map() };
}

const GLOBAL_KEY = Symbol.for("leasewatch.console.metrics-counters");
function processCounterState(): CounterState {
  const g = globalThis as typeof globalThis & { [GLOBAL_KEY]?: CounterState };
  g[GLOBAL_KEY] ??= createCounterState();
  return g[GLOBAL_KEY];
}

interface StoreScrape {
  active: number;
  buckets: StatsBucket[];
}

export interface MetricsOptions extends ReadOptions {
  counterState?: CounterState;
  /**
   * The audit log to count force-releases from. Default: the console's own
   * (lib/audit/context) when LEASEWATCH_AUDIT_KEY is set; null leaves those series out.
   */
  audit?: AuditLog | null;
}

/** Force-release outcomes, as counted from the audit log (every replica reads the same table, so they agree). */
const FORCE_RELEASE_OUTCOMES = AUDIT_OUTCOMES.filter((o) => o !== "requested");

async function resolveAudit(options: MetricsOptions): Promise<AuditLog | null> {
  if (options.audit !== undefined) return options.audit;
  if (!process.env.LEASEWATCH_AUDIT_KEY) return null;
  const { getProcessAuditLog } = await import("@/lib/audit/context");
  return getProcessAuditLog();
}

export interface MetricsText {
  contentType: string;
  body: string;
}

export async function getMetricsText(options: MetricsOptions = {}): Promise<MetricsText> {
  const entries = await resolveEntries(options);
  const state = options.counterState ?? processCounterState();
  const nowMs = options.nowMs ?? Date.now();
  const from = new Date(Math.floor((nowMs - COUNTER_LOOKBACK_MS) / MINUTE_MS) * MINUTE_MS);
  const to = new Date(nowMs);

  // The audit log is read alongside the stores, with the same time limit; down, it reports audit_up 0.
  const forceReleases = resolveAudit(options).then(
    (audit) => (audit ? withTimeout(audit.countForceReleasesByOutcome(), options.timeoutMs ?? STORE_TIMEOUT_MS, "audit log") : null),
  ).then(
    (counts) => ({ ok: true as const, counts }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  const outcomes = await fanOutStores(
    entries,
    async (store: LeaseStore): Promise<StoreScrape> => {
      const [active, buckets] = await Promise.all([
        store.countActive(),
        store.stats({ from, to, bucketMs: MINUTE_MS, prefixDepth: DEFAULT_DEPTH }),
      ]);
      return { active, buckets };
    },
    options.timeoutMs,
  );

  const registry = new Registry();
  const up = new Gauge({ name: "leasewatch_store_up", help: "1 when the console could read the store in this scrape, else 0", labelNames: ["store", "kind"], registers: [registry] });
  const active = new Gauge({ name: "leasewatch_active_leases", help: "Leases currently stored (held, or lapsed and not yet swept)", labelNames: ["store"], registers: [registry] });
  const events = new Counter({ name: "leasewatch_events_total", help: "Lease events recorded by the store, counted since this console started", labelNames: ["store", "kind"], registers: [registry] });
  const renewals = new Counter({ name: "leasewatch_renewals_total", help: "Successful lease renewals, counted since this console started", labelNames: ["store"], registers: [registry] });
  const windowEvents = new Gauge({ name: "leasewatch_events_5m", help: "Lease events in the last 5 minutes, by kind", labelNames: ["store", "kind"], registers: [registry] });
  const contention = new Gauge({ name: "leasewatch_contention_rate", help: "Failed acquires / all acquire attempts over the last 5 minutes (absent without attempts)", labelNames: ["store"], registers: [registry] });
  const expiredRatio = new Gauge({ name: "leasewatch_expired_to_released_ratio", help: "Expired / released leases over the last 5 minutes (absent when nothing was released); force-releases are not in it", labelNames: ["store"], registers: [registry] });
  const hold = new Gauge({ name: "leasewatch_hold_duration_ms", help: "Hold duration of leases that ended in the last 5 minutes, estimated from the rollup histogram", labelNames: ["store", "quantile"], registers: [registry] });
  const prefixContention = new Gauge({ name: "leasewatch_prefix_contended_5m", help: `Failed acquires in the last 5 minutes for the ${TOP_PREFIX_SERIES} most contended prefixes (first ${DEFAULT_DEPTH} ':' segments)`, labelNames: ["store", "prefix"], registers: [registry] });

  for (const outcome of outcomes) {
    up.set({ store: outcome.store, kind: outcome.kind }, outcome.ok ? 1 : 0);
    // A store that is down only reports up=0: its other series disappear rather than read as zero.
    if (!outcome.ok) continue;
    const { store } = outcome;
    const { buckets } = outcome.data;
    active.set({ store }, outcome.data.active);

    const totals = foldIntoTotals(state, store, buckets, from.getTime());
    for (const kind of LEASE_EVENT_KINDS) events.inc({ store, kind }, totals[kind]);
    renewals.inc({ store }, totals.renewed);

    const recent = buckets.filter((b) => b.start.getTime() >= nowMs - METRICS_WINDOW_MS);
    const sum = (kind: CounterKind) => recent.reduce((n, b) => n + (b.counts[kind] ?? 0), 0);
    for (const kind of LEASE_EVENT_KINDS) windowEvents.set({ store, kind }, sum(kind));
    const acquired = sum("acquired");
    const contended = sum("contended");
    if (acquired + contended > 0) contention.set({ store }, contended / (acquired + contended));
    if (sum("released") > 0) expiredRatio.set({ store }, sum("expired") / sum("released"));

    const histogram = new Array<number>(HOLD_HISTOGRAM_BOUNDS_MS.length + 1).fill(0);
    for (const b of recent) b.holdHistogram.forEach((n, i) => (histogram[i] = (histogram[i] ?? 0) + n));
    for (const q of [0.5, 0.95, 0.99]) {
      const value = histogramQuantile(histogram, q);
      if (value !== null) hold.set({ store, quantile: String(q) }, value);
    }

    const prefixes = new Map<string, number>();
    for (const b of recent) for (const [p, n] of Object.entries(b.contendedByPrefix)) prefixes.set(p, (prefixes.get(p) ?? 0) + n);
    [...prefixes.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP_PREFIX_SERIES)
      .forEach(([prefix, n]) => prefixContention.set({ store, prefix }, n));
  }

  const audited = await forceReleases;
  if (!audited.ok || audited.counts !== null) {
    new Gauge({ name: "leasewatch_audit_up", help: "1 when the console could read the audit log in this scrape, else 0", registers: [registry] }).set(audited.ok ? 1 : 0);
  }
  if (audited.ok && audited.counts !== null) {
    const total = new Counter({
      name: "leasewatch_force_releases_total",
      help: "Force-release attempts by outcome, counted from the audit log (released, lease_changed, refused: denied_role, reauth_required, rate_limited, invalid_input; failed)",
      labelNames: ["outcome"],
      registers: [registry],
    });
    for (const outcome of FORCE_RELEASE_OUTCOMES) total.inc({ outcome }, audited.counts.get(outcome) ?? 0);
  }

  return { contentType: registry.contentType, body: await registry.metrics() };
}

/**
 * Add what each minute gained since the last scrape to the store's running
 * totals. A minute's count only grows (the open minute fills up; rollups are
 * recomputed to the same or higher value), so a lower reading adds nothing.
 */
export function foldIntoTotals(state: CounterState, store: string, buckets: readonly StatsBucket[], oldestMs: number): Record<CounterKind, number> {
  let entry = state.stores.get(store);
  if (!entry) {
    entry = { seen: new Map(), totals: Object.fromEntries(COUNTED_KINDS.map((k) => [k, 0])) as Record<CounterKind, number> };
    state.stores.set(store, entry);
  }
  for (const bucket of buckets) {
    const minute = bucket.start.getTime();
    const seen = entry.seen.get(minute) ?? {};
    const next: Partial<Record<CounterKind, number>> = { ...seen };
    for (const kind of COUNTED_KINDS) {
      const now = bucket.counts[kind] ?? 0;
      const before = seen[kind] ?? 0;
      if (now > before) {
        entry.totals[kind] += now - before;
        next[kind] = now;
      }
    }
    entry.seen.set(minute, next);
  }
  for (const minute of entry.seen.keys()) if (minute < oldestMs) entry.seen.delete(minute);
  return entry.totals;
}
