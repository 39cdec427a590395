/**
 * Store shapes → console views. The only place that looks inside a `Lease` or a
 * `LeaseEvent` for display (its free-form `detail` is worded by event-details.ts).
 */
import { type Lease, type LeaseEvent, leaseStateAt, OVERDUE_FRACTION, type StoreKind } from "@leasewatch/lease";
import { describeEventDetail, eventDetailItems } from "./event-details";
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
    overdueByMs: nowMs - (lease.renewedAt.getTime() + lease.ttlMs * OVERDUE_FRACTION),
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
    details: eventDetailItems(event).map(({ label, value }) => ({ label, value })),
  };
}
