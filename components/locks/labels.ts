/** Words for the filter values the URL carries. */
export const LOCK_STATE_LABELS = {
  held: "Held (valid)",
  expiring: "Expiring soon",
  overdue: "Renewal overdue",
  lapsed: "Lapsed, not swept",
  stuck: "Overdue or lapsed",
  expired: "Expired (history)",
} as const;

export const LEASE_SORT_LABELS = {
  expires: "Expires soonest",
  held_longest: "Held longest",
  newest: "Newest",
} as const;

/** Fixed windows (custom from/to is set on the overview and events pages). */
export const WINDOW_LABELS = {
  "15m": "15 min",
  "1h": "1 hour",
  "6h": "6 hours",
  "24h": "24 hours",
  "7d": "7 days",
} as const;

/**
 * The state is the store's, as of the last read: a holder may have renewed since,
 * so a countdown that runs out between polls says "due now", not "lapsed" —
 * only the store can say a lease lapsed.
 */
export const RENEWAL_DUE_LABEL = "due now";
