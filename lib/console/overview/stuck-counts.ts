import type { LeasesView } from "@/lib/console/shared/views";

export interface StuckCount {
  store: string;
  /** Overdue or lapsed leases the store listed; null when it could not be read. */
  count: number | null;
  /** More may exist: the list was cut at its limit, or the read stopped at its bound (at volume). */
  isCapped: boolean;
  /** The read stopped before it had looked at every lease. */
  isPartial: boolean;
}

/**
 * The "overdue / lapsed now" tile's count per store. A count is a floor whenever the store said
 * there may be more, so it is never shown as a plain number: a read stopped by its budget that
 * found none is "0+", not the all-clear "0".
 */
export function stuckCounts(view: LeasesView): StuckCount[] {
  return view.stores.map((s) => ({
    store: s.store,
    count: s.ok ? view.items.filter((l) => l.store === s.store).length : null,
    isCapped: s.ok && (s.data.hasMore || s.data.partial !== undefined),
    isPartial: s.ok && s.data.partial !== undefined,
  }));
}
