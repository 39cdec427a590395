/**
 * URL search parameters of the console pages and their `/api` twins, parsed once
 * with zod. Every filter lives in the URL so an alert can link to the answer; a bad
 * parameter becomes a `ParamProblem` the page renders (and routes answer 400 with),
 * never an exception and never a store call.
 */
import { z } from "zod";
import { LEASE_EVENT_KINDS, type LeaseEventKind, type LeaseSort, type LeaseState } from "@leasewatch/lease";
import { ZCursor, ZLeaseId, ZOwner, ZPrefix, ZResource, ZStoreName, ZTask } from "@leasewatch/lease/internal";
import { MAX_PREV_CURSORS, unescapeDotPart } from "./links";
import { AUDIT_ACTIONS, AUDIT_OUTCOMES, type AuditAction, type AuditOutcome, type ParamProblem, type WindowName } from "./views";

export type SearchParamsInput = URLSearchParams | Record<string, string | string[] | undefined>;

/** Windows of the pages that read events (leases, events, owner): their reads are bounded by 14 days. */
export const WINDOW_NAMES = ["15m", "1h", "6h", "24h", "7d", "custom"] as const satisfies readonly WindowName[];
/** The overview reads only rollups, which keep 30 days and more: it also offers 30 days. */
export const OVERVIEW_WINDOW_NAMES = ["15m", "1h", "6h", "24h", "7d", "30d", "custom"] as const satisfies readonly WindowName[];
export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
export const WINDOW_MS: Record<Exclude<WindowName, "custom">, number> = {
  "15m": 15 * MINUTE_MS,
  "1h": HOUR_MS,
  "6h": 6 * HOUR_MS,
  "24h": DAY_MS,
  "7d": 7 * DAY_MS,
  "30d": 30 * DAY_MS,
};
/** Minute buckets up to 6 hours (≤ 360 points, each still wide enough to point at); hour buckets beyond. */
export const MINUTE_BUCKETS_MAX_RANGE_MS = WINDOW_MS["6h"];
/**
 * Hour buckets up to 7 days (≤ 169 points); UTC-day buckets beyond, which the stores keep as day
 * rollups: two weeks of hours is 337 rows per store and window, and twice that with the previous window.
 */
export const HOUR_BUCKETS_MAX_RANGE_MS = 7 * DAY_MS;
/** A custom range on the event-reading pages: their reads are bounded by it. */
export const MAX_CUSTOM_RANGE_MS = 14 * DAY_MS;
/**
 * A custom range on the overview: a month. Postgres keeps its hour and day rollups for good;
 * Redis keeps day stats 62 days (lib/lease/redis/scripts.ts), so a month and the one before it.
 */
export const MAX_OVERVIEW_CUSTOM_RANGE_MS = 31 * DAY_MS;
export const DEFAULT_DEPTH = 2;
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/**
 * States a `/locks` filter accepts: current lease states, "stuck" (overdue or lapsed, the
 * leases whose holder stopped renewing), plus "expired" (history, from events).
 */
export const LOCK_STATE_FILTERS = ["held", "expiring", "overdue", "lapsed", "stuck", "expired"] as const;
export type LockStateFilter = (typeof LOCK_STATE_FILTERS)[number];
/** The store states `state=stuck` covers: the holder missed heartbeats (overdue), or the TTL ran out unswept (lapsed). */
export const STUCK_STATES = ["overdue", "lapsed"] as const satisfies readonly LeaseState[];
export const LEASE_SORTS = ["expires", "held_longest", "newest"] as const satisfies readonly LeaseSort[];

// ---------------------------------------------------------------- field schemas

const windowSchema = (names: readonly [WindowName, ...WindowName[]]) => z.enum(names, { error: `must be one of ${names.join(", ")}` });
const ZWindow = windowSchema(WINDOW_NAMES);
const ZOverviewWindow = windowSchema(OVERVIEW_WINDOW_NAMES);

