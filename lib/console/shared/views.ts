/**
 * The shapes the console's pages, API routes and client components share.
 *
 * Everything here is plain JSON (times are ISO strings, durations are ms) so the
 * server's first paint and the polled `/api/*` responses are the same objects:
 * TanStack Query can take one as `initialData` and replace it with the other.
 * Store rows and Redis hashes never get this far; the read models reshape them.
 */
import type { LeaseEventKind, LeaseState, PartialRead, StoreKind } from "@leasewatch/lease";
import type { ObservedEventsSection, ObservedOverview } from "@/lib/console/shared/observed-history";

/**
 * Why a store's part is missing: `unreachable` (the connection failed: the store is down),
 * `refused` (the store answered, but the read would pass its bound, so nothing was counted) or
 * `failed` (any other error or a timeout). Only `unreachable` is shown as "down".
 */
export type StoreFailureCause = "unreachable" | "refused" | "failed";

/** One store's part of a fan-out read: its data, or why it could not be read. */
export type StoreOutcome<T> =
  | { store: string; kind: StoreKind; ok: true; data: T }
  | { store: string; kind: StoreKind; ok: false; error: string; cause?: StoreFailureCause };

export type StoreFailure = { store: string; kind: StoreKind; error: string };

/**
 * A read that failed on the request itself (bad URL parameter, unknown store).
 * `message` is a whole sentence naming the parameter, shown as it is:
 * `No store is called "x". Known stores: pg-main, redis-main.`
 */
export type ParamProblem = {
  param: string;
  message: string;
  /** A thing the viewer may not see, answered as missing (404) rather than as a bad parameter (400). */
  isNotFound?: true;
};

export type ReadResult<T> = { ok: true; view: T } | { ok: false; problem: ParamProblem };

/**
 * One store's part of a page. `partial`: the store stopped early (its read budget, or an index
 * that does not reach back through the window): its rows are right but may not be all.
 */
export interface PageSummary {
  count: number;
  hasMore: boolean;
  partial?: PartialRead;
}

// ---------------------------------------------------------------- leases

export interface LeaseView {
  store: string;
  storeKind: StoreKind;
  resource: string;
  leaseId: string;
  owner: string;
  task: string;
  fencingToken: string;
  acquiredAt: string;
  renewedAt: string;
  expiresAt: string;
  ttlMs: number;
  renewals: number;
  /** The rest are measured on the store's clock at read time, so the browser never compares clocks. */
  state: LeaseState;
  heldForMs: number;
  sinceRenewalMs: number;
  expiresInMs: number;
  /** How long past its renewal being due (renewed + 2/3 of the TTL) it is; ≤ 0 while the holder keeps up. */
  overdueByMs: number;
}

/** A lease that ended by expiry (the `/locks?state=expired` drill-down reads these from events). */
export interface EndedLeaseView {
  store: string;
  eventId: string;
  resource: string;
  leaseId: string | null;
  owner: string | null;
  task: string | null;
  fencingToken: string | null;
  endedAt: string;
  holdMs: number | null;
}

export interface LeasesView {
  mode: "current" | "expired";
  /** Every configured store, for the store filter. */
  storeNames: string[];
  /** Server time the page was read; countdowns tick from here. */
  readAt: string;
  items: LeaseView[];
  /** Each store's clock when it was read, for countdowns that stay on the store's clock. */
  storeClocks: Record<string, string>;
  expired: EndedLeaseView[];
  stores: StoreOutcome<PageSummary>[];
  nextCursor: string | null;
  /** Window the expired listing covers (mode "expired"). */
  from: string | null;
  to: string | null;
  /** The `at=` the window ends at instead of now, or null (see TimeRange.endsAt). */
  endsAt: string | null;
}

// ---------------------------------------------------------------- events

