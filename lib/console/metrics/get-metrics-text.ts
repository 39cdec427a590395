/**
 * Server-only: `/api/metrics` in Prometheus text format (prom-client). A fresh
 * registry per scrape, filled from each store's own records — nothing is counted
 * in the console process, so every console replica scraped at the same moment
 * reports the same values, and a restart resets nothing:
 *
 * - counters (`leasewatch_events_total`, `leasewatch_renewals_total`, release failures) are
 *   the stores' lifetime totals (`store.lifetimeTotals()`);
 * - the hold-duration and renewal-slack histograms per prefix group are the stores' lifetime
 *   histograms per group (`store.groupTotals()`: Postgres folds them in its rollup refresh,
 *   Redis in its projector and renew; acquire and release do no extra work for them);
 * - gauges over the last 5 minutes come from the per-minute rollups;
 * - zombies and the oldest lease per prefix group come from bounded reads of the
 *   live leases (see OVERDUE_READ_LIMIT and OLDEST_READ_LIMIT);
 * - observed stores (locks the library does not own) come from what the observer
 *   recorded at its last sample (lib/console/shared/observed.ts), labelled by store and kind only.
 */
import { Counter, Gauge, Registry, type Metric } from "prom-client";
import { z } from "zod";
import {
  CLOSE_CALL_FRACTION,
  type CounterKind,
  type GroupTotals,
  HOLD_HISTOGRAM_BOUNDS_MS,
  type Lease,
  LEASE_EVENT_KINDS,
  type LeaseState,
  type LeaseStore,
  type LifetimeTotals,
  resourcePrefix,
  SLACK_BUCKET_COUNT,
  SLACK_PREFIX_DEPTH,
  type StatsBucket,
} from "@leasewatch/lease";
import type pg from "pg";
import { SCOPE_ALL } from "@/lib/auth/scope";
import { FORCE_RELEASE_OUTCOMES } from "@/lib/console/shared/views";
import { getObservedCounts, type ObservedStoreCounts } from "@/lib/console/shared/observed";
import { parseObservedConfig } from "@/lib/observed/config";
import type { AuditLog } from "@/lib/audit/log";
import { ConfigError } from "@/lib/server/store-config";
import { fanOutStores, resolveEntries, STORE_TIMEOUT_MS, type ReadOptions } from "@/lib/console/shared/fan-out";
import { withTimeout } from "@/lib/server/timeout";
import { MINUTE_MS } from "@/lib/console/shared/params";

/** Gauges such as the contention rate are over this window. */
export const METRICS_WINDOW_MS = 5 * MINUTE_MS;
/** Zombie leases are counted from at most this many leases per state (one list page). */
export const OVERDUE_READ_LIMIT = 1_000;
/** The oldest lease per prefix group is found among this many longest-held leases (one list page). */
export const OLDEST_READ_LIMIT = 1_000;
/** The prefix group every lease past LEASEWATCH_METRICS_MAX_GROUPS falls into. */
export const OTHER_GROUP = "other";
/** The states a zombie can be in, as the leases page filters them (`/locks?state=`). */
const ZOMBIE_STATES = ["overdue", "lapsed"] as const satisfies readonly LeaseState[];

const ZMetricsConfig = z.object({
  prefixDepth: z.coerce
    .number({ error: "LEASEWATCH_METRICS_PREFIX_DEPTH must be 1, 2 or 3" })
    .int({ error: "LEASEWATCH_METRICS_PREFIX_DEPTH must be 1, 2 or 3" })
    .min(1, { error: "LEASEWATCH_METRICS_PREFIX_DEPTH must be 1, 2 or 3" })
    .max(3, { error: "LEASEWATCH_METRICS_PREFIX_DEPTH must be 1, 2 or 3" })
    .default(2),
  maxGroups: z.coerce
    .number({ error: "LEASEWATCH_METRICS_MAX_GROUPS must be a whole number from 1 to 200" })
    .int({ error: "LEASEWATCH_METRICS_MAX_GROUPS must be a whole number from 1 to 200" })
    .min(1, { error: "LEASEWATCH_METRICS_MAX_GROUPS must be a whole number from 1 to 200" })
    .max(200, { error: "LEASEWATCH_METRICS_MAX_GROUPS must be a whole number from 1 to 200" })
    .default(20),
});
/** How prefix groups are formed and how many series they may make (label cardinality). */
export type TMetricsConfig = z.infer<typeof ZMetricsConfig>;

