/**
 * The lease contract shared by every store. Names here are public: the console,
 * the workload generator and downstream users rely on them.
 *
 * Times are `Date`s on the *store's* clock (Postgres `clock_timestamp()`, Redis
 * `TIME`). Fencing tokens are decimal strings so they survive JSON and exceed
 * 2^53; compare them with `compareFencingTokens`.
 */

export type StoreKind = "postgres" | "redis";

export const LEASE_EVENT_KINDS = [
  "acquired",
  "released",
  "expired",
  "force_released",
  "contended",
  "renew_failed",
  "lost",
  "fencing_rejected",
] as const;
export type LeaseEventKind = (typeof LEASE_EVENT_KINDS)[number];

/** Events that end a hold; each carries `holdMs`. */
export const TERMINAL_EVENT_KINDS = ["released", "expired", "force_released"] as const satisfies readonly LeaseEventKind[];
export type TerminalEventKind = (typeof TERMINAL_EVENT_KINDS)[number];

export interface Lease {
  store: string;
  resource: string;
  /** Unique per hold; release/renew must present it. */
  leaseId: string;
  owner: string;
  task: string;
  /** Strictly increasing per resource, forever. Decimal string. */
  fencingToken: string;
  acquiredAt: Date;
  expiresAt: Date;
  ttlMs: number;
  /** Last successful renewal (equals acquiredAt until the first renew). */
  renewedAt: Date;
  renewals: number;
}

export interface LeaseHolder {
  owner: string;
  task: string;
  leaseId: string;
  expiresAt: Date;
  fencingToken: string;
}

export interface LeaseEvent {
  /** Store-specific, opaque, ordered within a store. */
  id: string;
  store: string;
  at: Date;
  kind: LeaseEventKind;
  resource: string;
  leaseId: string | null;
  /**
   * For `contended` these name the *requester* that was refused; the holder is in
   * `detail.holderOwner` / `detail.holderTask`, and leaseId/fencingToken are the holder's.
   */
  owner: string | null;
  task: string | null;
  fencingToken: string | null;
  holdMs?: number;
  actor?: string;
  reason?: string;
  detail?: Record<string, unknown>;
}

export interface AcquireInput {
  resource: string;
  owner: string;
  task: string;
  ttlMs: number;
  /**
   * The lease id to grant under (a UUID), for a caller that may send the same acquire again
   * (a retry after a lost reply, or the lock API's Idempotency-Key on another replica). While
   * that lease holds the resource, a repeat answers as the first did and records nothing; once
   * it has ended, a repeat throws LeaseError "lease_ended" instead of granting the id again
   * (Postgres: for as long as its events are kept; Redis: for at least a minute after that
   * lease ended). Default: a new id.
   */
  leaseId?: string;
}
export type AcquireResult =
  | { acquired: true; lease: Lease; /** set when this acquire recorded the previous holder's expiry */ tookOverExpired?: boolean }
  | { acquired: false; holder: LeaseHolder };

export interface RenewInput {
  resource: string;
  leaseId: string;
  ttlMs: number;
}
export type LeaseRefusal = "not_owner" | "expired";
export type RenewResult =
  | { renewed: true; expiresAt: Date; renewals: number }
  | { renewed: false; reason: LeaseRefusal };

export interface ReleaseInput {
  resource: string;
  leaseId: string;
  /**
   * The holder lost the lease to its local deadline and gives it back (withLease does): the end
   * is recorded as `expired` (detail.recordedBy "release_after_deadline"), so the
   * expired-to-released ratio counts it as the holder that could not keep its lease it is.
   */
  afterDeadlineLoss?: boolean;
}
/**
 * A release of a lease that a release already ended (the same call sent again after its reply
 * was lost, or a new one) answers as that release did, even if the resource changed hands since
 * (Redis: for at least a minute after it; Postgres: while its event is kept).
 */
export type ReleaseResult =
  | { released: true; holdMs: number; event: LeaseEvent }
  | { released: false; reason: LeaseRefusal };

export interface ForceReleaseInput {
  resource: string;
  leaseId: string;
  actor: string;
  reason: string;
}
export type ForceReleaseResult =
  | { released: true; holdMs: number; event: LeaseEvent; lease: Lease }
  /** `current` is the lease now holding the resource, if any ("the lease changed; here is the new one"). */
  | { released: false; reason: "not_found" | "lease_changed"; current: Lease | null };