export interface EventView {
  id: string;
  store: string;
  at: string;
  kind: LeaseEventKind;
  resource: string;
  leaseId: string | null;
  owner: string | null;
  task: string | null;
  fencingToken: string | null;
  holdMs: number | null;
  actor: string | null;
  reason: string | null;
  /** Short human summary of `detail` (holder of a contended acquire, seen token of a fencing rejection…). */
  note: string | null;
  /** Every `detail` field in words, for the expanded row (times in full UTC). */
  details: { label: string; value: string }[];
}

export interface EventsView {
  readAt: string;
  storeNames: string[];
  items: EventView[];
  stores: StoreOutcome<PageSummary>[];
  nextCursor: string | null;
  from: string | null;
  to: string | null;
  /** The `at=` the window ends at instead of now, or null (see TimeRange.endsAt). */
  endsAt: string | null;
  /** Stores that keep raw events for a limited time, and whether this window reaches past what they keep. */
  retention: EventRetentionNote[];
  /** The observer's recorded changes of observed locks matching the filters; null: no observed store configured. */
  observed: ObservedEventsSection | null;
}

export interface EventRetentionNote {
  store: string;
  /** Days of raw events the store keeps; null: no limit set (but older days were dropped). */
  retentionDays: number | null;
  /** Raw events before this time are no longer kept (null: none dropped yet). */
  retainedFrom: string | null;
  /** The window (or, without one, the listing) starts before retainedFrom: older events are missing, not absent. */
  isWindowCut: boolean;
}

// ---------------------------------------------------------------- one lease

export type HoldEnding = "released" | "expired" | "force_released" | "held" | "unknown";

export interface HoldBar {
  leaseId: string;
  owner: string | null;
  task: string | null;
  fencingToken: string | null;
  start: string;
  /** null while still held. */
  end: string | null;
  ending: HoldEnding;
  holdMs: number | null;
}

export interface WaiterView {
  owner: string;
  task: string | null;
  attempts: number;
  lastAt: string;
}

export interface TokenView {
  fencingToken: string;
  leaseId: string | null;
  owner: string | null;
  at: string;
}

export interface LeaseDetailView {
  store: string;
  storeKind: StoreKind;
  resource: string;
  readAt: string;
  /** Store clock at read time. */
  storeNow: string;
  lease: LeaseView | null;
  timeline: HoldBar[];
  /** Time span the timeline covers (earliest start → store now). */
  timelineFrom: string | null;
  events: EventView[];
  hasMoreEvents: boolean;
  waiting: WaiterView[];
  tokens: TokenView[];
  /** Whether this store has any event of the resource (false with no lease: never seen here, or trimmed away). */
  hasHistory: boolean;
  /** Other configured stores where the same resource name is held now or has history. */
  elsewhere: ResourceElsewhere[];
}

/** The same resource name in another store: a different lease, with tokens not comparable to this store's. */
export interface ResourceElsewhere {
  store: string;
  kind: StoreKind;
  isHeld: boolean;
}

// ---------------------------------------------------------------- overview

export type WindowName = "15m" | "1h" | "6h" | "24h" | "7d" | "30d" | "custom";

export interface OverviewTiles {
  activeLeases: number;
  acquired: number;
  acquisitionsPerMinute: number;
  contended: number;
  /** failed / (failed + successful); null with no acquire attempts. */
  contentionRate: number | null;
  released: number;
  expired: number;
  forceReleased: number;
  /** expired / released; null when nothing was released. */
  expiredToReleased: number | null;
  renewFailed: number;
  lost: number;
  fencingRejected: number;
  renewed: number;
}

/** One chart point: a minute or an hour. Stacked contention keys are `c0`…`c4` and `other`. */
export interface OverviewPoint {
  t: number;
  acquired: number;
  contended: number;
  contentionRate: number | null;
  released: number;
  expired: number;
  forceReleased: number;
  expiredToReleased: number | null;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  active: number;
  stack: Record<string, number>;
}