/** LEASEWATCH_METRICS_PREFIX_DEPTH (1–3, default 2) and LEASEWATCH_METRICS_MAX_GROUPS (1–200, default 20). */
export function readMetricsConfig(env: Readonly<Record<string, string | undefined>> = process.env): TMetricsConfig {
  const parsed = ZMetricsConfig.safeParse({
    prefixDepth: env.LEASEWATCH_METRICS_PREFIX_DEPTH || undefined,
    maxGroups: env.LEASEWATCH_METRICS_MAX_GROUPS || undefined,
  });
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => i.message).join("; "));
  return parsed.data;
}

interface StoreScrape {
  active: number;
  totals: LifetimeTotals;
  groups: GroupTotals;
  recent: StatsBucket[];
  zombies: Record<(typeof ZOMBIE_STATES)[number], number>;
  oldest: Map<string, number>;
}

export type MetricsOptions = ReadOptions & {
  /**
   * The audit log to count force-releases from. Default: the console's own
   * (lib/audit/context) when LEASEWATCH_AUDIT_KEY is set; null leaves those series out.
   */
  audit?: AuditLog | null;
  /** Default: readMetricsConfig() from the environment. */
  config?: TMetricsConfig;
  /**
   * Where the observed stores' recorded state is read. Default: LEASEWATCH_OBSERVED and
   * the observer's history in the console's Postgres; null leaves those series out.
   */
  observed?: { env?: NodeJS.ProcessEnv; pool?: pg.Pool; schema?: string } | null;
};

/** Force-release outcomes, as counted from the audit log (every replica reads the same table, so they agree). */
const COUNTED_FORCE_RELEASE_OUTCOMES = FORCE_RELEASE_OUTCOMES.filter((o) => o !== "requested");

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

/**
 * Seconds since acquire of the longest-held lease in each prefix group, from one page of
 * leases sorted longest-held first: the first lease seen of a group is its oldest. The first
 * `maxGroups` groups (the ones holding the oldest leases) get a series each; the rest share
 * OTHER_GROUP. A group absent here has no lease among the OLDEST_READ_LIMIT oldest.
 */
export function oldestByGroup(leases: readonly Lease[], nowMs: number, config: TMetricsConfig): Map<string, number> {
  const oldest = new Map<string, number>();
  for (const lease of leases) {
    const group = resourcePrefix(lease.resource, config.prefixDepth);
    const key = oldest.has(group) || oldest.size < config.maxGroups ? group : OTHER_GROUP;
    if (oldest.has(key)) continue;
    oldest.set(key, Math.max(0, nowMs - lease.acquiredAt.getTime()) / 1000);
  }
  return oldest;
}

async function scrapeStore(store: LeaseStore, config: TMetricsConfig, from: Date, to: Date): Promise<StoreScrape> {
  const [active, totals, groups, recent, overdue, lapsed, longest] = await Promise.all([
    store.countActive(),
    store.lifetimeTotals(),
    store.groupTotals({ prefixDepth: config.prefixDepth, maxGroups: config.maxGroups }),
    store.stats({ from, to, bucketMs: MINUTE_MS, prefixDepth: config.prefixDepth }),
    store.list({ state: "overdue", limit: OVERDUE_READ_LIMIT }),
    store.list({ state: "lapsed", limit: OVERDUE_READ_LIMIT }),
    store.list({ sort: "held_longest", limit: OLDEST_READ_LIMIT }),
  ]);
  return {
    active,
    totals,
    groups,
    recent,
    zombies: { overdue: overdue.items.length, lapsed: lapsed.items.length },
    // Ages on the store's clock, like every lease state.
    oldest: oldestByGroup(longest.items, longest.now.getTime(), config),
  };
}

/** Renewal-slack bucket upper edges: 0.05, 0.1, …, 1 (SLACK_BUCKET_COUNT twentieths). */
const SLACK_BOUNDS = Array.from({ length: SLACK_BUCKET_COUNT }, (_, i) => (i + 1) / SLACK_BUCKET_COUNT);
/** Slack buckets below CLOSE_CALL_FRACTION: a renewal in them is a close call. */
const CLOSE_CALL_BUCKETS = Math.round(CLOSE_CALL_FRACTION * SLACK_BUCKET_COUNT);