/** ISO 8601 date-time; without a zone it is read as UTC (the console shows UTC everywhere). */
const ZDateTime = z
  .string()
  .max(40, { error: "must be an ISO 8601 date-time, e.g. 2026-04-01T10:00:00Z" })
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?$/, {
    error: "must be an ISO 8601 date-time, e.g. 2026-04-01T10:00:00Z",
  })
  .transform((s, ctx) => {
    const hasZone = /(Z|[+-]\d{2}:\d{2})$/.test(s);
    const date = new Date(hasZone ? s : `${s}Z`);
    if (Number.isNaN(date.getTime())) {
      ctx.addIssue({ code: "custom", message: "is not a real date" });
      return z.NEVER;
    }
    return date;
  });

const ZDepth = z
  .string()
  .regex(/^[1-3]$/, { error: "must be 1, 2 or 3 (how many ':' segments make a prefix)" })
  .transform(Number);

const ZPageSize = z
  .string()
  .regex(/^\d{1,4}$/, { error: `must be a whole number from 1 to ${MAX_PAGE_SIZE}` })
  .transform(Number)
  .refine((n) => n >= 1 && n <= MAX_PAGE_SIZE, { error: `must be a whole number from 1 to ${MAX_PAGE_SIZE}` });

const ZLockState = z.enum(LOCK_STATE_FILTERS, { error: `must be one of ${LOCK_STATE_FILTERS.join(", ")}` });
const ZSort = z.enum(LEASE_SORTS, { error: `must be one of ${LEASE_SORTS.join(", ")}` });
const ZKind = z.enum(LEASE_EVENT_KINDS, { error: `must be event kinds from ${LEASE_EVENT_KINDS.join(", ")}` });

const ZPrevCursors = z
  .string()
  .max(MAX_PREV_CURSORS * 2100)
  .transform((s) => s.split(",").filter((c) => c.length > 0))
  .pipe(z.array(ZCursor).max(MAX_PREV_CURSORS));

// ---------------------------------------------------------------- reading the raw params

type RawParams = Map<string, string[]>;

function readRaw(input: SearchParamsInput): RawParams {
  const raw: RawParams = new Map();
  const add = (key: string, value: string) => {
    const list = raw.get(key) ?? [];
    list.push(value);
    raw.set(key, list);
  };
  if (input instanceof URLSearchParams) {
    input.forEach((value, key) => add(key, value));
  } else {
    for (const [key, value] of Object.entries(input)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) add(key, v);
    }
  }
  return raw;
}

class ParamError extends Error {
  constructor(readonly problem: ParamProblem) {
    super(`${problem.param}: ${problem.message}`);
  }
}

function fail(param: string, message: string): never {
  throw new ParamError({ param, message: toProblemSentence(param, message) });
}

/**
 * A ParamProblem's message is a sentence a person can act on, naming the
 * parameter, since it is shown on its own ("Can't show the leases. <message>").
 * Our checks say what the value must be ("must be one of …", "was given more
 * than once …") and get "The <param> parameter" in front; the lease library's
 * schemas already start with their field ("prefix must not be empty") and only
 * get a capital letter; zod's own wording ("Too small: …") is quoted as a reason.
 */
export function toProblemSentence(param: string, message: string): string {
  const text = message.startsWith(`${param} `)
    ? message
    : /^[A-Z]/.test(message)
      ? `The ${param} parameter is not valid (${message})`
      : `The ${param} parameter ${message}`;
  const capitalised = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(capitalised) ? capitalised : `${capitalised}.`;
}

/** A single-valued parameter; empty means absent (forms submit empty fields). */
function readOne<S extends z.ZodType>(raw: RawParams, key: string, schema: S): z.output<S> | undefined {
  const values = (raw.get(key) ?? []).filter((v) => v !== "");
  if (values.length === 0) return undefined;
  if (values.length > 1) fail(key, "was given more than once; give it once");
  const parsed = schema.safeParse(values[0]);
  if (!parsed.success) fail(key, parsed.error.issues[0]?.message ?? "is invalid");
  return parsed.data;
}

