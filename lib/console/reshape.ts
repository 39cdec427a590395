/**
 * Store shapes → console views. The only place that looks inside a `Lease` or a
 * `LeaseEvent` (and its free-form `detail`) for display.
 */
import { leaseStateAt, type Lease, type LeaseEvent, type StoreKind } from "@/lib/lease/types";
import type { EventView, LeaseView } from "./views";

/**
 * Durations are taken on the store's clock (`now` is the store time of the read),
 * so "expires in" is right even when this server's clock is off; the browser only
 * counts down from the moment it received them.
 */
export function reshapeLease(lease: Lease, storeKind: StoreKind, now: Date): LeaseView {
  const nowMs = now.getTime();
  return {
    store: lease.store,
    storeKind,
    resource: lease.resource,
    leaseId: lease.leaseId,
    owner: lease.owner,
    task: lease.task,
    fencingToken: String(lease.fencingToken),
    acquiredAt: lease.acquiredAt.toISOString(),
    renewedAt: lease.renewedAt.toISOString(),
    expiresAt: lease.expiresAt.toISOString(),
    ttlMs: lease.ttlMs,
    renewals: lease.renewals,
    state: leaseStateAt(lease, now),
    heldForMs: Math.max(0, nowMs - lease.acquiredAt.getTime()),
    sinceRenewalMs: Math.max(0, nowMs - lease.renewedAt.getTime()),
    expiresInMs: lease.expiresAt.getTime() - nowMs,
  };
}

export function reshapeEvent(event: LeaseEvent): EventView {
  return {
    id: event.id,
    store: event.store,
    at: event.at.toISOString(),
    kind: event.kind,
    resource: event.resource,
    leaseId: event.leaseId,
    owner: event.owner,
    task: event.task,
    fencingToken: event.fencingToken === null ? null : String(event.fencingToken),
    holdMs: typeof event.holdMs === "number" ? event.holdMs : null,
    actor: event.actor ?? null,
    reason: event.reason ?? null,
    note: describeEventDetail(event),
  };
}

const MAX_NOTE_CHARS = 200;

function text(value: unknown): string | null {
  if (typeof value === "string" && value !== "") return value;
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  return null;
}

function formatMs(ms: number): string {
  return ms < 1_000 ? `${ms} ms` : ms % 1_000 === 0 ? `${ms / 1_000} s` : `${(ms / 1_000).toFixed(1)} s`;
}

/** Detail keys the stores write, in words; anything else is shown as compact JSON. */
const DETAIL_WORDS: Record<string, (value: unknown) => string | null> = {
  ttlMs: (v) => (typeof v === "number" ? `ttl ${formatMs(v)}` : null),
  renewals: (v) => (typeof v === "number" || typeof v === "string" ? `${v} renewals` : null),
  seenToken: (v) => (text(v) ? `had seen token ${text(v)}` : null),
  by: (v) => (text(v) ? `refused by ${text(v)}` : null),
  reason: (v) => text(v),
  tookOverExpired: (v) => (v === true ? "took over an expired lease" : null),
};

/** One line saying what the event's `detail` adds, for the events table. */
export function describeEventDetail(event: LeaseEvent): string | null {
  const detail = { ...(event.detail ?? {}) };
  const parts: string[] = [];
  if (event.kind === "contended") {
    const owner = text(detail.holderOwner);
    const task = text(detail.holderTask);
    if (owner) parts.push(`held by ${owner}${task ? ` (${task})` : ""}`);
    delete detail.holderOwner;
    delete detail.holderTask;
  }
  // Already shown in their own columns.
  if (event.reason && detail.reason === event.reason) delete detail.reason;
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(detail)) {
    if (key === "leaseId") continue; // shown with the token
    const words = DETAIL_WORDS[key]?.(value) ?? null;
    if (words) parts.push(words);
    else if (value !== undefined && value !== null && !(key in DETAIL_WORDS)) rest[key] = value;
  }
  if (Object.keys(rest).length > 0) parts.push(JSON.stringify(rest));
  if ((event.kind === "renew_failed" || event.kind === "lost") && event.reason && !parts.includes(event.reason)) parts.unshift(event.reason);
  if (parts.length === 0) return null;
  const line = parts.join(" · ");
  return line.length > MAX_NOTE_CHARS ? `${line.slice(0, MAX_NOTE_CHARS - 1)}…` : line;
}