/** The stores keep slack as its bucket only, so _sum counts each renewal at its bucket's middle. */
function slackSumEstimate(counts: readonly number[]): number {
  return counts.reduce((sum, n, i) => sum + (n * (i + 0.5)) / SLACK_BUCKET_COUNT, 0);
}

/** One labelled histogram of a family: counts per bucket (the last is +Inf) and the sum, in base units. */
export interface HistogramSeries {
  labels: Record<string, string>;
  counts: readonly number[];
  sum: number;
}

/**
 * Registers a Prometheus histogram family built from bucket counts the stores keep:
 * `<name>_bucket{le}` cumulative over `bounds` (upper bounds, base units) then `+Inf`,
 * which equals `<name>_count`, and `<name>_sum`. prom-client's Histogram only observes
 * values one at a time, so the family is registered as a metric whose values are given whole.
 */
export function registerHistogram(registry: Registry, family: { name: string; help: string; bounds: readonly number[]; series: readonly HistogramSeries[] }): void {
  const { name, help, bounds } = family;
  const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = [];
  for (const { labels, counts, sum } of family.series) {
    let cumulative = 0;
    bounds.forEach((bound, i) => {
      cumulative += counts[i] ?? 0;
      values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: bound }, value: cumulative });
    });
    cumulative += counts[bounds.length] ?? 0;
    values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: "+Inf" }, value: cumulative });
    values.push({ metricName: `${name}_sum`, labels, value: sum });
    values.push({ metricName: `${name}_count`, labels, value: cumulative });
  }
  const metric = { name, help, type: "histogram", aggregator: "sum", get: async () => ({ name, help, type: "histogram", aggregator: "sum", values }), reset: () => {} };
  registry.registerMetric(metric as unknown as Metric);
}

