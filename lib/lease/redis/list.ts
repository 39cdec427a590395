import { LeaseError } from "../errors";
import { leaseStateAt, type Lease, type LeasePage, type LeaseSort, type ListQuery } from "../types";
import { compareBytes, decodeCursor, encodeCursor, toLease, type RawLease } from "./codec";
import { execPipeline, parseTimeReply, type RedisContext } from "./connection";
import { buildLiveIndexKey, LIVE_INDEX_DONE, type BucketKeys } from "./keys";
import { advanceZsetPosition, nextZsetBatch, takeMerged, type MergeSource, type ZsetPosition } from "./merge";
import type { ReadBudget } from "./read-budget";

export const DEFAULT_LIST_LIMIT = 100;

interface Candidate {
  score: number;
  resource: string;
}

interface ListSource extends MergeSource<Candidate> {
  keys: BucketKeys;
  /** The zset this source reads in sort order: the bucket's `idx` / `acq`, or an owner's or task's live zset. */
  zset: string;
  /** How far this source has been read (see ZsetPosition); none before the first batch. */
  position?: ZsetPosition;
}

interface SortPlan {
  /** Which per-bucket zset orders this sort. */
  zset: "idx" | "acq";
  isDescending: boolean;
}

const SORT_PLANS: Record<LeaseSort, SortPlan> = {
  expires: { zset: "idx", isDescending: false },
  held_longest: { zset: "acq", isDescending: false },
  newest: { zset: "acq", isDescending: true },
};

interface ListCursor {
  sort: LeaseSort;
  score: number;
  resource: string;
}

function readCursor(cursor: string | undefined, sort: LeaseSort): ListCursor | null {
  if (!cursor) return null;
  const raw = decodeCursor(cursor, "list");
  if (raw.s !== sort || typeof raw.v !== "number" || typeof raw.r !== "string") {
    throw new LeaseError("list: cursor belongs to a different sort or is not one this store issued");
  }
  return { sort, score: raw.v, resource: raw.r };
}

/** The listing-order score (acquiredAt ms as projected, for "held_longest") a page's next cursor resumes after. */
export function listCursorScore(cursor: string, sort: LeaseSort): number {
  return readCursor(cursor, sort)!.score;
}

/** Sort order: score, then resource byte-wise (Redis' own tie order), reversed for descending sorts. */
function makeCompare(plan: SortPlan) {
  const sign = plan.isDescending ? -1 : 1;
  return (a: Candidate, b: Candidate) => sign * (a.score - b.score || compareBytes(a.resource, b.resource));
}

/**
 * Lists leases across every bucket: candidates come from the per-bucket zsets
 * (or, for a narrow prefix, from lex ranges of the names zset; for an owner or task, from that
 * owner's or task's live zsets, see readLiveIndex), merged in sort order,
 * then the lease hashes are read in one pipeline per batch and filtered. States
 * are computed at the store time read with the first batch.
 *
 * Bounded: index entries and lease hashes read count against `budget` (whose signal is checked
 * before each round trip); once it is spent the page holds what was found so far, exact and in
 * order, and says it is `partial`.
 */