/** Event kinds: `kind=expired&kind=released` or `kind=expired,released`. */
function readKinds(raw: RawParams): LeaseEventKind[] | undefined {
  const values = (raw.get("kind") ?? []).flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v !== "");
  if (values.length === 0) return undefined;
  const kinds: LeaseEventKind[] = [];
  for (const value of values) {
    const parsed = ZKind.safeParse(value);
    if (!parsed.success) fail("kind", `has "${value.slice(0, 40)}", which is not an event kind; use ${LEASE_EVENT_KINDS.join(", ")}`);
    if (!kinds.includes(parsed.data)) kinds.push(parsed.data);
  }
  return kinds;
}

// Lease-library schemas name their field ("store name must be …"); toProblemSentence keeps their wording.
const ZStoreParam = ZStoreName;

// ---------------------------------------------------------------- time windows

export interface TimeRange {
  window: WindowName;
  from: Date;
  to: Date;
  bucketMs: number;
  /** Set when the window ends at `at=` rather than now (a named window, or a custom one without `to`): the page says so. */
  endsAt?: Date;
  /**
   * The custom range as the URL gave it, when `from`/`to` were widened to whole UTC days
   * (the overview's day buckets); absent when the range is read as given.
   */
  requested?: { from: Date; to: Date };
}

/** The windows a page accepts and its longest custom range. */
interface RangeRules {
  window: z.ZodType<WindowName>;
  maxCustomMs: number;
  /** Whether a custom range read in day buckets is widened to whole UTC days (pages that read day rollups). */
  snapsToDays: boolean;
}
const EVENT_PAGE_RANGES: RangeRules = { window: ZWindow, maxCustomMs: MAX_CUSTOM_RANGE_MS, snapsToDays: false };
const OVERVIEW_RANGES: RangeRules = { window: ZOverviewWindow, maxCustomMs: MAX_OVERVIEW_CUSTOM_RANGE_MS, snapsToDays: true };

/**
 * A custom range read in day buckets, widened to whole UTC days: a day rollup cannot count
 * part of a day, so the range runs from the UTC midnight at or before `from` to the one at or
 * after `to` — the counts then cover exactly the range shown, never a silent extra. A last day
 * that is today counts today so far, as window=30d does (`to` exclusive, so now + 1 ms).
 */
export function snapToUtcDays(fromMs: number, toMs: number, nowMs: number): { from: Date; to: Date } {
  const from = Math.floor(fromMs / DAY_MS) * DAY_MS;
  let to = Math.ceil(toMs / DAY_MS) * DAY_MS;
  // Days after today hold nothing yet; a range wholly in the future keeps its first day.
  if (to > nowMs + 1) to = Math.max(nowMs + 1, from + DAY_MS);
  return { from: new Date(from), to: new Date(to) };
}

/**
 * The window a page reads. `at` stands in for now: a named window (`window=1h`, or the page's
 * default) is the one ending at `at` — `[at − 1h, at]`, as it is `[now − 1h, now]` without it —
 * and a custom range without `to` runs up to `at`. A custom range with `to` is absolute and
 * stays put (`at` then marks an instant in it). Day buckets count the UTC day holding `at`
 * up to `at`, and the whole days before it.
 */