export async function getMetricsText(options: MetricsOptions): Promise<MetricsText> {
  const config = options.config ?? readMetricsConfig();
  const entries = await resolveEntries(options);
  const nowMs = options.nowMs ?? Date.now();
  const from = new Date(Math.floor((nowMs - METRICS_WINDOW_MS) / MINUTE_MS) * MINUTE_MS);
  const to = new Date(nowMs);

  // The audit log is read alongside the stores, with the same time limit; down, it reports audit_up 0.
  const forceReleases = resolveAudit(options).then(
    (audit) => (audit ? withTimeout(audit.countForceReleasesByOutcome(), options.timeoutMs ?? STORE_TIMEOUT_MS, "audit log") : null),
  ).then(
    (counts) => ({ ok: true as const, counts }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  const observed = readObserved(options);
  const outcomes = await fanOutStores(entries, (store) => scrapeStore(store, config, from, to), options.timeoutMs);

  const registry = new Registry();
  const up = new Gauge({ name: "leasewatch_store_up", help: "1 when the console could read the store in this scrape, else 0", labelNames: ["store", "kind"], registers: [registry] });
  const active = new Gauge({ name: "leasewatch_active_leases", help: "Leases currently stored (held, or lapsed and not yet swept)", labelNames: ["store"], registers: [registry] });
  const events = new Counter({ name: "leasewatch_events_total", help: "Lease events the store has recorded in its lifetime (from its durable totals)", labelNames: ["store", "kind"], registers: [registry] });
  const renewals = new Counter({ name: "leasewatch_renewals_total", help: "Successful lease renewals the store has recorded (Postgres counts them when their lease ends)", labelNames: ["store"], registers: [registry] });
  const windowEvents = new Gauge({ name: "leasewatch_events_5m", help: "Lease events in the last 5 minutes, by kind", labelNames: ["store", "kind"], registers: [registry] });
  const contention = new Gauge({ name: "leasewatch_contention_rate", help: "Failed acquires / all acquire attempts over the last 5 minutes (absent without attempts)", labelNames: ["store"], registers: [registry] });
  const expiredRatio = new Gauge({ name: "leasewatch_expired_to_released_ratio", help: "Expired / released leases over the last 5 minutes (absent when nothing was released); force-releases are not in it", labelNames: ["store"], registers: [registry] });
  const prefixContention = new Gauge({ name: "leasewatch_prefix_contended_5m", help: `Failed acquires in the last 5 minutes for the ${config.maxGroups} most contended prefix groups (first ${config.prefixDepth} ':' segments)`, labelNames: ["store", "prefix"], registers: [registry] });
  const overdue = new Gauge({ name: "leasewatch_lease_overdue", help: `Zombie leases: overdue (a missed heartbeat, not yet expired) or lapsed (past expiry, not yet recorded), counted up to ${OVERDUE_READ_LIMIT}`, labelNames: ["store", "state"], registers: [registry] });
  const oldest = new Gauge({ name: "leasewatch_oldest_lease_age_seconds", help: `Age of the longest-held lease per prefix group (first ${config.prefixDepth} ':' segments; past ${config.maxGroups} groups, "${OTHER_GROUP}")`, labelNames: ["store", "prefix_group"], registers: [registry] });
  const releaseFailures = new Counter({ name: "leasewatch_release_failures_total", help: "Releases the store refused: not_owner (the lease id no longer held the resource), expired (its lease had lapsed)", labelNames: ["store", "reason"], registers: [registry] });
  const closeCalls = new Counter({ name: "leasewatch_renewal_close_calls_total", help: `Renewals that arrived with less than ${CLOSE_CALL_FRACTION * 100} % of their TTL left, per prefix group (first ${Math.min(config.prefixDepth, SLACK_PREFIX_DEPTH)} ':' segments; past ${config.maxGroups} groups, "${OTHER_GROUP}")`, labelNames: ["store", "prefix_group"], registers: [registry] });

  const groupLabel = (group: string | null) => group ?? OTHER_GROUP;
  const holdSeries: HistogramSeries[] = [];
  const slackSeries: HistogramSeries[] = [];
  for (const outcome of outcomes) {
    up.set({ store: outcome.store, kind: outcome.kind }, outcome.ok ? 1 : 0);
    // A store that is down only reports up=0: its other series disappear rather than read as zero.
    if (!outcome.ok) continue;
    const { store, data } = outcome;
    active.set({ store }, data.active);

    for (const kind of LEASE_EVENT_KINDS) events.inc({ store, kind }, data.totals.counts[kind]);
    renewals.inc({ store }, data.totals.counts.renewed);
    for (const g of data.groups.hold) {
      holdSeries.push({ labels: { store, prefix_group: groupLabel(g.group) }, counts: g.counts, sum: (g.sum ?? 0) / 1000 });
    }
    for (const g of data.groups.slack) {
      const labels = { store, prefix_group: groupLabel(g.group) };
      // Slack is at most 1 (all of the TTL left): the +Inf bucket adds nothing past le="1".
      slackSeries.push({ labels, counts: [...g.counts, 0], sum: slackSumEstimate(g.counts) });
      closeCalls.inc(labels, g.counts.slice(0, CLOSE_CALL_BUCKETS).reduce((a, b) => a + b, 0));
    }
    for (const [reason, n] of Object.entries(data.totals.releaseFailures)) releaseFailures.inc({ store, reason }, n);

    const recent = data.recent.filter((b) => b.start.getTime() >= nowMs - METRICS_WINDOW_MS);
    const sum = (kind: CounterKind) => recent.reduce((n, b) => n + (b.counts[kind] ?? 0), 0);
    for (const kind of LEASE_EVENT_KINDS) windowEvents.set({ store, kind }, sum(kind));
    const acquired = sum("acquired");
    const contended = sum("contended");
    if (acquired + contended > 0) contention.set({ store }, contended / (acquired + contended));
    if (sum("released") > 0) expiredRatio.set({ store }, sum("expired") / sum("released"));

    const prefixes = new Map<string, number>();
    for (const b of recent) for (const [p, n] of Object.entries(b.contendedByPrefix)) prefixes.set(p, (prefixes.get(p) ?? 0) + n);
    [...prefixes.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, config.maxGroups)
      .forEach(([prefix, n]) => prefixContention.set({ store, prefix }, n));

    for (const state of ZOMBIE_STATES) overdue.set({ store, state }, data.zombies[state]);
    for (const [group, seconds] of data.oldest) oldest.set({ store, prefix_group: group }, seconds);
  }
  registerHistogram(registry, {
    name: "leasewatch_hold_duration_seconds",
    help: `How long leases were held, from acquire to release, expiry or force-release (store clock), over the store's lifetime, per prefix group (first ${Math.min(config.prefixDepth, SLACK_PREFIX_DEPTH)} ':' segments; the ${config.maxGroups} groups with the most holds, the rest "${OTHER_GROUP}")`,
    bounds: HOLD_HISTOGRAM_BOUNDS_MS.map((ms) => ms / 1000),
    series: holdSeries,
  });
  registerHistogram(registry, {
    name: "leasewatch_renewal_slack_ratio",
    help: `Share of its TTL a lease had left when a renewal arrived (store clock), over the store's lifetime, per prefix group (first ${Math.min(config.prefixDepth, SLACK_PREFIX_DEPTH)} ':' segments; the ${config.maxGroups} groups with the most renewals, the rest "${OTHER_GROUP}"). Recorded in twentieths: le is a twentieth's upper edge, _sum counts each renewal at its twentieth's middle`,
    bounds: SLACK_BOUNDS,
    series: slackSeries,
  });

  registerObserved(registry, await observed);

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
    for (const outcome of COUNTED_FORCE_RELEASE_OUTCOMES) total.inc({ outcome }, audited.counts.get(outcome) ?? 0);
  }

  return { contentType: registry.contentType, body: await registry.metrics() };
}

type ObservedScrape = { intervalMs: number | null; stores: ObservedStoreCounts[] };

/**
 * The observed stores' counts, within the read's scope (the endpoint itself refuses scoped
 * sessions, lib/console/metrics/metrics-access.ts). Down or slow, each configured store reports
 * observed_up 0; a configuration the console cannot parse leaves the series out (the
 * observed page says what is wrong).
 */
async function readObserved(options: MetricsOptions): Promise<ObservedScrape> {
  if (options.observed === null) return { intervalMs: null, stores: [] };
  const { env, pool, schema } = options.observed ?? {};
  let configs;
  try {
    configs = parseObservedConfig(env);
  } catch {
    return { intervalMs: null, stores: [] };
  }
  if (configs.length === 0) return { intervalMs: null, stores: [] };
  const scope = options.scope ?? SCOPE_ALL;
  try {
    return await withTimeout(getObservedCounts({ scope, env, pool, schema }), options.timeoutMs ?? STORE_TIMEOUT_MS, "observed history");
  } catch {
    const down = { ok: false, sampleAgeSeconds: null, held: 0, waiters: 0, oldestHoldSeconds: null, oldestBlockingHoldSeconds: null, partial: false };
    return { intervalMs: null, stores: configs.map((c) => ({ ...down, name: c.name, kind: c.kind })) };
  }
}

function registerObserved(registry: Registry, observed: ObservedScrape): void {
  if (observed.stores.length === 0) return;
  const labelNames = ["store", "kind"] as const;
  const up = new Gauge({ name: "leasewatch_observed_up", help: "1 when the console could read the observer's record of the observed store in this scrape, else 0", labelNames, registers: [registry] });
  const age = new Gauge({ name: "leasewatch_observed_sample_age_seconds", help: "Seconds since the observer last recorded a sample of the store (+Inf: never); past 3 intervals the observer is not sampling", labelNames, registers: [registry] });
  const held = new Gauge({ name: "leasewatch_observed_locks_held", help: "Locks held in the observed store at the observer's last sample", labelNames, registers: [registry] });
  const waiters = new Gauge({ name: "leasewatch_observed_waiters", help: "Sessions waiting for the observed store's locks at the last sample (0 where the store cannot tell)", labelNames, registers: [registry] });
  const oldest = new Gauge({ name: "leasewatch_observed_oldest_hold_seconds", help: "Seconds since the observer first saw the current holder of the longest-held lock (absent when nothing is held)", labelNames, registers: [registry] });
  const blocking = new Gauge({ name: "leasewatch_observed_oldest_blocking_hold_seconds", help: "The same, among locks with at least one waiter (absent when nobody waits)", labelNames, registers: [registry] });
  if (observed.intervalMs !== null) {
    new Gauge({ name: "leasewatch_observe_interval_seconds", help: "How often the observer samples each observed store (LEASEWATCH_OBSERVE_INTERVAL_MS)", registers: [registry] }).set(observed.intervalMs / 1000);
  }
  for (const s of observed.stores) {
    const labels = { store: s.name, kind: s.kind };
    up.set(labels, s.ok ? 1 : 0);
    // Unreadable, it only reports up=0: its other series disappear rather than read as zero.
    if (!s.ok) continue;
    age.set(labels, s.sampleAgeSeconds ?? Infinity);
    if (s.sampleAgeSeconds === null) continue;
    held.set(labels, s.held);
    waiters.set(labels, s.waiters);
    if (s.oldestHoldSeconds !== null) oldest.set(labels, s.oldestHoldSeconds);
    if (s.oldestBlockingHoldSeconds !== null) blocking.set(labels, s.oldestBlockingHoldSeconds);
  }
}