export async function listLeases(
  ctx: RedisContext,
  bucketKeys: readonly BucketKeys[],
  query: ListQuery,
  buildResourceLeaseKey: (resource: string) => string,
  budget: ReadBudget,
): Promise<LeasePage> {
  const sort = query.sort ?? "expires";
  const plan = SORT_PLANS[sort];
  const limit = query.limit ?? DEFAULT_LIST_LIMIT;
  const after = readCursor(query.cursor, sort);
  const compare = makeCompare(plan);
  const isAfterCursor = (c: Candidate) => !after || compare(c, { score: after.score, resource: after.resource }) > 0;

  let sources: ListSource[] = bucketKeys.map((keys) => ({ keys, zset: keys[plan.zset], buffer: [], isExhausted: false }));
  const batchSize = Math.min(Math.max(limit + 1, 50), 1000);

  const prefix = query.prefix;
  let nowMs: number;
  let isPrefixScan = false;
  // The owner / task index is not built yet: the walk below serves the filter, and if it runs out
  // of budget the page says why.
  let isIndexBuilding = false;
  budget.checkpoint();
  if (prefix === undefined && (query.owner !== undefined || query.task !== undefined)) {
    const live = await readLiveIndex(ctx, bucketKeys, query, budget);
    nowMs = live.nowMs;
    if (!live.isBuilt) {
      isIndexBuilding = true;
    } else if (sort !== "expires") {
      // Each live zset is scored by acquiredAt like `acq`: the same merge, cursor and checks below.
      sources = live.zsets.map(({ keys, zset, size }) => ({ keys, zset, buffer: [], isExhausted: size === 0 }));
    } else {
      // sort=expires has no owner / task index (expiry changes on every renew). Cost model, as for
      // prefixes: gathering reads every match (member and hash); walking the expiry order reads
      // about limit / (share of matches) entries. A rare owner is gathered, a common one walked.
      const gatherCost = 2 * live.total;
      const walkCost = live.total === 0 ? Infinity : ((limit + 1) * live.liveTotal) / live.total;
      if (gatherCost <= walkCost && gatherCost <= budget.remaining) {
        budget.checkpoint();
        return listByExpiry(ctx, live, query, limit, after, compare, new Date(nowMs), buildResourceLeaseKey, budget);
      }
      // Walked below, filtering: if this owner's leases sit late in expiry order the budget may run
      // out first, and the page says it is partial (sort=held_longest / newest are indexed).
    }
  } else if (prefix === undefined) {
    const [timeReply] = await execPipeline(ctx, "list", (p) => p.time());
    nowMs = parseTimeReply(timeReply);
  } else {
    const range = prefixLexRange(prefix);
    const replies = await execPipeline(ctx, "list", (p) => {
      p.time();
      for (const source of sources) p.zlexcount(source.keys.names, range.min, range.max);
      for (const source of sources) p.zcard(source.keys.names);
    });
    nowMs = parseTimeReply(replies[0]);
    const matching = sum(replies.slice(1, 1 + sources.length));
    const total = sum(replies.slice(1 + sources.length));
    // Cost model: gathering reads every match; scanning the sort order reads about
    // limit / (share of matches) entries. A narrow prefix is gathered, a broad one scanned.
    const scanCost = matching === 0 ? Infinity : ((limit + 1) * total) / matching;
    budget.spend(2 * sources.length);
    if (matching <= scanCost) {
      budget.checkpoint();
      budget.spend(matching);
      await fillFromPrefix(ctx, sources, plan, range, isAfterCursor, compare);
    } else {
      isPrefixScan = true;
    }
  }
  const isCandidate = (c: Candidate) => isAfterCursor(c) && (!isPrefixScan || c.resource.startsWith(prefix!));

  const refill = async (needy: readonly ListSource[]) => {
    budget.checkpoint();
    const start = after ? after.score : plan.isDescending ? "+inf" : "-inf";
    const batches = needy.map((source) => nextZsetBatch(source.position, start, batchSize));
    const replies = await execPipeline(ctx, "list", (p) => {
      needy.forEach((source, i) => {
        const { from, count } = batches[i]!;
        if (plan.isDescending) p.zrevrangebyscore(source.zset, from, "-inf", "WITHSCORES", "LIMIT", 0, count);
        else p.zrangebyscore(source.zset, from, "+inf", "WITHSCORES", "LIMIT", 0, count);
      });
    });
    needy.forEach((source, i) => {
      const read = advanceZsetPosition(source.position, replies[i], batches[i]!.count, plan.isDescending);
      source.position = read.position;
      budget.spend(Math.max(1, read.read));
      if (read.isExhausted) source.isExhausted = true;
      for (const entry of read.entries) {
        const candidate = { resource: entry.member, score: entry.score };
        // Ties on the cursor's score that sort at or before it were on earlier pages.
        if (isCandidate(candidate)) source.buffer.push(candidate);
      }
    });
  };

  const items: Lease[] = [];
  let lastTaken: Candidate | undefined;
  const now = new Date(nowMs);
  const want = limit + 1;
  // Filters can drop most candidates: each round reads twice as many as the last (bounded).
  let takeCount = want;
  let isPartial = false;
  while (items.length < want) {
    if (budget.isSpent) {
      isPartial = true;
      break;
    }
    const batch = await takeMerged(sources, refill, compare, takeCount);
    takeCount = Math.min(takeCount * 2, 2_000);
    if (batch.length === 0) break;
    budget.checkpoint();
    budget.spend(batch.length);
    const hashes = await execPipeline(ctx, "list", (p) => {
      for (const c of batch) p.hgetall(buildResourceLeaseKey(c.resource));
    });
    for (let i = 0; i < batch.length && items.length < want; i++) {
      const candidate = batch[i]!;
      const lease = toLease(ctx.storeName, candidate.resource, (hashes[i] ?? {}) as RawLease);
      // A lease ended between the index read and the hash read: it is simply gone.
      if (!lease || !matchesFilters(lease, query, now)) continue;
      items.push(lease);
      if (items.length <= limit) lastTaken = candidate;
    }
  }

  const hasMore = items.length > limit;
  const page: LeasePage = { items: items.slice(0, limit), now };
  if (isPartial) page.partial = { reason: isIndexBuilding ? "index_building" : "read_budget", examined: budget.examined };
  else if (hasMore && lastTaken) page.nextCursor = encodeCursor({ s: sort, v: lastTaken.score, r: lastTaken.resource });
  return page;
}

