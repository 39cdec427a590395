/**
 * Server-only: a store as a scoped viewer sees it. Every read model reaches the
 * stores through lib/console/shared/fan-out, which wraps each store in this view when
 * the viewer's role map entries name prefixes — so a read model cannot forget
 * the scope: whatever it asks, it only ever gets resources under the viewer's
 * prefixes, and asking for anything else looks exactly like asking for a
 * resource that does not exist.
 *
 * The per-store rollups (`stats()`, `lifetimeTotals()`) count every resource
 * together and cannot be cut by prefix, so a scoped view refuses them: a read
 * model has to rebuild its numbers from what is under the prefixes
 * (lib/console/shared/prefix-overview, or `prefixStats()` for a prefix inside the
 * scope) instead of showing unscoped totals.
 */
import {
  type EventQuery,
  type ForceReleasedQuery,
  type ForceReleaseResult,
  type HeldAtQuery,
  type HeldAtResult,
  type Lease,
  LeaseError,
  type LeaseEvent,
  type LeasePage,
  type LeaseStore,
  type ListQuery,
  type Page,
  type PrefixStats,
  type PrefixStatsQuery,
  type RenewalSlackQuery,
  type TtlAdviceQuery,
  type UnservableFilter,
} from "@leasewatch/lease";
import { layerStore, type StoreMethods } from "@leasewatch/lease/internal";
import { describeScope, isResourceInScope, readPrefixes, type ViewerScope } from "@/lib/auth/scope";
import { countActiveUnder } from "./prefix-overview";

/** A read the scoped view cannot answer without leaking other tenants' numbers. */
export class ScopeError extends LeaseError {
  constructor(message: string) {
    super(message, "out_of_scope");
    this.name = "ScopeError";
  }
}

const SCOPED = Symbol.for("leasewatch.console.scoped-store");

export function isScopedStore(store: LeaseStore): boolean {
  return (store as unknown as Record<symbol, unknown>)[SCOPED] === true;
}

/** The store itself for an unscoped viewer; otherwise a view limited to the scope's prefixes. */
export function scopeStore(store: LeaseStore, scope: ViewerScope): LeaseStore {
  if (scope.kind === "all") return store;
  return scopedView(store, scope);
}

/**
 * With several prefixes, a page reads them one after the other (each in the
 * store's own order), carrying which prefix it is on and that prefix's own store
 * cursor: paging never skips or repeats a row. The rows of one page are then
 * sorted together by the read model, as rows of several stores already are.
 */
interface UnionCursor {
  i: number;
  c?: string;
}

function encodeUnionCursor(cursor: UnionCursor): string {
  return Buffer.from(JSON.stringify(cursor), "utf8").toString("base64url");
}

function decodeUnionCursor(cursor: string | undefined, count: number): UnionCursor {
  if (cursor === undefined) return { i: 0 };
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (typeof parsed === "object" && parsed !== null) {
      const { i, c } = parsed as Record<string, unknown>;
      if (typeof i === "number" && Number.isInteger(i) && i >= 0 && i < count && (c === undefined || typeof c === "string")) {
        return c === undefined ? { i } : { i, c };
      }
    }
  } catch {
    // fall through to the refusal below
  }
  throw new LeaseError("cursor is not a page link this console made; start again from the first page", "invalid_cursor");
}

async function readUnion<T>(
  prefixes: readonly string[],
  limit: number,
  cursor: string | undefined,
  read: (prefix: string, limit: number, cursor: string | undefined) => Promise<Page<T>>,
): Promise<Page<T>> {
  if (prefixes.length === 1) return read(prefixes[0]!, limit, cursor);
  const items: T[] = [];
  let at = decodeUnionCursor(cursor, prefixes.length);
  for (;;) {
    const page = await read(prefixes[at.i]!, limit - items.length, at.c);
    items.push(...page.items);
    if (page.nextCursor !== undefined) at = { i: at.i, c: page.nextCursor };
    else if (at.i + 1 < prefixes.length) at = { i: at.i + 1 };
    else return { items };
    if (items.length >= limit) return { items, nextCursor: encodeUnionCursor(at) };
  }
}

/** Refusals are rejections (not synchronous throws): a Promise.all over several reads still settles them all. */
function refuser(scope: PrefixScope) {
  return (what: string) => async (): Promise<never> => {
    throw new ScopeError(`${what} is not available to an account limited to ${describeScope(scope)}`);
  };
}

type PrefixScope = Extract<ViewerScope, { kind: "prefixes" }>;

