/**
 * Checks of a finished run against the store's own events (its clock, its order)
 * and a fenced downstream's history of accepted writes. Each returns the
 * violations it found, so a failing test prints what went wrong.
 */
import { TERMINAL_EVENT_KINDS, type LeaseEvent } from "../types";

/** One hold of a resource, as the store's events tell it. */
export interface HoldOnRecord {
  resource: string;
  leaseId: string;
  fencingToken: string;
  /** Position in the resource's acquisition order (0 = first). */
  order: number;
  acquiredAt: Date;
  /**
   * The earliest moment the store's events show the hold was over: its terminal
   * event, the expiry it records, or the next acquisition of the resource.
   * Undefined while still held.
   */
  endedBy?: Date;
}

const isTerminal = (kind: string) => (TERMINAL_EVENT_KINDS as readonly string[]).includes(kind);

function earlier(a: Date | undefined, b: Date): Date {
  return a === undefined || b < a ? b : a;
}

/** Holds per resource in acquisition order. `events` must be in store order (oldest first). */
export function holdsOnRecord(events: readonly LeaseEvent[]): Map<string, HoldOnRecord[]> {
  const byResource = new Map<string, HoldOnRecord[]>();
  const byLeaseId = new Map<string, HoldOnRecord>();
  for (const e of events) {
    if (e.kind === "acquired" && e.leaseId && e.fencingToken) {
      const holds = byResource.get(e.resource) ?? [];
      const previous = holds.at(-1);
      if (previous) previous.endedBy = earlier(previous.endedBy, e.at);
      const hold: HoldOnRecord = { resource: e.resource, leaseId: e.leaseId, fencingToken: e.fencingToken, order: holds.length, acquiredAt: e.at };
      holds.push(hold);
      byResource.set(e.resource, holds);
      byLeaseId.set(e.leaseId, hold);
    } else if (isTerminal(e.kind) && e.leaseId) {
      const hold = byLeaseId.get(e.leaseId);
      if (!hold) continue;
      hold.endedBy = earlier(hold.endedBy, e.at);
      // An `expired` event is recorded after the fact; when it says when the TTL ran out, that is the end.
      const expiredAt = e.kind === "expired" ? e.detail?.expiredAt : undefined;
      if (typeof expiredAt === "string" || typeof expiredAt === "number") hold.endedBy = earlier(hold.endedBy, new Date(expiredAt));
    }
  }
  return byResource;
}

/** Tokens must strictly increase per resource in acquisition order. */
export function findTokenOrderViolations(holds: Map<string, HoldOnRecord[]>): string[] {
  const violations: string[] = [];
  for (const [resource, list] of holds) {
    for (let i = 1; i < list.length; i++) {
      const [before, after] = [list[i - 1]!, list[i]!];
      if (BigInt(after.fencingToken) <= BigInt(before.fencingToken)) {
        violations.push(`${resource}: hold #${i} got token ${after.fencingToken} after ${before.fencingToken}`);
      }
    }
  }
  return violations;
}

/** Every lease ends at most once, and is recorded expired at most once. */
export function findRepeatedEnds(events: readonly LeaseEvent[]): string[] {
  const ends = new Map<string, string[]>();
  for (const e of events) {
    if (!isTerminal(e.kind) || !e.leaseId) continue;
    ends.set(e.leaseId, [...(ends.get(e.leaseId) ?? []), e.kind]);
  }
  return [...ends].filter(([, kinds]) => kinds.length > 1).map(([leaseId, kinds]) => `${leaseId}: ended ${kinds.length} times (${kinds.join(", ")})`);
}

export interface AcceptedWrite {
  id: string;
  key: string;
  fencingToken: string;
  writtenAt: Date;
}

/**
 * Stale writes the downstream accepted. A write is stale when, by the store's
 * events, its lease had ended before the write was made (`writtenAt`, the
 * downstream's clock at the write, no later than its commit; both clocks are
 * this machine's). The fence only refuses a token once a newer one reached the
 * downstream, so a stale write is *explained* when no write of a later hold of
 * the resource had been accepted before it. Keys are resource names.
 */
export function findStaleWrites(
  holds: Map<string, HoldOnRecord[]>,
  history: readonly AcceptedWrite[],
): { stale: AcceptedWrite[]; unexplained: string[] } {
  const stale: AcceptedWrite[] = [];
  const unexplained: string[] = [];
  const latestOrderWritten = new Map<string, number>();
  const sorted = [...history].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  for (const write of sorted) {
    const hold = holds.get(write.key)?.find((h) => h.fencingToken === write.fencingToken);
    if (!hold) {
      unexplained.push(`${write.key}: accepted write ${write.id} with token ${write.fencingToken}, which no hold on record had`);
      continue;
    }
    const newest = latestOrderWritten.get(write.key) ?? -1;
    const isStale = hold.endedBy !== undefined && hold.endedBy < write.writtenAt;
    if (isStale) stale.push(write);
    // Whether stale by the clocks or not, an older hold's write after a newer hold's is what the fence exists to refuse.
    if (newest > hold.order) {
      unexplained.push(
        `${write.key}: write ${write.id} of hold #${hold.order} (token ${write.fencingToken}${isStale ? `, ended ${hold.endedBy!.toISOString()}` : ""}) ` +
          `accepted at ${write.writtenAt.toISOString()} after hold #${newest} had written`,
      );
    }
    latestOrderWritten.set(write.key, Math.max(newest, hold.order));
  }
  return { stale, unexplained };
}

