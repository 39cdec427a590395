/**
 * The time scale the overview's charts share (pure, client-safe): UTC-aligned
 * ticks, their labels, and the events link of one bucket.
 */
import { eventsHref, type ListLinkFilters } from "./links";

const MINUTE = 60_000;
const DAY = 86_400_000;

/** Tick spacings, each dividing a UTC day, so ticks land on the same clock times whatever the window. */
const TICK_STEPS_MS = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440].map((m) => m * MINUTE);
/** About this many labels fit under a half-width chart at 1280 px without overlapping. */
export const MAX_TICKS = 8;

/**
 * Ticks shared by every time chart of a view, so their labels line up: the
 * narrowest of TICK_STEPS_MS that gives at most `maxTicks` ticks, aligned to
 * UTC (every step divides a day, and the epoch starts at UTC midnight), and at
 * least the bucket size (a tick between two buckets would point at nothing).
 */
export function timeTicks(startMs: number, endMs: number, bucketMs: number, maxTicks = MAX_TICKS): number[] {
  if (!(endMs > startMs)) return Number.isFinite(startMs) ? [startMs] : [];
  const span = endMs - startMs;
  const step =
    TICK_STEPS_MS.find((s) => s >= bucketMs && Math.floor(span / s) + 1 <= maxTicks) ?? DAY * Math.ceil(span / DAY / Math.max(1, maxTicks - 1));
  const ticks: number[] = [];
  for (let t = Math.ceil(startMs / step) * step; t <= endMs; t += step) ticks.push(t);
  return ticks;
}

function utcDate(t: number): string {
  const d = new Date(t);
  return `${d.toLocaleString("en-US", { month: "short", timeZone: "UTC" })} ${d.getUTCDate()}`;
}

/**
 * Labels for `ticks` (UTC): "14:05"; a tick on a new UTC day than the tick before
 * it (or the window's start) also names the date — "Nov 26" at midnight, "Nov 26
 * 02:00" otherwise — so a window across midnight says where the day changes.
 */
export function tickLabels(ticks: readonly number[], startMs: number): Map<number, string> {
  const labels = new Map<number, string>();
  let previousDay = Math.floor(startMs / DAY);
  ticks.forEach((t, i) => {
    const day = Math.floor(t / DAY);
    const hhmm = new Date(t).toISOString().slice(11, 16);
    const isNewDay = day !== previousDay || (i === 0 && t % DAY === 0);
    labels.set(t, isNewDay ? (t % DAY === 0 ? utcDate(t) : `${utcDate(t)} ${hhmm}`) : hhmm);
    previousDay = day;
  });
  return labels;
}

/** Everything a time chart's x axis needs, computed once per view and shared by its charts. */
export interface TimeScale {
  bucketMs: number;
  startMs: number;
  endMs: number;
  ticks: number[];
  labels: Map<number, string>;
}

export function buildTimeScale(bucketStarts: readonly number[], bucketMs: number): TimeScale {
  const startMs = bucketStarts[0] ?? 0;
  const endMs = bucketStarts.at(-1) ?? startMs;
  const ticks = timeTicks(startMs, endMs, bucketMs);
  return { bucketMs, startMs, endMs, ticks, labels: tickLabels(ticks, startMs) };
}

/** How the charts name their bucket size: "minute", "hour", "day". */
export function bucketUnit(bucketMs: number): "minute" | "hour" | "day" {
  return bucketMs >= DAY ? "day" : bucketMs >= 60 * MINUTE ? "hour" : "minute";
}

/**
 * The window the overview's drill-down links carry. The event lists read a custom range
 * of at most `maxMs` (14 days); a longer overview window links to its newest `maxMs`.
 */
export function drillDownWindow(view: { window: string; from: string; to: string; endsAt?: string | null }, maxMs: number): Record<string, string> {
  const spanMs = Date.parse(view.to) - Date.parse(view.from);
  if (spanMs > maxMs) return { window: "custom", from: new Date(Date.parse(view.to) - maxMs).toISOString(), to: view.to };
  if (view.window === "custom") return { window: "custom", from: view.from, to: view.to };
  // A window ending at `at=` links to the same window: `at` means the same on every page.
  return view.endsAt ? { window: view.window, at: view.endsAt } : { window: view.window };
}

/** The events recorded in one bucket (`to` is exclusive in every store), keeping the view's other filters. */
export function bucketEventsHref(t: number, bucketMs: number, filters: Omit<ListLinkFilters, "from" | "to" | "window"> = {}): string {
  return eventsHref({ ...filters, from: new Date(t).toISOString(), to: new Date(t + bucketMs).toISOString() });
}

/**
 * Tooltip heading and announcement: the bucket as a UTC interval, "2026-11-26 14:05–14:06 UTC",
 * or a day bucket as its date, "2026-11-26 (UTC day)".
 */
export function formatBucketLabel(label: unknown, bucketMs: number): string {
  const t = typeof label === "number" ? label : Number(label);
  if (!Number.isFinite(t)) return "";
  if (bucketMs >= DAY) return `${new Date(t).toISOString().slice(0, 10)} (UTC day)`;
  const start = new Date(t).toISOString().slice(0, 16).replace("T", " ");
  const end = new Date(t + bucketMs).toISOString().slice(11, 16);
  return `${start}–${end} UTC`;
}