/** Which lease's force-release to look up (LeaseStore.forceReleasedEvent). */
export interface ForceReleasedQuery {
  resource: string;
  leaseId: string;
}

export interface FencingRejectionInput {
  resource: string;
  /** The stale token that was refused. */
  fencingToken: string;
  /** The token the downstream had already seen. */
  seenToken: string;
  /** Who refused it (downstream name). */
  by: string;
  owner?: string;
  task?: string;
  leaseId?: string;
}

export interface LostInput {
  resource: string;
  leaseId: string;
  owner: string;
  task: string;
  fencingToken: string;
  reason: "not_owner" | "expired" | "deadline_passed";
}

/** State of a current lease as the console shows it. */
export type LeaseState = "held" | "expiring" | "overdue" | "lapsed";

/**
 * State of a lease at store time `now`. "held" in a list filter means "still valid"
 * (it includes expiring and overdue); as a label the most urgent state wins.
 */
export function leaseStateAt(lease: Pick<Lease, "expiresAt" | "renewedAt" | "ttlMs">, now: Date): LeaseState {
  const remaining = lease.expiresAt.getTime() - now.getTime();
  if (remaining <= 0) return "lapsed";
  if (now.getTime() - lease.renewedAt.getTime() > lease.ttlMs * OVERDUE_FRACTION) return "overdue";
  if (remaining < lease.ttlMs * EXPIRING_FRACTION) return "expiring";
  return "held";
}
export type LeaseSort = "expires" | "held_longest" | "newest";

/**
 * Read options every store read accepts. An aborted signal stops the store's work
 * (Postgres cancels the running statement), not only the caller's wait.
 */
export interface ReadSignal {
  signal?: AbortSignal;
}

export interface ListQuery extends ReadSignal {
  prefix?: string;
  owner?: string;
  task?: string;
  state?: LeaseState;
  sort?: LeaseSort;
  limit?: number;
  cursor?: string;
}

export interface EventQuery extends ReadSignal {
  resource?: string;
  prefix?: string;
  owner?: string;
  task?: string;
  /** Events of one grant (its lease id). */
  leaseId?: string;
  /** Events carrying this fencing token (decimal string): one grant's, and fencing rejections of it. */
  fencingToken?: string;
  kinds?: readonly LeaseEventKind[];
  from?: Date;
  to?: Date;
  limit?: number;
  cursor?: string;
  /** Default "desc" (newest first). */
  order?: "asc" | "desc";
}

/**
 * What was held at a past instant. `at` names a millisecond: the answer is the state
 * after every event the store recorded in that millisecond, applied in the store's
 * own order (its event ids), so an acquire and a release in the same millisecond
 * both count.
 */
export interface HeldAtQuery extends ReadSignal {
  at: Date;
  /** One resource exactly (the lease page). */
  resource?: string;
  prefix?: string;
  owner?: string;
  task?: string;
  /** Default 100, at most 1000; the longest-held come first. */
  limit?: number;
}

/** How a hold that was live at the instant ended later. */
export type PastHoldEnding = TerminalEventKind | "held";

export interface PastHold {
  store: string;
  resource: string;
  leaseId: string;
  owner: string;
  task: string;
  fencingToken: string;
  acquiredAt: Date;
  /** How long it had been held at the instant. */
  heldForMs: number;
  /** "held": still held now. "expired" also covers a lapsed lease whose expiry is not recorded yet. */
  ending: PastHoldEnding;
  /** When the hold ended (for an expiry: when its TTL ran out); null while still held. */
  endedAt: Date | null;
}

export type HeldAtResult =
  | {
      covered: true;
      at: Date;
      /** Ordered by acquiredAt (longest-held first), then resource. */
      items: PastHold[];
      hasMore: boolean;
      /**
       * Set when the store stopped before reading every current lease that could match (Redis: a
       * prefix read past its read budget). The holders listed are right; some may be missing.
       */
      partial?: PartialRead;
      now: Date;
      historyStartsAt: Date;
    }
  /**
   * The store cannot answer for this instant: it is before the retained history
   * (`historyStartsAt`, null when the store has recorded no events), or after the store's clock.
   */
  | { covered: false; reason: "before_history" | "future"; at: Date; now: Date; historyStartsAt: Date | null };