interface LiveIndex {
  nowMs: number;
  /** Every bucket's live owner / task zsets are built (projector.ts); else the rest is empty. */
  isBuilt: boolean;
  /** Per bucket, the zset read: the owner's or the task's, whichever is smaller in all (both filters given). */
  zsets: { keys: BucketKeys; zset: string; size: number }[];
  total: number;
  /** Entries of the expiry index (`idx`) in all buckets: every live or lapsed, unswept lease. */
  liveTotal: number;
}

/**
 * The store clock, whether the owner / task zsets are built, and their sizes: one round trip.
 * The zsets are a read model: a lease acquired within the projector's lag may be missing from
 * them (list() catches the projection up first), and one that ended may still be there, which
 * the hash check of every candidate (owner, task, still live) drops.
 */
async function readLiveIndex(ctx: RedisContext, bucketKeys: readonly BucketKeys[], query: ListQuery, budget: ReadBudget): Promise<LiveIndex> {
  const fields = (["owner", "task"] as const).filter((f) => query[f] !== undefined);
  const replies = await execPipeline(ctx, "list", (p) => {
    p.time();
    for (const keys of bucketKeys) {
      p.hget(keys.proj, "live");
      p.zcard(keys.idx);
      for (const field of fields) p.zcard(buildLiveIndexKey(keys, field, query[field]!));
    }
  });
  const stride = 2 + fields.length;
  budget.spend(bucketKeys.length * stride);
  const nowMs = parseTimeReply(replies[0]);
  const isBuilt = bucketKeys.every((_, b) => replies[1 + b * stride] === LIVE_INDEX_DONE);
  if (!isBuilt) return { nowMs, isBuilt, zsets: [], total: 0, liveTotal: 0 };
  const liveTotal = bucketKeys.reduce((n, _, b) => n + Number(replies[2 + b * stride]), 0);
  const sizes = fields.map((_, f) => bucketKeys.map((_, b) => Number(replies[3 + b * stride + f])));
  const totals = sizes.map((perBucket) => perBucket.reduce((a, b) => a + b, 0));
  const f = totals.length > 1 && totals[1]! < totals[0]! ? 1 : 0;
  const field = fields[f]!;
  const zsets = bucketKeys.map((keys, b) => ({ keys, zset: buildLiveIndexKey(keys, field, query[field]!), size: sizes[f]![b]! }));
  return { nowMs, isBuilt, zsets, total: totals[f]!, liveTotal };
}

/**
 * sort=expires with an owner or task whose live leases fit the budget: every one of them is
 * read (members, then hashes, in pipelines of at most HASH_BATCH) and sorted by expiry here.
 * The page and cursor are those of the "expires" walk (expiresAt ms, then resource).
 */
const HASH_BATCH = 2_000;

