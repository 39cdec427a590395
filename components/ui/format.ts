/**
 * Time formatting shared by server and client components. Pure functions so the
 * server's first paint and the client's ticking text agree.
 */

function toMs(value: Date | string | number): number {
  return value instanceof Date ? value.getTime() : typeof value === "number" ? value : Date.parse(value);
}

/** Exact time in UTC, e.g. "2026-11-25 14:03:07.120 UTC" (shown on hover). */
export function formatUtc(value: Date | string | number): string {
  const ms = toMs(value);
  if (!Number.isFinite(ms)) return "invalid time";
  return `${new Date(ms).toISOString().replace("T", " ").replace("Z", "")} UTC`;
}

/** A compact duration: "850 ms", "4 s", "1 min 20 s", "3 h 5 min", "2 d 4 h". */
export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1_000) return `${Math.round(abs)} ms`;
  const s = Math.floor(abs / 1_000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** Coarser duration for relative phrases: one or two units, seconds resolution. */
function formatSpan(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1_000) return "0 s";
  const s = Math.floor(abs / 1_000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 && h < 10 ? `${h} h ${m % 60} min` : `${h} h`;
  return `${Math.floor(h / 24)} d`;
}

/** "in 4 s", "3 min ago", "just now" — `value` relative to `now` (both on the same clock). */
export function formatRelative(value: Date | string | number, now: Date | number): string {
  const diff = toMs(value) - toMs(now);
  if (!Number.isFinite(diff)) return "—";
  if (Math.abs(diff) < 1_000) return diff >= 0 ? "now" : "just now";
  return diff > 0 ? `in ${formatSpan(diff)}` : `${formatSpan(diff)} ago`;
}