export interface Page<T> {
  items: T[];
  nextCursor?: string;
  /**
   * Set when the store stopped before answering in full. The items are exact (the first ones of
   * the full answer, in order) but may not be all of them, and there is no next page.
   */
  partial?: PartialRead;
}

/**
 * Why a read answered in part: `read_budget` — it examined its budget of keys and entries
 * (Redis: RedisLeaseStore `readKeyBudget`) before finding the rest; `index_depth` — the index it
 * reads keeps only the newest entries, and the window reaches further back than they do;
 * `index_building` — the index it reads is still being built from history recorded before it
 * existed (Redis owner / task filters, after an upgrade), so its newest events may be missing.
 */
export interface PartialRead {
  reason: "read_budget" | "index_depth" | "index_building";
  /** Keys and entries the read examined. */
  examined: number;
}

/** A page of leases plus the store's clock when it was read, so states and countdowns use store time. */
export interface LeasePage extends Page<Lease> {
  now: Date;
}

/** Per-interval counters and hold histogram, read from rollups (not raw event scans). */
export type CounterKind = LeaseEventKind | "renewed";
export interface StatsQuery extends ReadSignal {
  from: Date;
  to: Date;
  /** 60_000 (minute), 3_600_000 (hour) or 86_400_000 (UTC day). */
  bucketMs: number;
  /** 1..3: contention is grouped by this many leading `:` segments of the resource. */
  prefixDepth?: number;
}
export interface StatsBucket {
  start: Date;
  counts: Record<CounterKind, number>;
  /** Counts per HOLD_HISTOGRAM_BOUNDS_MS bucket (last bucket is +Inf), over terminal events. */
  holdHistogram: number[];
  /** Terminal-event holdMs totals, to compute means. */
  holdMsSum: number;
  contendedByPrefix: Record<string, number>;
}

/**
 * Everything the store has counted since it began, from durable records (never trimmed, never
 * expiring), so every reader gets the same numbers and none resets them: what Prometheus counters
 * need. Read in one step of the store; a reader a moment later only ever sees them grow.
 */
export interface LifetimeTotals {
  counts: Record<CounterKind, number>;
  /** Counts per HOLD_HISTOGRAM_BOUNDS_MS bucket (last is +Inf) over terminal events, and their holdMs total. */
  holdHistogram: number[];
  holdMsSum: number;
  /**
   * Releases the store refused, by reason (the lease id did not hold the resource, or its lease
   * had lapsed), counted by the refused release itself.
   */
  releaseFailures: Record<LeaseRefusal, number>;
}

/** Which prefix groups groupTotals() names: the first `prefixDepth` `:` segments, at most `maxGroups` of them. */
export interface GroupTotalsQuery extends ReadSignal {
  /** 1..3; the histograms are kept 2 segments deep (SLACK_PREFIX_DEPTH), so 3 reads as 2. */
  prefixDepth: number;
  /** 1..200: the groups with the most samples over the store's lifetime; the rest are summed under `group: null`. */
  maxGroups: number;
}

/** One prefix group's lifetime histogram: counts per bucket and the sum of what was counted. */
export interface GroupHistogram {
  /** The prefix group, or null for every group past `maxGroups` together. */
  group: string | null;
  counts: number[];
  /** The total of the values counted (hold: ms); absent when the store keeps only the buckets (slack). */
  sum?: number;
}

/**
 * Lifetime histograms per prefix group, from durable records (like LifetimeTotals: never trimmed,
 * never expiring, the same for every reader).
 */
export interface GroupTotals {
  /** Hold duration: HOLD_HISTOGRAM_BOUNDS_MS buckets (last is +Inf) over terminal events; sum in ms. At most SLACK_PREFIX_DEPTH segments deep. */
  hold: GroupHistogram[];
  /**
   * Renewal slack: SLACK_BUCKET_COUNT buckets (twentieths of the TTL left), without a sum (each
   * renewal is recorded as its bucket only). Grouped at most SLACK_PREFIX_DEPTH segments deep.
   */
  slack: GroupHistogram[];
}

/** A store setting that weakens a guarantee without breaking one, reported when the store first meets it. */
export interface StoreWarning {
  store: string;
  /** no_persistence: a Redis server without an append-only file. */
  code: "no_persistence";
  message: string;
}

export interface StoreHealth {
  store: string;
  kind: StoreKind;
  ok: boolean;
  latencyMs?: number;
  /** Stores with projected read models (Redis): how far listing, history and charts lag the events, ms. */
  projectionLagMs?: number;
  error?: string;
}

