/**
 * Shapes of the counts above every list (client-safe: no zod, no server imports;
 * lib/console/facets/facets.ts reads them).
 */
import type { StoreOutcome } from "@/lib/console/shared/views";

/** Rows read per store at most (newest first): hours of expiries, yet bounded for any store. */
export const FACET_SCAN_LIMIT = 5_000;

export const FACET_VIEWS = ["leases", "events"] as const;
export type FacetViewName = (typeof FACET_VIEWS)[number];
export type FacetField = "owner" | "task" | "resource" | "prefix" | "kind";

/** What is counted, in words: "13 of 47 expiries". */
export type FacetNoun = "leases" | "expiries" | "events";

export interface FacetValue {
  value: string;
  count: number;
}

export interface FacetGroup {
  /** The URL parameter a link on a value sets (prefix groups set `prefix`). */
  field: FacetField;
  values: FacetValue[];
}

export interface FacetsView {
  readAt: string;
  /** Which list the counts are for, and what it lists. */
  view: FacetViewName;
  noun: FacetNoun;
  /** Rows counted (all stores); equal to the list's total unless `isCapped`. */
  total: number;
  /** A store had more rows than FACET_SCAN_LIMIT: the counts are of its newest ones. */
  isCapped: boolean;
  groups: FacetGroup[];
  /** Window of the counted events (null for current leases). */
  from: string | null;
  to: string | null;
  stores: StoreOutcome<{ counted: number; isCapped: boolean }>[];
}
