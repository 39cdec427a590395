/**
 * Renewal slack and TTL advice: the parts both stores share. The stores record
 * slack (see the renew statement / script) and gather the measurements; the rule
 * that turns them into advice lives here, once.
 *
 * The rule is the seeds': ttl > p99 pause + p99 renewal latency + margin, and
 * renew at ttl/3 or more often. Pause and latency are not seen apart, but their
 * sum is: a renewal due at ttl/3 that arrives L late was delayed by both. So the
 * time between the due renewal and expiry (2/3 of the TTL) must cover the p99
 * lateness plus a margin; the margin is the close-call line, 20 % of the TTL:
 *   ttl/3 + L99 <= ttl - 0.2 ttl   ⇔   ttl >= L99 / (1 - 1/3 - 0.2).
 * Advice only ever keeps or lengthens a TTL: shortening one is how a lease ends
 * up shorter than the pause it must survive.
 */
import { LeaseError } from "./errors";
import { histogramQuantile } from "./histogram";
import {
  CLOSE_CALL_FRACTION,
  HOLD_HISTOGRAM_BOUNDS_MS,
  SLACK_BUCKET_COUNT,
  SLACK_PREFIX_DEPTH,
  type LeaseEvent,
  type RenewalSlackRow,
  type TtlAdvice,
  type TtlAdviceQuery,
  type TtlAdviceReport,
} from "./types";
import { parseOrThrow, resourcePrefix, ZPrefix, ZSignal } from "./validation";
import { holdBucketIndex } from "./histogram";
import { z } from "zod";

/** A healthy holder renews when this share of the TTL has passed (LeaseClient's heartbeat). */
export const RENEW_FRACTION = 1 / 3;
/** Share of the TTL a renewal may arrive late (after ttl/3) and still leave the close-call margin. */
export const LATENESS_BUDGET = 1 - RENEW_FRACTION - CLOSE_CALL_FRACTION;
/** Lost renewals beyond this share of renewal attempts put the p99 past expiry. */
export const LOST_SHARE_LIMIT = 0.01;
export const DEFAULT_ADVICE_WINDOW_MS = 3_600_000;
export const MAX_ADVICE_WINDOW_MS = 7 * 24 * 3_600_000;
/** The console and workers see at most this many groups per report, most renewals first. */
export const MAX_ADVICE_GROUPS = 100;
const HOUR_MS = 3_600_000;

/** Slack bucket (0..19) of a renewal that arrived with `leftMs` of `ttlMs` remaining (same as the Lua and SQL). */
export function slackBucketIndex(leftMs: number, ttlMs: number): number {
  const i = Math.floor((leftMs * SLACK_BUCKET_COUNT) / ttlMs);
  return Math.min(SLACK_BUCKET_COUNT - 1, Math.max(0, i));
}

/** The prefix group a resource's renewals are recorded under. */
export function slackGroupOf(resource: string): string {
  return resourcePrefix(resource, SLACK_PREFIX_DEPTH);
}

/** Does group `group` belong to a query for `prefix`: under it, or (a deeper prefix) containing it. */
export function isSlackGroupInPrefix(group: string, prefix: string | undefined): boolean {
  if (!prefix) return true;
  return group.startsWith(prefix) || prefix.startsWith(`${group}:`);
}

/** Hour starts (epoch ms) whose rollups overlap [from, to). */
export function slackHours(from: Date, to: Date): number[] {
  const hours: number[] = [];
  for (let t = Math.floor(from.getTime() / HOUR_MS) * HOUR_MS; t < to.getTime(); t += HOUR_MS) hours.push(t);
  return hours;
}

export function emptySlackHistogram(): number[] {
  return new Array<number>(SLACK_BUCKET_COUNT).fill(0);
}

