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

/** One line saying what the event's `detail` adds, for the events table. */
export function describeEventDetail(event: LeaseEvent): string | null {
  const detail = event.detail ?? {};
  switch (event.kind) {
    case "contended": {
      const owner = text(detail.holderOwner);
      const task = text(detail.holderTask);
      if (owner) return `held by ${owner}${task ? ` (${task})` : ""}`;
      break;
    }
    case "fencing_rejected": {
      const seen = text(detail.seenToken);
      const by = text(detail.by) ?? event.actor ?? null;
      const parts = [by ? `refused by ${by}` : null, seen ? `had seen token ${seen}` : null].filter(Boolean);
      if (parts.length > 0) return parts.join("; ");
      break;
    }
    case "renew_failed":
    case "lost": {
      const reason = event.reason ?? text(detail.reason);
      if (reason) return reason;
      break;
    }
    default:
      break;
  }
  const keys = Object.keys(detail);
  if (keys.length === 0) return null;
  const json = JSON.stringify(detail);
  return json.length > MAX_NOTE_CHARS ? `${json.slice(0, MAX_NOTE_CHARS - 1)}…` : json;
}