function scopedView(inner: LeaseStore, scope: PrefixScope): LeaseStore {
  const refuse = refuser(scope);

  /**
   * Nothing in scope: still asks the store (for one row, dropped) so coverage and
   * clock are the store's own, as they are for a resource that never existed.
   */
  const heldNothingAt = async (query: HeldAtQuery): Promise<HeldAtResult> => {
    const r = await inner.heldAt({ at: query.at, limit: 1, signal: query.signal });
    return r.covered ? { ...r, items: [], hasMore: false } : r;
  };

  // Every method is decided here (Required): a method added to the contract does not reach a
  // scoped viewer unscoped until this view says how it is scoped.
  const override: Required<StoreMethods> = {
    // The console never takes leases on a viewer's behalf; only force-release changes state.
    acquire: refuse("acquiring a lease"),
    renew: refuse("renewing a lease"),
    release: refuse("releasing a lease"),
    sweep: refuse("sweeping"),
    reportFencingRejection: refuse("reporting a fencing rejection"),
    reportLost: refuse("reporting a lost lease"),

    forceRelease(input): Promise<ForceReleaseResult> {
      // Outside the scope answers as a lease that is not there: existence never leaks.
      if (!isResourceInScope(scope, input.resource)) return Promise.resolve({ released: false, reason: "not_found", current: null });
      return inner.forceRelease(input);
    },

    async forceReleasedEvent(query: ForceReleasedQuery): Promise<LeaseEvent | null> {
      if (!isResourceInScope(scope, query.resource)) return null;
      return inner.forceReleasedEvent!(query);
    },

    async get(resource, options): Promise<Lease | null> {
      if (!isResourceInScope(scope, resource)) return null;
      return inner.get(resource, options);
    },

    async list(query: ListQuery = {}): Promise<LeasePage> {
      const prefixes = readPrefixes(scope, query.prefix)!;
      if (prefixes.length === 0) return { items: [], now: new Date() };
      let now = new Date();
      const page = await readUnion(prefixes, query.limit ?? 100, query.cursor, async (prefix, limit, cursor) => {
        const p = await inner.list({ ...query, prefix, limit, cursor });
        now = p.now;
        return p;
      });
      return { ...page, now };
    },

    async events(query: EventQuery = {}): Promise<Page<LeaseEvent>> {
      if (query.resource !== undefined && !isResourceInScope(scope, query.resource)) return { items: [] };
      if (query.resource !== undefined) return inner.events(query);
      const prefixes = readPrefixes(scope, query.prefix)!;
      if (prefixes.length === 0) return { items: [] };
      return readUnion(prefixes, query.limit ?? 100, query.cursor, (prefix, limit, cursor) => inner.events({ ...query, prefix, limit, cursor }));
    },

    /** The inner store's refusal, asked for each prefix the scoped read would send it. */
    findUnservableEventFilter(query: EventQuery): UnservableFilter | null {
      const find = inner.findUnservableEventFilter!.bind(inner);
      if (query.resource !== undefined) return find(query);
      for (const prefix of readPrefixes(scope, query.prefix) ?? []) {
        const problem = find({ ...query, prefix });
        if (problem) return problem;
      }
      return null;
    },

    async heldAt(query: HeldAtQuery): Promise<HeldAtResult> {
      if (query.resource !== undefined) {
        return isResourceInScope(scope, query.resource) ? inner.heldAt(query) : heldNothingAt(query);
      }
      const prefixes = readPrefixes(scope, query.prefix)!;
      if (prefixes.length === 0) return heldNothingAt(query);
      const limit = query.limit ?? 100;
      const reads = await Promise.all(prefixes.map((prefix) => inner.heldAt({ ...query, prefix, limit })));
      const uncovered = reads.find((r) => !r.covered);
      if (uncovered) return uncovered;
      const covered = reads as Extract<HeldAtResult, { covered: true }>[];
      const items = covered.flatMap((r) => r.items);
      items.sort((a, b) => a.acquiredAt.getTime() - b.acquiredAt.getTime() || a.resource.localeCompare(b.resource));
      const partial = covered.find((r) => r.partial)?.partial;
      return {
        ...covered[0]!,
        items: items.slice(0, limit),
        hasMore: items.length > limit || covered.some((r) => r.hasMore),
        ...(partial ? { partial } : {}),
      };
    },

    stats: refuse("store-wide statistics"),

    /** Group counts under a prefix inside the scope are that prefix's own: nothing of another tenant's. */
    async prefixStats(query: PrefixStatsQuery): Promise<PrefixStats> {
      if (!scope.prefixes.some((p) => query.prefix.startsWith(p))) throw new ScopeError(`"${query.prefix}" is outside ${describeScope(scope)}`);
      return inner.prefixStats!(query);
    },

    lifetimeTotals: refuse("store-wide totals"),
    /** Per-group totals are grouped across every tenant's resources, so a scoped view refuses them too. */
    groupTotals: refuse("store-wide group totals"),

    /** Leases under the scope's prefixes, counted from the index (bounded; refused past the bound). */
    async countActive(options): Promise<number> {
      let total = 0;
      for (const prefix of scope.prefixes) {
        const n = await countActiveUnder(inner, prefix, undefined, options?.signal);
        if (!n.ok) throw new ScopeError(`more than ${n.limit} ${n.what} under "${prefix}"`);
        total += n.data;
      }
      return total;
    },

    async renewalSlack(query: RenewalSlackQuery) {
      const prefixes = readPrefixes(scope, query.prefix)!;
      const rows = (await Promise.all(prefixes.map((prefix) => inner.renewalSlack({ ...query, prefix })))).flat();
      // A slack group wider than the scope (a shorter prefix) would count other tenants' renewals.
      return rows.filter((row) => isResourceInScope(scope, row.group));
    },

    async ttlAdvice(query: TtlAdviceQuery = {}) {
      const prefixes = readPrefixes(scope, query.prefix)!;
      if (prefixes.length !== 1) {
        throw new ScopeError(
          prefixes.length === 0
            ? `no resources under "${query.prefix ?? ""}" are visible to this account (${describeScope(scope)})`
            : `choose one prefix for advice: this account sees ${describeScope(scope)}`,
        );
      }
      const report = await inner.ttlAdvice({ ...query, prefix: prefixes[0] });
      return { ...report, groups: report.groups.filter((g) => isResourceInScope(scope, g.prefix)) };
    },

    /** What raw history the store keeps is the same for every tenant. */
    eventRetention: (options) => inner.eventRetention!(options),
    connectionUsage: () => inner.connectionUsage!(),
    health: () => inner.health(),
    /** The store belongs to the registry, not to this view. */
    close: async () => {},
  };
  const view = layerStore(inner, { override });
  Object.defineProperty(view, SCOPED, { value: true });
  return view;
}