function resolveRange(
  raw: RawParams,
  nowMs: number,
  defaultWindow: Exclude<WindowName, "custom"> | null,
  rules: RangeRules = EVENT_PAGE_RANGES,
  at?: Date,
): TimeRange | null {
  const window = readOne(raw, "window", rules.window);
  const from = readOne(raw, "from", ZDateTime);
  const to = readOne(raw, "to", ZDateTime);
  const endMs = at?.getTime() ?? nowMs;
  if (window === "custom" || (window === undefined && (from || to))) {
    if (!from) fail("from", "is needed for a custom window (ISO 8601, e.g. 2026-04-01T10:00:00Z)");
    const end = to ?? new Date(endMs);
    if (end.getTime() <= from.getTime()) fail("to", "must be later than from");
    const days = rules.maxCustomMs / DAY_MS;
    if (end.getTime() - from.getTime() > rules.maxCustomMs) fail("from", `must be at most ${days} days before to (a custom window spans at most ${days} days)`);
    const bucketMs = bucketFor(end.getTime() - from.getTime());
    const endsAt = !to && at ? { endsAt: at } : {};
    if (bucketMs !== DAY_MS || !rules.snapsToDays) return { window: "custom", from, to: end, bucketMs, ...endsAt };
    const snapped = snapToUtcDays(from.getTime(), end.getTime(), nowMs);
    // The previous-window comparison reads as many days again; past the longest range it would outrun what Redis keeps.
    if (snapped.to.getTime() - snapped.from.getTime() > rules.maxCustomMs) {
      fail("from", `must be at most ${days} days before to, counted in whole UTC days (longer than 7 days, a custom window covers the whole UTC days it touches: ${utcDay(snapped.from)} to ${utcDay(new Date(snapped.to.getTime() - 1))})`);
    }
    // "Up to now" (no `to`) already ends where the snapped range does.
    const isUpToNow = snapped.to.getTime() === nowMs + 1 && (end.getTime() === nowMs || end.getTime() === nowMs + 1);
    const isAligned = snapped.from.getTime() === from.getTime() && (snapped.to.getTime() === end.getTime() || isUpToNow);
    return { window: "custom", ...snapped, bucketMs, ...endsAt, ...(isAligned ? {} : { requested: { from, to: end } }) };
  }
  if (window !== undefined && (from || to)) fail(from ? "from" : "to", `only applies with window=custom (window is ${window})`);
  const name = window ?? defaultWindow;
  if (name === null) return null;
  const span = WINDOW_MS[name];
  const bucketMs = bucketFor(span);
  // Day buckets are whole UTC days: the window is today so far and the days before it, so no
  // bucket counts a day only in part (its first would otherwise start up to a day early).
  const fromMs = bucketMs === DAY_MS ? Math.floor(endMs / DAY_MS) * DAY_MS - span + DAY_MS : endMs - span;
  // Stores treat `to` as exclusive; a window "up to now" (or up to `at`) includes what happened in that very millisecond.
  return { window: name, from: new Date(fromMs), to: new Date(endMs + 1), bucketMs, ...(at ? { endsAt: at } : {}) };
}

function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function bucketFor(spanMs: number): number {
  return spanMs <= MINUTE_BUCKETS_MAX_RANGE_MS ? MINUTE_MS : spanMs <= HOUR_BUCKETS_MAX_RANGE_MS ? HOUR_MS : DAY_MS;
}

// ---------------------------------------------------------------- per page

export type ParseResult<T> = { ok: true; params: T } | { ok: false; problem: ParamProblem };

function parseWith<T>(input: SearchParamsInput, read: (raw: RawParams) => T): ParseResult<T> {
  try {
    return { ok: true, params: read(readRaw(input)) };
  } catch (err) {
    if (err instanceof ParamError) return { ok: false, problem: err.problem };
    throw err;
  }
}

export interface OverviewParams {
  store?: string;
  /** Narrows every number on the overview to resources under it (from rollups per prefix group, or from events). */
  prefix?: string;
  range: TimeRange;
  depth: number;
  /**
   * The moment the page reads as of, in place of now: a named window ends at it. With a custom
   * `from`/`to` it is an instant in the range, which the charts mark (the time scrubber).
   */
  at?: Date;
}

/** The longest window a prefix overview reads events for (longer ones read the rollups per prefix group). */
export const PREFIX_MAX_RANGE_MS = WINDOW_MS["24h"];

export function parseOverviewParams(input: SearchParamsInput, nowMs = Date.now()): ParseResult<OverviewParams> {
  return parseWith(input, (raw) => {
    const prefix = readOne(raw, "prefix", ZPrefix);
    const at = readOne(raw, "at", ZDateTime);
    // Any window with a prefix: the read model says per store what it could not count, and why.
    const range = resolveRange(raw, nowMs, "1h", OVERVIEW_RANGES, at)!;
    return { store: readOne(raw, "store", ZStoreParam), prefix, range, depth: readOne(raw, "depth", ZDepth) ?? DEFAULT_DEPTH, at };
  });
}