/** Whole-millisecond slack between an event's `at` and `acquiredAt + holdMs` (stores round to the millisecond). */
const HOLD_MS_SLACK = 2;

/**
 * Holds that overlap, holdMs that disagrees with the times, and acquires that
 * never ended. Per resource, each hold lasts from its `acquired` event to
 * `acquired.at + holdMs` of its terminal event (the release, or the moment the
 * TTL ran out for an expiry): the next acquisition of the resource must not
 * start before that. A hold with no terminal event must be in `heldLeaseIds`
 * (held now) and be the resource's last. `events` are in store order.
 */
export function findHoldViolations(events: readonly LeaseEvent[], heldLeaseIds: ReadonlySet<string> = new Set()): string[] {
  const violations: string[] = [];
  const acquiredById = new Map<string, LeaseEvent>();
  const terminalById = new Map<string, LeaseEvent>();
  const acquisitions = new Map<string, LeaseEvent[]>();
  for (const e of events) {
    if (!e.leaseId) continue;
    if (e.kind === "acquired") {
      acquiredById.set(e.leaseId, e);
      acquisitions.set(e.resource, [...(acquisitions.get(e.resource) ?? []), e]);
    } else if (isTerminal(e.kind) && !terminalById.has(e.leaseId)) {
      terminalById.set(e.leaseId, e);
      const acquired = acquiredById.get(e.leaseId);
      if (!acquired) {
        violations.push(`${e.resource}: ${e.kind} of lease ${e.leaseId}, which was never acquired`);
        continue;
      }
      if (e.holdMs === undefined) {
        violations.push(`${e.resource}: ${e.kind} of lease ${e.leaseId} has no holdMs`);
        continue;
      }
      const endedAt = acquired.at.getTime() + e.holdMs;
      // A release ends the hold when it is recorded; an expiry is recorded at or after the TTL ran out.
      const isConsistent =
        e.kind === "expired" ? e.at.getTime() >= endedAt - HOLD_MS_SLACK : Math.abs(e.at.getTime() - endedAt) <= HOLD_MS_SLACK;
      if (!isConsistent || e.holdMs < 0) {
        violations.push(`${e.resource}: ${e.kind} at ${e.at.toISOString()} says held ${e.holdMs} ms from ${acquired.at.toISOString()}`);
      }
    }
  }
  for (const [resource, list] of acquisitions) {
    list.forEach((acquired, i) => {
      const leaseId = acquired.leaseId!;
      const terminal = terminalById.get(leaseId);
      const next = list[i + 1];
      if (!terminal) {
        if (!heldLeaseIds.has(leaseId)) violations.push(`${resource}: lease ${leaseId} acquired ${acquired.at.toISOString()} never ended and is not held`);
        if (next) violations.push(`${resource}: acquired again at ${next.at.toISOString()} by ${next.owner} while ${acquired.owner} still held it`);
        return;
      }
      if (!next || terminal.holdMs === undefined) return;
      const endedAt = acquired.at.getTime() + terminal.holdMs;
      if (next.at.getTime() < endedAt) {
        violations.push(
          `${resource}: ${acquired.owner} held it ${acquired.at.toISOString()}–${new Date(endedAt).toISOString()}, ` +
            `overlapping ${next.owner} from ${next.at.toISOString()}`,
        );
      }
    });
  }
  return violations;
}

/**
 * Fencing rejections that compared tokens the store never issued for that
 * resource: the refused token and the token the downstream had seen must both
 * be holds of the same resource in this store, the seen one acquired before the
 * rejection and higher. A rejection that "saw" another store's token is a
 * false alarm: tokens are only comparable within one store.
 */
export function findForeignFencingRejections(events: readonly LeaseEvent[]): string[] {
  const issued = new Map<string, Date>();
  const violations: string[] = [];
  for (const e of events) {
    if (e.kind === "acquired" && e.fencingToken) issued.set(`${e.resource} ${e.fencingToken}`, e.at);
    if (e.kind !== "fencing_rejected") continue;
    const seen = String(e.detail?.seenToken);
    const seenAcquiredAt = issued.get(`${e.resource} ${seen}`);
    const isOwnToken = e.fencingToken !== null && issued.has(`${e.resource} ${e.fencingToken}`);
    const isNewer = e.fencingToken !== null && /^[0-9]+$/.test(seen) && BigInt(seen) > BigInt(e.fencingToken);
    if (!isOwnToken || seenAcquiredAt === undefined || seenAcquiredAt > e.at || !isNewer) {
      violations.push(`${e.resource}: token ${e.fencingToken} refused at ${e.at.toISOString()}, having seen ${seen}`);
    }
  }
  return violations;
}

/**
 * Every invariant a complete history (nothing trimmed) must keep: tokens
 * increase per resource, each lease ends at most once, holds never overlap and
 * their holdMs agrees with the times, every acquire ended or is held now
 * (conservation), and fencing rejections compare one store's tokens.
 */
export function findHistoryViolations(events: readonly LeaseEvent[], heldLeaseIds: ReadonlySet<string> = new Set()): string[] {
  return [
    ...findTokenOrderViolations(holdsOnRecord(events)),
    ...findRepeatedEnds(events),
    ...findHoldViolations(events, heldLeaseIds),
    ...findForeignFencingRejections(events),
  ];
}