/** Adds rows with the same group and TTL together. */
export function mergeSlackRows(rows: readonly RenewalSlackRow[]): RenewalSlackRow[] {
  const merged = new Map<string, RenewalSlackRow>();
  for (const row of rows) {
    const key = `${row.ttlMs}|${row.group}`;
    let into = merged.get(key);
    if (!into) {
      into = { group: row.group, ttlMs: row.ttlMs, histogram: emptySlackHistogram() };
      merged.set(key, into);
    }
    row.histogram.forEach((n, i) => {
      if (i < SLACK_BUCKET_COUNT) into.histogram[i]! += n;
    });
  }
  return [...merged.values()];
}

export interface SlackSummary {
  histogram: number[];
  renewals: number;
  closeCalls: number;
}

/** One histogram over any groups and TTLs, with its close calls. */
export function summariseSlack(rows: readonly RenewalSlackRow[]): SlackSummary {
  const histogram = emptySlackHistogram();
  for (const row of rows) row.histogram.forEach((n, i) => i < SLACK_BUCKET_COUNT && (histogram[i]! += n));
  const closeBuckets = Math.round(CLOSE_CALL_FRACTION * SLACK_BUCKET_COUNT);
  return {
    histogram,
    renewals: histogram.reduce((a, b) => a + b, 0),
    closeCalls: histogram.slice(0, closeBuckets).reduce((a, b) => a + b, 0),
  };
}

/** What a store counted from its events for one prefix group over the window. */
export interface EventTally {
  released: number;
  expired: number;
  forceReleased: number;
  renewFailed: number;
  holdHistogram: number[];
}

export function emptyTally(): EventTally {
  return { released: 0, expired: 0, forceReleased: 0, renewFailed: 0, holdHistogram: new Array<number>(HOLD_HISTOGRAM_BOUNDS_MS.length + 1).fill(0) };
}

function addTally(into: EventTally, from: EventTally): void {
  into.released += from.released;
  into.expired += from.expired;
  into.forceReleased += from.forceReleased;
  into.renewFailed += from.renewFailed;
  from.holdHistogram.forEach((n, i) => (into.holdHistogram[i] = (into.holdHistogram[i] ?? 0) + n));
}

/** Tallies events (terminal kinds and renew_failed) per prefix group; other kinds are ignored. */
export function tallyEvents(events: Iterable<Pick<LeaseEvent, "kind" | "resource" | "holdMs">>, into = new Map<string, EventTally>()): Map<string, EventTally> {
  for (const event of events) {
    const group = slackGroupOf(event.resource);
    let tally = into.get(group);
    if (!tally) {
      tally = emptyTally();
      into.set(group, tally);
    }
    if (event.kind === "renew_failed") tally.renewFailed += 1;
    else if (event.kind === "released" || event.kind === "expired" || event.kind === "force_released") {
      if (event.kind === "released") tally.released += 1;
      else if (event.kind === "expired") tally.expired += 1;
      else tally.forceReleased += 1;
      const i = holdBucketIndex(event.holdMs ?? 0);
      tally.holdHistogram[i] = (tally.holdHistogram[i] ?? 0) + 1;
    }
  }
  return into;
}

/** The p99 of how late renewals arrived after ttl/3, in ms; each bucket counts at its lowest slack (the latest arrival). */
export function p99LatenessMs(rows: readonly RenewalSlackRow[]): number | null {
  const samples: Array<{ lateness: number; n: number }> = [];
  let total = 0;
  for (const row of rows) {
    row.histogram.forEach((n, i) => {
      if (n <= 0) return;
      const left = i / SLACK_BUCKET_COUNT;
      samples.push({ lateness: Math.max(0, (1 - RENEW_FRACTION - left) * row.ttlMs), n });
      total += n;
    });
  }
  if (total === 0) return null;
  samples.sort((a, b) => a.lateness - b.lateness);
  const rank = Math.ceil(0.99 * total);
  let seen = 0;
  for (const s of samples) {
    seen += s.n;
    if (seen >= rank) return Math.round(s.lateness);
  }
  return Math.round(samples[samples.length - 1]!.lateness);
}