export interface LeasesParams {
  store?: string;
  prefix?: string;
  owner?: string;
  task?: string;
  state?: LockStateFilter;
  sort: LeaseSort;
  cursor?: string;
  prev: string[];
  limit: number;
  /** Only for state=expired: which window of history to list (ending at `at` when given). */
  range: TimeRange;
  /** The moment the page reads as of, in place of now: who held what then (rebuilt from history), or the expiries of the window ending then. */
  at?: Date;
}

export function parseLeasesParams(input: SearchParamsInput, nowMs = Date.now()): ParseResult<LeasesParams> {
  return parseWith(input, (raw) => {
    const at = readOne(raw, "at", ZDateTime);
    return {
      store: readOne(raw, "store", ZStoreParam),
      prefix: readOne(raw, "prefix", ZPrefix),
      owner: readOne(raw, "owner", ZOwner),
      task: readOne(raw, "task", ZTask),
      state: readOne(raw, "state", ZLockState),
      sort: readOne(raw, "sort", ZSort) ?? "expires",
      cursor: readOne(raw, "cursor", ZCursor),
      prev: readOne(raw, "prev", ZPrevCursors) ?? [],
      limit: readOne(raw, "limit", ZPageSize) ?? DEFAULT_PAGE_SIZE,
      range: resolveRange(raw, nowMs, "1h", EVENT_PAGE_RANGES, at)!,
      at,
    };
  });
}

/** `at=` alone (the lease page, whose other parameters are path segments). */
export function parseAtParam(input: SearchParamsInput): ParseResult<{ at?: Date }> {
  return parseWith(input, (raw) => ({ at: readOne(raw, "at", ZDateTime) }));
}

export interface EventsParams {
  store?: string;
  kinds?: LeaseEventKind[];
  prefix?: string;
  owner?: string;
  task?: string;
  /** Fencing token (`token=`): one grant's events and the fencing rejections of it. */
  token?: string;
  /** Lease id (`lease=`): one grant's events. */
  lease?: string;
  resource?: string;
  /** null: no time filter (the latest events). */
  range: TimeRange | null;
  /** The moment the page reads as of, in place of now: the window ends at it. */
  at?: Date;
  cursor?: string;
  prev: string[];
  limit: number;
}

const ZTokenParam = z.string().regex(/^[0-9]{1,30}$/, { error: "must be a fencing token: digits only, e.g. 1795666012345678" });

export function parseEventsParams(input: SearchParamsInput, nowMs = Date.now()): ParseResult<EventsParams> {
  return parseWith(input, (raw) => {
    const task = readOne(raw, "task", ZTask);
    const token = readOne(raw, "token", ZTokenParam);
    const lease = readOne(raw, "lease", ZLeaseId);
    const at = readOne(raw, "at", ZDateTime);
    return {
      store: readOne(raw, "store", ZStoreParam),
      kinds: readKinds(raw),
      prefix: readOne(raw, "prefix", ZPrefix),
      owner: readOne(raw, "owner", ZOwner),
      task,
      token,
      lease,
      resource: readOne(raw, "resource", ZResource),
      // Every event read is bounded by a window: the last 24 h unless the URL names one
      // (the page says so). An unbounded read would walk a store's whole history.
      range: resolveRange(raw, nowMs, "24h", EVENT_PAGE_RANGES, at),
      at,
      cursor: readOne(raw, "cursor", ZCursor),
      prev: readOne(raw, "prev", ZPrevCursors) ?? [],
      limit: readOne(raw, "limit", ZPageSize) ?? DEFAULT_PAGE_SIZE,
    };
  });
}

export interface LeaseDetailParams {
  store: string;
  resource: string;
}

