/**
 * An event's free-form `detail`, in words. One formatter for both stores so a
 * Postgres expiry and a Redis expiry read the same: a one-line summary for the
 * table ("expired at 02:04:00 UTC · recorded by sweep · 1 renewal") and labelled
 * fields with full UTC times for the expanded row. No key is ever shown as JSON
 * unless it is itself a nested object we know nothing about.
 */
import type { LeaseEvent } from "@leasewatch/lease";

/** One detail field: `label`/`value` for the expanded row, `phrase` for the one-line summary. */
export interface DetailItem {
  key: string;
  label: string;
  value: string;
  phrase: string;
}

const MAX_LINE_CHARS = 200;

function text(value: unknown): string | null {
  if (typeof value === "string" && value !== "") return value;
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  return null;
}

function count(value: unknown): number | null {
  const n = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) ? n : null;
}

/** A store time (ISO text or epoch ms) as a time; null when it is not one. */
function instant(value: unknown): number | null {
  const ms = typeof value === "number" ? value : typeof value === "string" ? (/^\d+$/.test(value) ? Number(value) : Date.parse(value)) : NaN;
  return Number.isFinite(ms) ? ms : null;
}

/** "2026-11-26 02:04:00.120 UTC", as components/ui/format's formatUtc writes it (lib/console sits below components). */
function formatUtc(ms: number): string {
  return `${new Date(ms).toISOString().replace("T", " ").replace("Z", "")} UTC`;
}

/** "02:04:00 UTC": the day is on the row already, the summary only needs the time. */
function clockTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 19)} UTC`;
}

function formatMs(ms: number): string {
  return ms < 1_000 ? `${ms} ms` : ms % 1_000 === 0 ? `${ms / 1_000} s` : `${(ms / 1_000).toFixed(1)} s`;
}

function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

/** Who recorded an expiry, as the stores name it (`force_release` → "force release"). */
function recorder(value: string): string {
  return value.replaceAll("_", " ");
}

type Known = (value: unknown) => Omit<DetailItem, "key"> | null;

/** Detail keys the stores write. Order here is the order shown. */
const KNOWN: Record<string, Known> = {
  expiredAt: (v) => {
    const ms = instant(v);
    return ms === null ? null : { label: "Expired at", value: formatUtc(ms), phrase: `expired at ${clockTime(ms)}` };
  },
  recordedBy: (v) => {
    const t = text(v);
    return t ? { label: "Recorded by", value: recorder(t), phrase: `recorded by ${recorder(t)}` } : null;
  },
  renewals: (v) => {
    const n = count(v);
    if (n === null) return null;
    return { label: "Renewals", value: n.toLocaleString("en-US"), phrase: n === 0 ? "no renewals" : plural(n, "renewal", "renewals") };
  },
  ttlMs: (v) => {
    const n = count(v);
    return n === null ? null : { label: "TTL", value: formatMs(n), phrase: `ttl ${formatMs(n)}` };
  },
  seenToken: (v) => {
    const t = text(v);
    return t ? { label: "Token the downstream had seen", value: t, phrase: `had seen token ${t}` } : null;
  },
  by: (v) => {
    const t = text(v);
    return t ? { label: "Refused by", value: t, phrase: `refused by ${t}` } : null;
  },
  reason: (v) => {
    const t = text(v);
    return t ? { label: "Reason", value: t, phrase: t } : null;
  },
  tookOverExpired: (v) => (v === true ? { label: "Took over", value: "an expired lease", phrase: "took over an expired lease" } : null),
};

/** "holderOwner" → "Holder owner". */
function labelOf(key: string): string {
  const words = key.replace(/[_-]+/g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase().trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function valueOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

/** Every detail field of `event`, formatted, known keys first in a fixed order. */
export function eventDetailItems(event: Pick<LeaseEvent, "kind" | "reason" | "detail">): DetailItem[] {
  const detail: Record<string, unknown> = { ...(event.detail ?? {}) };
  const items: DetailItem[] = [];
  if (event.kind === "contended") {
    const owner = text(detail.holderOwner);
    const task = text(detail.holderTask);
    if (owner) items.push({ key: "holder", label: "Held by", value: task ? `${owner} (task ${task})` : owner, phrase: `held by ${owner}${task ? ` (${task})` : ""}` });
    delete detail.holderOwner;
    delete detail.holderTask;
  }
  // Shown in their own places: the lease id beside the token, the event's own reason in its column.
  delete detail.leaseId;
  if (event.reason && detail.reason === event.reason) delete detail.reason;
  for (const [key, format] of Object.entries(KNOWN)) {
    if (!(key in detail)) continue;
    const item = format(detail[key]);
    // A value of an unexpected type is still shown, below, as label and value.
    if (!item) continue;
    items.push({ key, ...item });
    delete detail[key];
  }
  for (const [key, value] of Object.entries(detail)) {
    if (value === undefined || value === null || value === "") continue;
    const label = labelOf(key);
    const shown = valueOf(value);
    items.push({ key, label, value: shown, phrase: `${label.toLowerCase()} ${shown}` });
  }
  return items;
}

/** One line saying what the event's `detail` adds, for the events table; null when nothing. */
export function describeEventDetail(event: Pick<LeaseEvent, "kind" | "reason" | "detail">): string | null {
  const parts = eventDetailItems(event).map((item) => item.phrase);
  if ((event.kind === "renew_failed" || event.kind === "lost") && event.reason && !parts.includes(event.reason)) parts.unshift(event.reason);
  if (parts.length === 0) return null;
  const line = parts.join(" · ");
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS - 1)}…` : line;
}