/** Rounds up to two significant digits (12 340 → 13 000), so suggestions read as settings. */
export function roundUpToSetting(ms: number): number {
  if (ms <= 0) return 0;
  const step = 10 ** Math.max(0, Math.floor(Math.log10(ms)) - 1);
  return Math.ceil(ms / step) * step;
}

const formatMs = (ms: number) => (ms >= 10_000 ? `${Math.round(ms / 100) / 10} s` : ms >= 1_000 ? `${Math.round(ms / 10) / 100} s` : `${Math.round(ms)} ms`);
const formatPercent = (share: number) => `${Math.round(share * 1000) / 10} %`;

/** The advice for one prefix (group) from its slack rows and event tally. */
export function adviseTtl(prefix: string, rows: readonly RenewalSlackRow[], tally: EventTally): TtlAdvice {
  const slack = summariseSlack(rows);
  const byTtl = new Map<number, number>();
  for (const row of rows) byTtl.set(row.ttlMs, (byTtl.get(row.ttlMs) ?? 0) + row.histogram.reduce((a, b) => a + b, 0));
  // The TTL as used: the one most renewals were measured against.
  const ttlMs = [...byTtl.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0]?.[0] ?? null;
  const lateness = p99LatenessMs(rows);
  const base = {
    prefix,
    ttlMs,
    renewals: slack.renewals,
    slackHistogram: slack.histogram,
    closeCalls: slack.closeCalls,
    p99HoldMs: histogramQuantile(tally.holdHistogram, 0.99),
    p99LatenessMs: lateness,
    renewalsLost: tally.renewFailed,
    released: tally.released,
    expired: tally.expired,
    expiredToReleased: tally.released > 0 ? tally.expired / tally.released : null,
  };
  if (ttlMs === null || lateness === null) {
    return {
      ...base,
      suggestedTtlMs: null,
      suggestedRenewMs: null,
      change: "unknown",
      reason:
        tally.renewFailed > 0
          ? `${tally.renewFailed} renewals were refused and none succeeded in this window, so there is no slack to measure; check that holders renew well before their TTL.`
          : "No renewals in this window, so there is nothing to measure; advice needs holders that renew.",
    };
  }
  const attempts = slack.renewals + tally.renewFailed;
  const lostShare = attempts > 0 ? tally.renewFailed / attempts : 0;
  // Lost renewals arrived after expiry, at least 2/3 of the TTL late; past 1 % of attempts they are the p99.
  const isLostP99 = lostShare > LOST_SHARE_LIMIT;
  const effectiveLateness = isLostP99 ? Math.max(lateness, (1 - RENEW_FRACTION) * ttlMs) : lateness;
  const neededTtl = effectiveLateness / LATENESS_BUDGET;
  if (neededTtl <= ttlMs) {
    const why =
      lateness === 0
        ? `renewals arrive on time (by ttl/3) and the slowest 1 % still find at least ${formatPercent(1 - RENEW_FRACTION)} of the ${formatMs(ttlMs)} TTL left`
        : `the slowest 1 % of renewals arrive ${formatMs(lateness)} after ttl/3 and still keep at least ${formatPercent(CLOSE_CALL_FRACTION)} of the ${formatMs(ttlMs)} TTL`;
    const expiries = tally.expired > 0 ? `; the ${tally.expired} expiries look like holders that stopped, not a TTL too short` : "";
    return {
      ...base,
      suggestedTtlMs: ttlMs,
      suggestedRenewMs: Math.floor(ttlMs * RENEW_FRACTION),
      change: "keep",
      reason: `Keep the TTL: ${why}${expiries}.`,
    };
  }
  const suggestedTtlMs = roundUpToSetting(neededTtl);
  const suggestedRenewMs = Math.floor(suggestedTtlMs * RENEW_FRACTION);
  const cause = isLostP99
    ? `${formatPercent(lostShare)} of renewals came too late to save the lease`
    : `the slowest 1 % of renewals arrive ${formatMs(lateness)} after ttl/3 (${slack.closeCalls} close calls under ${formatPercent(CLOSE_CALL_FRACTION)} left)`;
  return {
    ...base,
    suggestedTtlMs,
    suggestedRenewMs,
    change: "lengthen",
    reason: `Lengthen the TTL to ${formatMs(suggestedTtlMs)} and renew every ${formatMs(suggestedRenewMs)}: ${cause}, so a ${formatMs(ttlMs)} TTL is one pause away from losing leases.`,
  };
}

