/**
 * Shapes of the past view (`?at=`), plain JSON like the rest of views.ts. Kept apart
 * so client components can import them without the read model.
 */
import type { PastHoldEnding } from "@leasewatch/lease";
import type { LeaseView, PageSummary, StoreOutcome } from "@/lib/console/shared/views";

/** A lease as it stood at the instant: who held it, from when, and how its hold ended later. */
export interface PastLeaseView extends Pick<LeaseView, "store" | "storeKind" | "resource" | "leaseId" | "owner" | "task" | "fencingToken" | "acquiredAt"> {
  /** How long it had been held at the instant. */
  heldForMs: number;
  /** How the hold ended later: released, expired, force_released, or still held now. */
  ending: PastHoldEnding;
  endedAt: string | null;
}

/** Why a store could not answer for the instant, in words an on-call engineer can act on. */
export interface PastGap {
  store: string;
  reason: "before_history" | "future";
  historyStartsAt: string | null;
  message: string;
}

export interface PastLeasesView {
  /** The instant (ms precision, UTC). */
  at: string;
  readAt: string;
  storeNames: string[];
  /** Longest-held first, across the selected stores. */
  items: PastLeaseView[];
  /** Some store had more holders than shown: narrow with prefix, owner or task. */
  hasMore: boolean;
  limit: number;
  /** `partial`: the store stopped reading before it had every current lease that could match. */
  stores: StoreOutcome<PageSummary & { historyStartsAt: string | null }>[];
  gaps: PastGap[];
}