async function listByExpiry(
  ctx: RedisContext,
  live: LiveIndex,
  query: ListQuery,
  limit: number,
  after: ListCursor | null,
  compare: (a: Candidate, b: Candidate) => number,
  now: Date,
  buildResourceLeaseKey: (resource: string) => string,
  budget: ReadBudget,
): Promise<LeasePage> {
  const withMembers = live.zsets.filter((z) => z.size > 0);
  const members =
    withMembers.length === 0
      ? []
      : ((await execPipeline(ctx, "list", (p) => {
          for (const z of withMembers) p.zrange(z.zset, "0", "-1");
        })) as string[][]).flat();
  budget.spend(members.length);
  const found: { candidate: Candidate; lease: Lease }[] = [];
  for (let i = 0; i < members.length; i += HASH_BATCH) {
    const batch = members.slice(i, i + HASH_BATCH);
    budget.checkpoint();
    const hashes = await execPipeline(ctx, "list", (p) => {
      for (const resource of batch) p.hgetall(buildResourceLeaseKey(resource));
    });
    budget.spend(batch.length);
    batch.forEach((resource, j) => {
      const lease = toLease(ctx.storeName, resource, (hashes[j] ?? {}) as RawLease);
      if (!lease || !matchesFilters(lease, query, now)) return;
      const candidate = { score: lease.expiresAt.getTime(), resource };
      if (!after || compare(candidate, { score: after.score, resource: after.resource }) > 0) found.push({ candidate, lease });
    });
  }
  found.sort((a, b) => compare(a.candidate, b.candidate));
  const page: LeasePage = { items: found.slice(0, limit).map((f) => f.lease), now };
  if (found.length > limit) {
    const last = found[limit - 1]!.candidate;
    page.nextCursor = encodeCursor({ s: "expires", v: last.score, r: last.resource });
  }
  return page;
}

function matchesFilters(lease: Lease, query: ListQuery, now: Date): boolean {
  if (query.owner !== undefined && lease.owner !== query.owner) return false;
  if (query.task !== undefined && lease.task !== query.task) return false;
  if (query.state !== undefined) {
    const state = leaseStateAt(lease, now);
    // As a filter "held" means still valid, which includes expiring and overdue.
    if (query.state === "held" ? state === "lapsed" : state !== query.state) return false;
  }
  return true;
}

function sum(replies: readonly unknown[]): number {
  return replies.reduce<number>((n, r) => n + Number(r), 0);
}

/**
 * Each bucket's names zset (all scores 0) is ordered byte-wise, so
 * `[prefix .. (prefix\xff` is exactly the resources starting with prefix
 * (0xff never occurs in UTF-8).
 */
function prefixLexRange(prefix: string): { min: Buffer; max: Buffer } {
  const bytes = Buffer.from(prefix, "utf8");
  return { min: Buffer.concat([Buffer.from("["), bytes]), max: Buffer.concat([Buffer.from("("), bytes, Buffer.from([0xff])]) };
}

/**
 * Narrow prefix: read every matching name per bucket and its sort score
 * (ZMSCORE), sort in memory; the sources are then complete and marked exhausted.
 */
async function fillFromPrefix(
  ctx: RedisContext,
  sources: ListSource[],
  plan: SortPlan,
  range: { min: Buffer; max: Buffer },
  isAfterCursor: (c: Candidate) => boolean,
  compare: (a: Candidate, b: Candidate) => number,
): Promise<void> {
  const names = (await execPipeline(ctx, "list", (p) => {
    for (const source of sources) p.zrangebylex(source.keys.names, range.min, range.max);
  })) as string[][];
  const withNames = sources.map((source, i) => ({ source, names: names[i] ?? [] })).filter((x) => x.names.length > 0);
  if (withNames.length > 0) {
    const scores = await execPipeline(ctx, "list", (p) => {
      for (const { source, names: members } of withNames) p.zmscore(source.keys[plan.zset], ...members);
    });
    withNames.forEach(({ source, names: members }, i) => {
      const memberScores = (scores[i] as (string | null)[]) ?? [];
      members.forEach((resource, j) => {
        const score = memberScores[j];
        if (score === null || score === undefined) return;
        const candidate = { resource, score: Number(score) };
        if (isAfterCursor(candidate)) source.buffer.push(candidate);
      });
      source.buffer.sort(compare);
    });
  }
  for (const source of sources) source.isExhausted = true;
}
