/**
 * Shapes of the owner page (client-safe; lib/console/owners/get-owner.ts reads them).
 */
import type { EventView, LeaseView, StoreOutcome } from "@/lib/console/shared/views";

/**
 * Is it alive, in words the page can say plainly:
 * - `alive`: holds a lease whose renewals are current;
 * - `stalled`: holds leases but has missed their renewals (overdue or lapsed);
 * - `idle`: holds nothing now, but was seen within ALIVE_SEEN_MS;
 * - `gone`: holds nothing and was last seen longer ago;
 * - `unseen`: no lease and no event in the window.
 */
export type OwnerVerdict = "alive" | "stalled" | "idle" | "gone" | "unseen";

/** Seen this recently with nothing held: between two leases rather than gone. */
export const ALIVE_SEEN_MS = 60_000;

export interface OwnerStoreData {
  held: LeaseView[];
  /** More leases than the page shows. */
  hasMoreHeld: boolean;
  /** Store clock at the read. */
  storeNow: string;
}

export interface OwnerView {
  owner: string;
  readAt: string;
  from: string;
  to: string;
  storeNames: string[];
  verdict: OwnerVerdict;
  /** Latest event or renewal of this owner in any store; null if none in the window. */
  lastSeenAt: string | null;
  /** How long before the read that was, on the clock of the store that saw it. */
  lastSeenAgoMs: number | null;
  /** What was seen last ("expired on reindex:search in pg-main"). */
  lastSeenWhat: string | null;
  held: LeaseView[];
  /** Latest events, newest first, every store merged. */
  events: EventView[];
  /** Expiries, renewal failures and lost leases in the window, newest first. */
  troubles: EventView[];
  /** Trouble counts in the window by kind: exact unless `troubleCountCover` says what they cover. */
  troubleCounts: { expired: number; renew_failed: number; lost: number };
  /**
   * Null: the counts are exact. Otherwise they are at least these: a store stopped counting at
   * `limit` events (newest first) or at its read budget.
   */
  troubleCountCover: { reason: "limit"; limit: number; store: string } | { reason: "read_budget"; limit: null; store: string } | null;
  /** `troubles` lists at most this many events per store (newest first). */
  troubleListLimit: number;
  stores: StoreOutcome<{ held: number; hasMoreHeld: boolean }>[];
}