/** How much raw event history a store keeps (charts outlive it: they read rollups). */
export interface EventRetention {
  /** Raw events are kept this many days; null: kept until removed by hand. */
  retentionDays: number | null;
  /** Raw events before this instant are gone (null: nothing has been dropped yet). */
  retainedFrom: Date | null;
}

/** An event filter a store will not serve (it would have to scan), and what to use instead. */
export interface UnservableFilter {
  /** The query field (as a console URL parameter) the problem is with. */
  param: string;
  /** A sentence naming the combinations that are served. */
  message: string;
}

export interface PrefixStatsQuery {
  prefix: string;
  from: Date;
  to: Date;
  /** Hour or day buckets (per-group counts are kept per hour). */
  bucketMs: 3_600_000 | 86_400_000;
  signal?: AbortSignal;
}

export interface PrefixStats {
  buckets: StatsBucket[];
  /**
   * The group rollups are complete from this instant on (null: for all the history the store
   * has): a store that kept events before it started counting per group does not have them there.
   */
  coveredFrom: Date | null;
}

/** A store's connections right now, for pool gauges. */
export interface ConnectionUsage {
  /** Connections busy with a query or with commands awaiting replies. */
  used: number;
  idle: number;
  /** Most connections the store may open. */
  max: number;
  /** Requests waiting for a connection (pg), or commands queued while disconnected (Redis). */
  pending: number;
}

/** What every part of a store carries: its configured name and its kind. */
export interface StoreIdentity {
  readonly name: string;
  readonly kind: StoreKind;
}

/** The lock itself: taking, keeping and giving back leases, and the store's upkeep. */
export interface LockStore extends StoreIdentity {
  acquire(input: AcquireInput): Promise<AcquireResult>;
  renew(input: RenewInput): Promise<RenewResult>;
  release(input: ReleaseInput): Promise<ReleaseResult>;
  forceRelease(input: ForceReleaseInput): Promise<ForceReleaseResult>;
  get(resource: string, options?: ReadSignal): Promise<Lease | null>;
  /** Records `expired` for leases whose TTL the store already enforced. Returns how many. */
  sweep(): Promise<{ expired: number }>;
  reportFencingRejection(input: FencingRejectionInput): Promise<LeaseEvent>;
  reportLost(input: LostInput): Promise<LeaseEvent>;
  health(): Promise<StoreHealth>;
  close(): Promise<void>;
  /** Connection use right now (null once closed); stores without a pool of their own omit it. */
  connectionUsage?(): ConnectionUsage | null;
}

/** What the store recorded: the current leases as a list, the event history and the past rebuilt from it. */
export interface LeaseHistory extends StoreIdentity {
  list(query?: ListQuery): Promise<LeasePage>;
  events(query?: EventQuery): Promise<Page<LeaseEvent>>;
  /**
   * Why this store would not serve `query` from an index (null when it would), decided without
   * reading anything. Callers that take filters from people refuse such a query instead of reading.
   */
  findUnservableEventFilter?(query: EventQuery): UnservableFilter | null;
  /** What was held at a past instant, rebuilt from the history (see HeldAtQuery). */
  heldAt(query: HeldAtQuery): Promise<HeldAtResult>;
  /** What raw event history the store keeps (stores without a retention boundary omit it). */
  eventRetention?(options?: ReadSignal): Promise<EventRetention>;
  /**
   * The `force_released` event that ended this lease, from the store's own record of the
   * force-release rather than its event history (which a store may trim before anyone reads it);
   * null when the lease was not force-released. Stores without such a record omit it: their
   * history is searched instead (events()).
   */
  forceReleasedEvent?(query: ForceReleasedQuery): Promise<LeaseEvent | null>;
}

