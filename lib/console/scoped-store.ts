/**
 * Server-only: a store as a scoped viewer sees it. Every read model reaches the
 * stores through lib/console/fan-out, which wraps each store in this view when
 * the viewer's role map entries name prefixes — so a read model cannot forget
 * the scope: whatever it asks, it only ever gets resources under the viewer's
 * prefixes, and asking for anything else looks exactly like asking for a
 * resource that does not exist.
 *
 * The per-store rollups (`stats()`, `lifetimeTotals()`) count every resource
 * together and cannot be cut by prefix, so a scoped view refuses them: a read
 * model has to rebuild its numbers from what is under the prefixes
 * (lib/console/prefix-overview) instead of showing unscoped totals.
 */
import { LeaseError } from "@/lib/lease/errors";
import type {
  EventQuery,
  EventRetention,
  ReadSignal,
  UnservableFilter,
  ForceReleaseResult,
  HeldAtQuery,
  HeldAtResult,
  Lease,
  LeasePage,
  LeaseStore,
  ListQuery,
  Page,
  LeaseEvent,
  RenewalSlackQuery,
  TtlAdviceQuery,
} from "@/lib/lease/types";
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
  return new ScopedLeaseStore(store, scope);
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

class ScopedLeaseStore implements LeaseStore {
  readonly [SCOPED] = true;
  readonly name: string;
  readonly kind: LeaseStore["kind"];

  constructor(
    private readonly inner: LeaseStore,
    private readonly scope: Extract<ViewerScope, { kind: "prefixes" }>,
  ) {
    this.name = inner.name;
    this.kind = inner.kind;
  }

  /** Refusals are rejections (not synchronous throws): a Promise.all over several reads still settles them all. */
  private refuse(what: string): never {
    throw new ScopeError(`${what} is not available to an account limited to ${describeScope(this.scope)}`);
  }

  // The console never takes leases on a viewer's behalf; only force-release changes state.
  async acquire(): Promise<never> {
    this.refuse("acquiring a lease");
  }
  async renew(): Promise<never> {
    this.refuse("renewing a lease");
  }
  async release(): Promise<never> {
    this.refuse("releasing a lease");
  }
  async sweep(): Promise<never> {
    this.refuse("sweeping");
  }
  async reportFencingRejection(): Promise<never> {
    this.refuse("reporting a fencing rejection");
  }
  async reportLost(): Promise<never> {
    this.refuse("reporting a lost lease");
  }

  forceRelease(input: Parameters<LeaseStore["forceRelease"]>[0]): Promise<ForceReleaseResult> {
    // Outside the scope answers as a lease that is not there: existence never leaks.
    if (!isResourceInScope(this.scope, input.resource)) return Promise.resolve({ released: false, reason: "not_found", current: null });
    return this.inner.forceRelease(input);
  }

  async get(resource: string, options?: Parameters<LeaseStore["get"]>[1]): Promise<Lease | null> {
    if (!isResourceInScope(this.scope, resource)) return null;
    return this.inner.get(resource, options);
  }

  async list(query: ListQuery = {}): Promise<LeasePage> {
    const prefixes = readPrefixes(this.scope, query.prefix)!;
    if (prefixes.length === 0) return { items: [], now: new Date() };
    let now = new Date();
    const page = await readUnion(prefixes, query.limit ?? 100, query.cursor, async (prefix, limit, cursor) => {
      const p = await this.inner.list({ ...query, prefix, limit, cursor });
      now = p.now;
      return p;
    });
    return { ...page, now };
  }

  async events(query: EventQuery = {}): Promise<Page<LeaseEvent>> {
    if (query.resource !== undefined && !isResourceInScope(this.scope, query.resource)) return { items: [] };
    if (query.resource !== undefined) return this.inner.events(query);
    const prefixes = readPrefixes(this.scope, query.prefix)!;
    if (prefixes.length === 0) return { items: [] };
    return readUnion(prefixes, query.limit ?? 100, query.cursor, (prefix, limit, cursor) => this.inner.events({ ...query, prefix, limit, cursor }));
  }