export interface HistogramBar {
  label: string;
  /** Upper bound in ms; null for the +Inf bucket. */
  le: number | null;
  count: number;
}

/** How a count moved: the same count over the window just before, and its shape within this one. */
export interface ContentionTrend {
  /** Failed acquires in the previous window of the same length (same bucket count). */
  previous: number;
  /** Failed acquires over this window in at most SPARK_POINTS equal slices, oldest first. */
  spark: number[];
}

export interface PrefixCount {
  prefix: string;
  contended: number;
  share: number;
  trend: ContentionTrend;
}

/**
 * A row of "most contended resources": contention per name cut at the first
 * `resourceDepth` segments (from rollups). Usually that is a whole resource;
 * when it is only the start of longer names, `isResource` is false and the row
 * links to the leases under it instead of a lease page.
 */
export interface ResourceCount {
  store: string;
  resource: string;
  contended: number;
  isResource: boolean;
  trend: ContentionTrend;
}

export interface StoreOverview {
  tiles: OverviewTiles;
}

export interface OverviewView {
  readAt: string;
  window: WindowName;
  from: string;
  to: string;
  /** The `at=` the window ends at instead of now, or null for a window up to now (or a fixed custom range). */
  endsAt: string | null;
  bucketMs: number;
  /**
   * A custom range as asked, when the view counts the whole UTC days around it instead
   * (`from`/`to` are then those days): day buckets cannot count part of a day.
   */
  requested: { from: string; to: string } | null;
  depth: number;
  /** Resources under this prefix only (`prefix=`), or every resource. */
  prefix: string | null;
  /** The viewer's access when limited to prefixes ("tenant_1:*"): every number covers only those; null for everything. */
  scope: string | null;
  /** Which stores the charts and totals include (all configured, or the one in `store=`). */
  selectedStore: string | null;
  storeNames: string[];
  stores: StoreOutcome<StoreOverview>[];
  total: OverviewTiles;
  points: OverviewPoint[];
  /** Names behind the stacked keys: `[{ key: "c0", prefix: "tenant_1:billing" }, …, { key: "other", … }]`. */
  stackKeys: { key: string; prefix: string }[];
  histogram: HistogramBar[];
  topPrefixes: PrefixCount[];
  topResources: ResourceCount[];
  /** How many leading segments the resource table's names keep (longer names are grouped under them). */
  resourceDepth: number;
  /**
   * Where the numbers under a prefix (or a scope) come from: the stores' events (windows up to
   * 24 hours), their hourly rollups per prefix group (longer windows), or null without a prefix.
   */
  prefixSource: "events" | "rollups" | null;
  /** Stores whose rollups per prefix group begin inside the window: their counts start then. */
  coverage: { store: string; from: string }[];
  /** Locks the library does not own, per observed store (at `endsAt` in a past view); null: none configured. */
  observed: ObservedOverview | null;
}

// ---------------------------------------------------------------- audit

// The audit vocabulary lives with the audit log; pages and filters read it from here too.
export { AUDIT_ACTIONS, AUDIT_OUTCOMES, FORCE_RELEASE_OUTCOMES, type AuditAction, type AuditOutcome } from "@/lib/audit/vocabulary";

export interface AuditEntryView {
  id: string;
  at: string;
  requestId: string | null;
  actorId: string;
  actorEmail: string | null;
  actorRoles: string[];
  action: string;
  store: string | null;
  resource: string | null;
  leaseId: string | null;
  owner: string | null;
  task: string | null;
  fencingToken: string | null;
  reason: string | null;
  outcome: string;
  /** Who held the lease instead, when the outcome is lease_changed. */
  newHolder: { leaseId: string | null; owner: string | null; task: string | null; fencingToken: string | null } | null;
  /** Why a refusal or failure happened, in words. */
  detail: string | null;
  ip: string | null;
  userAgent: string | null;
}

export interface AuditView {
  readAt: string;
  items: AuditEntryView[];
  nextCursor: string | null;
}