/** Counts and measurements kept from the events (rollups and durable totals), for charts, metrics and advice. */
export interface LeaseAnalytics extends StoreIdentity {
  stats(query: StatsQuery): Promise<StatsBucket[]>;
  /**
   * Hour or day buckets of the events under a prefix, from the hourly per-group rollups (see
   * prefix-groups.ts): counts per kind, the hold histogram and contention per 3-segment name.
   * Renewals are not counted per group (`renewed` stays 0). Only for prefixes the groups answer
   * exactly (isPrefixServedByGroups); stores without such rollups omit it.
   */
  prefixStats?(query: PrefixStatsQuery): Promise<PrefixStats>;
  /** Number of leases currently stored (held or lapsed-unswept). */
  countActive(options?: ReadSignal): Promise<number>;
  lifetimeTotals(options?: ReadSignal): Promise<LifetimeTotals>;
  /** Lifetime hold-duration and renewal-slack histograms per prefix group (see GroupTotals). */
  groupTotals(query: GroupTotalsQuery): Promise<GroupTotals>;
  /** Renewal slack histograms per prefix group and TTL over [from, to) (hourly rollups). */
  renewalSlack(query: RenewalSlackQuery): Promise<RenewalSlackRow[]>;
  /** TTL advice from the store's measurements (advice only: nothing changes a TTL). */
  ttlAdvice(query?: TtlAdviceQuery): Promise<TtlAdviceReport>;
}

/** A whole store: the lock, its history and its analytics (what the console and the lock API read). */
export interface LeaseStore extends LockStore, LeaseHistory, LeaseAnalytics {}

/**
 * Hold-duration histogram bucket upper bounds (ms). Log-ish spacing so p50..p99
 * are estimated within one bucket from rollups alone. Last bucket (+Inf) is implicit.
 */
export const HOLD_HISTOGRAM_BOUNDS_MS = [
  10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000,
] as const;

/** A lease is "expiring" when less than this fraction of its TTL remains. */
export const EXPIRING_FRACTION = 0.25;
/**
 * "Overdue": a healthy holder renews at ttl/3, so a lease not renewed for more
 * than 2/3 of its ttl has missed at least one heartbeat — a likely zombie.
 */
export const OVERDUE_FRACTION = 2 / 3;

/**
 * Renewal slack: the share of its TTL a lease still had when a renewal arrived,
 * measured on the store's clock inside the renew itself. Recorded in twentieths:
 * histogram bucket i counts renewals with [i/20, (i+1)/20) of the TTL left.
 */
export const SLACK_BUCKET_COUNT = 20;
/** A renewal that arrives with less than this share of its TTL left is a "close call". */
export const CLOSE_CALL_FRACTION = 0.2;
/** Slack is recorded per prefix group: this many leading `:` segments of the resource. */
export const SLACK_PREFIX_DEPTH = 2;

export interface RenewalSlackQuery extends ReadSignal {
  /** Groups under this prefix (or, for a deeper prefix, the group that contains it). */
  prefix?: string;
  from: Date;
  to: Date;
}
/** Renewals of one prefix group measured against one TTL (the TTL the lease had before the renewal). */
export interface RenewalSlackRow {
  group: string;
  ttlMs: number;
  /** SLACK_BUCKET_COUNT counts. */
  histogram: number[];
}

export interface TtlAdviceQuery extends ReadSignal {
  prefix?: string;
  /** Default: an hour before `to`. At most 7 days before `to`. */
  from?: Date;
  /** Default: now. */
  to?: Date;
}

/** TTL advice for one prefix (group): the measurements, the suggestion and why. */
export interface TtlAdvice {
  prefix: string;
  /** The TTL most renewals were measured against (as used), or null without renewals. */
  ttlMs: number | null;
  renewals: number;
  slackHistogram: number[];
  /** Renewals that arrived with less than CLOSE_CALL_FRACTION of the TTL left. */
  closeCalls: number;
  p99HoldMs: number | null;
  /** How much later than ttl/3 the slowest 1 % of renewals arrived (0 when on time). */
  p99LatenessMs: number | null;
  /** Renewals refused (renew_failed): the lease had expired or was no longer theirs. */
  renewalsLost: number;
  released: number;
  expired: number;
  /** expired ÷ released, null when nothing was released. */
  expiredToReleased: number | null;
  suggestedTtlMs: number | null;
  suggestedRenewMs: number | null;
  change: "lengthen" | "keep" | "unknown";
  /** One sentence: why. */
  reason: string;
}

export interface TtlAdviceReport {
  store: string;
  prefix: string;
  from: Date;
  to: Date;
  /** Everything under `prefix` together. */
  overall: TtlAdvice;
  /** Per prefix group (SLACK_PREFIX_DEPTH segments), most renewals first. */
  groups: TtlAdvice[];
  /** true when the event scan stopped at its cap (counts and hold p99 are from the newest part). */
  isPartial: boolean;
}