  /** The inner store's refusal, asked for each prefix the scoped read would send it. */
  findUnservableEventFilter(query: EventQuery): UnservableFilter | null {
    if (!this.inner.findUnservableEventFilter) return null;
    if (query.resource !== undefined) return this.inner.findUnservableEventFilter(query);
    for (const prefix of readPrefixes(this.scope, query.prefix) ?? []) {
      const problem = this.inner.findUnservableEventFilter({ ...query, prefix });
      if (problem) return problem;
    }
    return null;
  }

  /** What raw history the store keeps is the same for every tenant. */
  async eventRetention(options?: ReadSignal): Promise<EventRetention> {
    return this.inner.eventRetention ? this.inner.eventRetention(options) : { retentionDays: null, retainedFrom: null };
  }

  async heldAt(query: HeldAtQuery): Promise<HeldAtResult> {
    if (query.resource !== undefined) {
      return isResourceInScope(this.scope, query.resource) ? this.inner.heldAt(query) : this.heldNothingAt(query);
    }
    const prefixes = readPrefixes(this.scope, query.prefix)!;
    if (prefixes.length === 0) return this.heldNothingAt(query);
    const limit = query.limit ?? 100;
    const reads = await Promise.all(prefixes.map((prefix) => this.inner.heldAt({ ...query, prefix, limit })));
    const uncovered = reads.find((r) => !r.covered);
    if (uncovered) return uncovered;
    const covered = reads as Extract<HeldAtResult, { covered: true }>[];
    const items = covered.flatMap((r) => r.items);
    items.sort((a, b) => a.acquiredAt.getTime() - b.acquiredAt.getTime() || a.resource.localeCompare(b.resource));
    return {
      ...covered[0]!,
      items: items.slice(0, limit),
      hasMore: items.length > limit || covered.some((r) => r.hasMore),
    };
  }

  /**
   * Nothing in scope: still asks the store (for one row, dropped) so coverage and
   * clock are the store's own, as they are for a resource that never existed.
   */
  private async heldNothingAt(query: HeldAtQuery): Promise<HeldAtResult> {
    const r = await this.inner.heldAt({ at: query.at, limit: 1, signal: query.signal });
    return r.covered ? { ...r, items: [], hasMore: false } : r;
  }

  async stats(): Promise<never> {
    this.refuse("store-wide statistics");
  }

  async lifetimeTotals(): Promise<never> {
    this.refuse("store-wide totals");
  }

  /** Per-group totals are grouped across every tenant's resources, so a scoped view refuses them too. */
  async groupTotals(): Promise<never> {
    this.refuse("store-wide group totals");
  }

  /** Leases under the scope's prefixes, counted from the index (bounded; refused past the bound). */
  async countActive(options?: Parameters<LeaseStore["countActive"]>[0]): Promise<number> {
    let total = 0;
    for (const prefix of this.scope.prefixes) {
      const n = await countActiveUnder(this.inner, prefix, undefined, options?.signal);
      if (!n.ok) throw new ScopeError(`more than ${n.limit} ${n.what} under "${prefix}"`);
      total += n.data;
    }
    return total;
  }

  async renewalSlack(query: RenewalSlackQuery) {
    const prefixes = readPrefixes(this.scope, query.prefix)!;
    const rows = (await Promise.all(prefixes.map((prefix) => this.inner.renewalSlack({ ...query, prefix })))).flat();
    // A slack group wider than the scope (a shorter prefix) would count other tenants' renewals.
    return rows.filter((row) => isResourceInScope(this.scope, row.group));
  }

  async ttlAdvice(query: TtlAdviceQuery = {}) {
    const prefixes = readPrefixes(this.scope, query.prefix)!;
    if (prefixes.length !== 1) {
      throw new ScopeError(
        prefixes.length === 0
          ? `no resources under "${query.prefix ?? ""}" are visible to this account (${describeScope(this.scope)})`
          : `choose one prefix for advice: this account sees ${describeScope(this.scope)}`,
      );
    }
    const report = await this.inner.ttlAdvice({ ...query, prefix: prefixes[0] });
    return { ...report, groups: report.groups.filter((g) => isResourceInScope(this.scope, g.prefix)) };
  }

  health() {
    return this.inner.health();
  }

  /** The store belongs to the registry, not to this view. */
  async close(): Promise<void> {}
}