export interface AdviceWindow {
  prefix: string;
  from: Date;
  to: Date;
}

const ZTtlAdviceQuery = z.strictObject({ prefix: ZPrefix.optional(), from: z.date().optional(), to: z.date().optional(), signal: ZSignal });
const ZRenewalSlackQuery = z.strictObject({ prefix: ZPrefix.optional(), from: z.date(), to: z.date(), signal: ZSignal });

/** Validated renewalSlack query: at most 7 days, `to` after `from`. */
export function parseRenewalSlackQuery(query: unknown): { prefix?: string; from: Date; to: Date } {
  const q = parseOrThrow(ZRenewalSlackQuery, query, "renewalSlack");
  if (Number.isNaN(q.from.getTime()) || Number.isNaN(q.to.getTime())) throw new LeaseError("renewalSlack: from and to must be valid dates");
  if (q.to.getTime() <= q.from.getTime()) throw new LeaseError("renewalSlack: to must be after from");
  if (q.to.getTime() - q.from.getTime() > MAX_ADVICE_WINDOW_MS) throw new LeaseError("renewalSlack: the window is at most 7 days");
  return q;
}

/** Validated window of a ttlAdvice query; `now` is the default end. */
export function resolveAdviceWindow(input: TtlAdviceQuery | undefined, now: Date): AdviceWindow {
  const query = parseOrThrow(ZTtlAdviceQuery, input ?? {}, "ttlAdvice");
  const to = query.to ?? now;
  const from = query.from ?? new Date(to.getTime() - DEFAULT_ADVICE_WINDOW_MS);
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) throw new LeaseError("ttlAdvice: from and to must be valid dates");
  if (to.getTime() <= from.getTime()) throw new LeaseError("ttlAdvice: to must be after from");
  if (to.getTime() - from.getTime() > MAX_ADVICE_WINDOW_MS) throw new LeaseError("ttlAdvice: the window is at most 7 days");
  return { prefix: query.prefix ?? "", from, to };
}

/** The report: advice for everything under the prefix, and per group. */
export function buildTtlAdviceReport(
  store: string,
  window: AdviceWindow,
  slackRows: readonly RenewalSlackRow[],
  tallies: ReadonlyMap<string, EventTally>,
  isPartial: boolean,
): TtlAdviceReport {
  const rows = mergeSlackRows(slackRows.filter((r) => isSlackGroupInPrefix(r.group, window.prefix)));
  const groups = new Set<string>([...rows.map((r) => r.group), ...tallies.keys()]);
  const overallTally = emptyTally();
  for (const tally of tallies.values()) addTally(overallTally, tally);
  const perGroup = [...groups].map((group) => adviseTtl(group, rows.filter((r) => r.group === group), tallies.get(group) ?? emptyTally()));
  perGroup.sort((a, b) => b.renewals - a.renewals || b.renewalsLost - a.renewalsLost || a.prefix.localeCompare(b.prefix));
  return {
    store,
    prefix: window.prefix,
    from: window.from,
    to: window.to,
    overall: adviseTtl(window.prefix, rows, overallTally),
    groups: perGroup.slice(0, MAX_ADVICE_GROUPS),
    isPartial,
  };
}