/**
 * `/locks/[store]/[...resource]`: the resource is the catch-all segments joined by
 * "/" (resources may contain "/", ":" and "%"). Takes the segments still
 * percent-encoded, as pages receive them (the API route reads them from the raw
 * path for the same reason); `leaseHref` encodes, this decodes exactly once and
 * takes the "~" off an escaped dot part (unescapeDotPart).
 */
export function parseLeaseDetailParams(input: { store: string; resource: string[] }): ParseResult<LeaseDetailParams> {
  return parseWith(new URLSearchParams(), () => {
    const store = safeDecode(input.store, "store");
    const storeParsed = ZStoreParam.safeParse(store);
    if (!storeParsed.success) fail("store", storeParsed.error.issues[0]?.message ?? "is invalid");
    const resource = input.resource.map((s) => unescapeDotPart(safeDecode(s, "resource"))).join("/");
    const resourceParsed = ZResource.safeParse(resource);
    if (!resourceParsed.success) fail("resource", resourceParsed.error.issues[0]?.message ?? "is invalid");
    return { store: storeParsed.data, resource: resourceParsed.data };
  });
}

function safeDecode(segment: string, param: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    fail(param, "is not valid percent-encoding");
  }
}

export interface AuditParams {
  actor?: string;
  prefix?: string;
  /** One resource exactly (the lease page's history links here). */
  resource?: string;
  store?: string;
  outcome?: AuditOutcome;
  /** What the entries are about: force_release, token_create or token_revoke. */
  action?: AuditAction;
  /** An entry to mark in the list (the link a force-release outcome shows). */
  entry?: string;
  range: TimeRange | null;
  cursor?: string;
  prev: string[];
  limit: number;
}

const ZAuditOutcome = z.enum(AUDIT_OUTCOMES, { error: `must be one of ${AUDIT_OUTCOMES.join(", ")}` });
const ZAuditAction = z.enum(AUDIT_ACTIONS, { error: `must be one of ${AUDIT_ACTIONS.join(", ")}` });
const ZActor = z.string().min(1).max(320, { error: "must be at most 320 characters" });
const ZEntryId = z.string().regex(/^\d{1,20}$/, { error: "must be an audit entry id (a number)" });

export function parseAuditParams(input: SearchParamsInput, nowMs = Date.now()): ParseResult<AuditParams> {
  return parseWith(input, (raw) => ({
    actor: readOne(raw, "actor", ZActor),
    prefix: readOne(raw, "prefix", ZPrefix),
    resource: readOne(raw, "resource", ZResource),
    store: readOne(raw, "store", ZStoreParam),
    outcome: readOne(raw, "outcome", ZAuditOutcome),
    action: readOne(raw, "action", ZAuditAction),
    entry: readOne(raw, "entry", ZEntryId),
    range: resolveRange(raw, nowMs, null),
    cursor: readOne(raw, "cursor", ZCursor),
    prev: readOne(raw, "prev", ZPrevCursors) ?? [],
    limit: readOne(raw, "limit", ZPageSize) ?? DEFAULT_PAGE_SIZE,
  }));
}

export interface OwnerParams {
  owner: string;
  store?: string;
  range: TimeRange;
}

/**
 * `/owners/[owner]`: the owner is one path segment, still percent-encoded as the
 * router hands it over (ownerHref encodes it). Its events are read over a window,
 * 1 h (an alert's window) unless the URL names one: on Redis an owner filter reads
 * the streams, and for an owner that stopped it reads all of the window.
 */
export function parseOwnerParams(segment: string, input: SearchParamsInput, nowMs = Date.now()): ParseResult<OwnerParams> {
  return parseWith(input, (raw) => {
    const owner = ZOwner.safeParse(safeDecode(segment, "owner"));
    if (!owner.success) fail("owner", owner.error.issues[0]?.message ?? "is invalid");
    return { owner: owner.data, store: readOne(raw, "store", ZStoreParam), range: resolveRange(raw, nowMs, "1h")! };
  });
}
