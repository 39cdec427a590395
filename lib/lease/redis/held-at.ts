/**
 * Past state on Redis: what was held at an instant T.
 *
 * A hold live at T is either still a lease now (acquired before T, not lapsed by T:
 * the `acq` zset, read in acquiredAt order by listLeases), or it ended after T — and
 * then its terminal event (released / expired / force_released, with holdMs) is in the
 * bucket stream after T. Scanning the stream from T would read everything since T, so
 * the store's projector (projector.ts: off the hot path, in the same cursor-checked batch as
 * the other read models) folds terminal events into a **hold index** per bucket, bucketed by
 * duration class:
 *
 *   <ns>:{b7}:holds:c<k>   zset, score = end ms, member = the hold (JSON), for holds
 *                          lasting [2^k, 2^(k+1)) ms (k = 0 also takes 0–1 ms)
 *   <ns>:{b7}:holds:open   hash leaseId → acquired ms, for holds not ended yet (an
 *                          expiry's event carries its length, not its start)
 *   <ns>:{b7}:holds:classes  set of the classes in use (a read probes only those)
 *
 * A hold of class k that spans T ends within (T, T + 2^(k+1)], so each class is one
 * ZRANGEBYSCORE over a window no wider than twice its holds: at least about half of
 * what is read is an answer, whatever the history's length. heldAt() catches the projection
 * up first; events after the projection cursor (`<bucket>proj`, what is still left) are read
 * from the stream directly, so answers never wait for a projection: their terminal events are
 * ended holds, and their acquires not ended there are current leases the `acq` zset lacks yet
 * (read from their hashes).
 *
 * Precision: stream ids are `<ms>-<seq>` in the store's order; T names a millisecond and
 * includes every event in it. Retention: the index drops holds that ended before the
 * stream's trimmed part, and T must not be before that (historyStartsAt).
 */
import { LeaseError } from "../errors";
import { TERMINAL_EVENT_KINDS, type HeldAtQuery, type HeldAtResult, type Lease, type PartialRead, type PastHold, type TerminalEventKind } from "../types";
import { parseStreamId, streamEntryToRaw, toLease, type RawEvent, type RawLease } from "./codec";
import { execPipeline, parseTimeReply, type RedisContext } from "./connection";
import type { BucketKeys } from "./keys";
import { listCursorScore } from "./list";
import { advanceZsetPosition, nextZsetBatch, type ZsetPosition } from "./merge";

/** Duration classes 0..36: 2^37 ms is over four years; longer holds share the last class. */
export const HOLD_CLASSES = 37;
/** heldAt reads at most this many unprojected events per bucket; beyond, it asks for a projection. */
export const MAX_UNPROJECTED_EVENTS = 50_000;
const TERMINAL = new Set<string>(TERMINAL_EVENT_KINDS);

export interface HoldKeys {
  open: string;
  classes: string;
  classKey: (k: number) => string;
}

export function buildHoldKeys(keys: BucketKeys): HoldKeys {
  const base = `${keys.base}holds:`;
  return { open: `${base}open`, classes: `${base}classes`, classKey: (k) => `${base}c${k}` };
}

/** One ended hold as the index stores it (short names: there is one per terminal event). */
export interface HoldRecord {
  /** Stream id of the terminal event. */
  i: string;
  r: string;
  l: string;
  o: string;
  t: string;
  f: string;
  /** start / end, epoch ms on the store's clock. */
  s: number;
  e: number;
  k: TerminalEventKind;
}

export function holdClass(durationMs: number): number {
  if (durationMs < 2) return 0;
  return Math.min(HOLD_CLASSES - 1, Math.floor(Math.log2(durationMs)));
}

/**
 * The ended holds in a run of stream entries. `starts` maps leaseId → acquired ms for
 * holds whose `acquired` event came earlier (it is filled from these entries too).
 * An expiry whose start is unknown (its acquire was trimmed before projection) is
 * placed by its fencing token, which is the store's µs clock at the grant.
 */
export function holdsFromEntries(entries: RawEvent[], starts: Map<string, number>): { holds: HoldRecord[]; acquired: Map<string, number>; ended: string[] } {
  const holds: HoldRecord[] = [];
  const acquired = new Map<string, number>();
  const ended: string[] = [];
  for (const raw of entries) {
    if (!raw.id || !raw.kind || raw.resource === undefined || !raw.leaseId) continue;
    const ms = parseStreamId(raw.id).ms;
    if (raw.kind === "acquired") {
      starts.set(raw.leaseId, ms);
      acquired.set(raw.leaseId, ms);
      continue;
    }
    if (!TERMINAL.has(raw.kind) || raw.holdMs === undefined) continue;
    const holdMs = Math.max(0, Number(raw.holdMs));
    let start: number;
    if (raw.kind === "expired") {
      const known = starts.get(raw.leaseId);
      const byToken = raw.token ? Math.floor(Number(raw.token) / 1000) : ms - holdMs;
      start = known ?? Math.min(byToken, ms - holdMs);
    } else {
      start = ms - holdMs;
    }
    acquired.delete(raw.leaseId);
    ended.push(raw.leaseId);
    holds.push({
      i: raw.id,
      r: raw.resource,
      l: raw.leaseId,
      o: raw.owner ?? "",
      t: raw.task ?? "",
      f: raw.token ?? "0",
      s: start,
      e: start + holdMs,
      k: raw.kind as TerminalEventKind,
    });
  }
  return { holds, acquired, ended };
}

/** Starts of expired holds not begun in `entries`, from the open-holds hash. */
export async function loadOpenStarts(ctx: RedisContext, hk: HoldKeys, entries: RawEvent[]): Promise<Map<string, number>> {
  const seen = new Set<string>();
  const wanted: string[] = [];
  for (const raw of entries) {
    if (!raw.leaseId) continue;
    if (raw.kind === "acquired") seen.add(raw.leaseId);
    else if (raw.kind === "expired" && !seen.has(raw.leaseId)) wanted.push(raw.leaseId);
  }
  const starts = new Map<string, number>();
  if (wanted.length === 0) return starts;
  const [reply] = await execPipeline(ctx, "heldAt", (p) => p.hmget(hk.open, ...wanted));
  (reply as (string | null)[]).forEach((v, i) => {
    if (v !== null) starts.set(wanted[i]!, Number(v));
  });
  return starts;
}

function parseEntries(reply: unknown): RawEvent[] {
  return ((reply as [string, string[]][]) ?? []).map(streamEntryToRaw);
}

/** The newest stream id ever trimmed from the bucket ("0-0": none), from XINFO STREAM. */
function maxDeletedId(info: unknown): string {
  if (Array.isArray(info)) {
    for (let i = 0; i + 1 < info.length; i += 2) if (info[i] === "max-deleted-entry-id") return String(info[i + 1]);
  } else if (info instanceof Map) {
    const v: unknown = info.get("max-deleted-entry-id");
    if (typeof v === "string") return v;
  } else if (info && typeof info === "object") {
    const v = (info as Record<string, unknown>)["max-deleted-entry-id"];
    if (typeof v === "string") return v;
  }
  return "0-0";
}

/**
 * Drops the holds of one bucket's index that ended before the stream's trimmed part (they can
 * no longer be asked for: an instant before the retained history is refused). Retention only:
 * sweep() and projectHolds() run it.
 */
export async function pruneBucketHolds(ctx: RedisContext, keys: BucketKeys): Promise<void> {
  const hk = buildHoldKeys(keys);
  const [exists] = await execPipeline(ctx, "projectHolds", (p) => p.exists(keys.events));
  if (Number(exists) === 0) return;
  const [info] = await execPipeline(ctx, "projectHolds", (p) => p.xinfo("STREAM", keys.events));
  const deleted = parseStreamId(maxDeletedId(info)).ms;
  if (deleted <= 0) return;
  const [classes] = await execPipeline(ctx, "projectHolds", (p) => p.smembers(hk.classes));
  if (((classes as string[]) ?? []).length === 0) return;
  await execPipeline(ctx, "projectHolds", (p) => {
    for (const k of (classes as string[]) ?? []) p.zremrangebyscore(hk.classKey(Number(k)), "-inf", `(${deleted}`);
  });
}

interface BucketState {
  keys: BucketKeys;
  bucket: number;
  pos: string | null;
  firstMs: number | null;
  deletedMs: number;
  /** Current leases of the bucket acquired before the instant. */
  liveBefore: number;
  /** Duration classes the bucket's hold index has. */
  classes: number[];
}

export interface HeldAtDeps {
  /** Current leases in acquiredAt order (the store's list with sort "held_longest"). */
  listOldestFirst: (q: { prefix?: string; owner?: string; task?: string; limit: number; cursor?: string }) => Promise<{ items: Lease[]; nextCursor?: string; partial?: PartialRead }>;
  get: (resource: string) => Promise<Lease | null>;
  /** Key of a resource's lease hash. */
  leaseKey: (resource: string) => string;
  /** Bucket of a resource, so a one-resource read touches one bucket. */
  bucketOf: (resource: string) => number;
}

export async function readHeldAt(
  ctx: RedisContext,
  bucketKeys: readonly BucketKeys[],
  deps: HeldAtDeps,
  q: HeldAtQuery,
  limit: number,
): Promise<HeldAtResult> {
  const T = q.at.getTime();
  const tn = T + 1;
  const buckets = q.resource !== undefined ? [deps.bucketOf(q.resource)] : bucketKeys.map((_, b) => b);
  const replies = await execPipeline(ctx, "heldAt", (p) => {
    p.time();
    for (const b of buckets) {
      const keys = bucketKeys[b]!;
      p.hget(keys.proj, "last");
      p.xrange(keys.events, "-", "+", "COUNT", 1);
      p.zcount(keys.acq, "-inf", `(${tn}`);
      p.smembers(buildHoldKeys(keys).classes);
    }
  });
  const nowMs = parseTimeReply(replies[0]);
  const states: BucketState[] = buckets.map((bucket, i) => {
    const pos = replies[1 + i * 4] as string | null;
    const first = parseEntries(replies[2 + i * 4])[0];
    const liveBefore = Number(replies[3 + i * 4]);
    const classes = ((replies[4 + i * 4] as string[]) ?? []).map(Number).filter((k) => Number.isInteger(k) && k >= 0 && k < HOLD_CLASSES);
    return { keys: bucketKeys[bucket]!, bucket, pos, firstMs: first?.id ? parseStreamId(first.id).ms : null, deletedMs: 0, liveBefore, classes };
  });
  const withStream = states.filter((s) => s.firstMs !== null);
  if (withStream.length > 0) {
    const infos = await execPipeline(ctx, "heldAt", (p) => {
      for (const s of withStream) p.xinfo("STREAM", s.keys.events);
    });
    withStream.forEach((s, i) => {
      s.deletedMs = parseStreamId(maxDeletedId(infos[i])).ms;
    });
  }
  // Complete from the first recorded event on, and after every bucket's trimmed part
  // (the millisecond of the newest trimmed id is fine: what T needs ends after T).
  const firsts = states.flatMap((s) => (s.firstMs === null ? [] : [s.firstMs]));
  const historyStartMs = firsts.length === 0 ? null : Math.max(Math.min(...firsts), ...states.map((s) => s.deletedMs));
  const historyStartsAt = historyStartMs === null ? null : new Date(historyStartMs);
  const now = new Date(nowMs);
  if (T >= nowMs) return { covered: false, reason: "future", at: q.at, now, historyStartsAt };
  if (historyStartMs === null || T < historyStartMs) return { covered: false, reason: "before_history", at: q.at, now, historyStartsAt };

  const matches = (r: { resource: string; owner: string; task: string }) =>
    (q.resource === undefined || r.resource === q.resource) &&
    (q.prefix === undefined || r.resource.startsWith(q.prefix)) &&
    (q.owner === undefined || r.owner === q.owner) &&
    (q.task === undefined || r.task === q.task);
  const isAnswer = (h: HoldRecord) => h.s < tn && h.e >= tn && matches({ resource: h.r, owner: h.o, task: h.t });

  // Current leases first, ended holds second: a release in between then shows in both
  // reads (and is kept once, as ended) rather than in neither.
  const { leases: live, partial } = await readLiveAt(ctx, states, deps, q, tn, limit + 1);
  // By lease id: a hold ends once, while stream ids repeat across buckets (two buckets' events in
  // one millisecond are both <ms>-0).
  const ended = new Map<string, HoldRecord>();
  const classReplies = await execPipeline(ctx, "heldAt", (p) => {
    for (const s of states) {
      const hk = buildHoldKeys(s.keys);
      for (const k of s.classes) {
        const max = k === HOLD_CLASSES - 1 ? "+inf" : String(T + 2 ** (k + 1));
        p.zrangebyscore(hk.classKey(k), tn, max);
      }
    }
  });
  for (const reply of classReplies) {
    for (const member of reply as string[]) {
      const h = JSON.parse(member) as HoldRecord;
      if (isAnswer(h)) ended.set(h.l, h);
    }
  }
  // The projector's lag: events after its cursor, read from the stream itself (one pipeline
  // for every bucket; a bucket further behind than one read continues on its own).
  const TAIL_BATCH = 5_000;
  const firstReads = await execPipeline(ctx, "heldAt", (p) => {
    for (const s of states) p.xrange(s.keys.events, s.pos === null ? "-" : `(${s.pos}`, "+", "COUNT", TAIL_BATCH);
  });
  const unlisted: UnlistedTail[] = [];
  for (const [i, s] of states.entries()) {
    const tail = parseEntries(firstReads[i]);
    let last = tail[tail.length - 1];
    while (last?.id && tail.length % TAIL_BATCH === 0) {
      if (tail.length >= MAX_UNPROJECTED_EVENTS) {
        throw new LeaseError(
          `heldAt: the hold index of bucket ${s.bucket} is more than ${MAX_UNPROJECTED_EVENTS} events behind; store.project() brings it up to date`,
          "index_behind",
        );
      }
      const [reply] = await execPipeline(ctx, "heldAt", (p) => p.xrange(s.keys.events, `(${last!.id}`, "+", "COUNT", TAIL_BATCH));
      const more = parseEntries(reply);
      if (more.length === 0) break;
      tail.push(...more);
      last = more[more.length - 1];
    }
    if (tail.length === 0) continue;
    const starts = await loadOpenStarts(ctx, buildHoldKeys(s.keys), tail);
    const { holds, acquired } = holdsFromEntries(tail, starts);
    for (const h of holds) if (isAnswer(h)) ended.set(h.l, h);
    // Acquired before the instant and not ended in the tail: a current lease the listing
    // zsets (projected too) do not have yet.
    const leases: UnlistedTail["leases"] = [];
    for (const raw of tail) {
      if (raw.kind !== "acquired" || !raw.leaseId || raw.resource === undefined || !acquired.has(raw.leaseId)) continue;
      if (acquired.get(raw.leaseId)! >= tn || !matches({ resource: raw.resource, owner: raw.owner ?? "", task: raw.task ?? "" })) continue;
      leases.push({ resource: raw.resource, leaseId: raw.leaseId });
    }
    if (leases.length > 0) unlisted.push({ keys: s.keys, after: last!.id!, starts, leases });
  }
  live.push(...(await readUnlistedLive(ctx, deps, unlisted, tn, ended, isAnswer)));

  const endedLeaseIds = new Set(ended.keys());
  // A lease read both from the listing and as unlisted (the projector moved in between) counts once.
  const current = new Map(live.map((l) => [l.leaseId, l]));
  const items: PastHold[] = [
    ...[...current.values()].filter((l) => !endedLeaseIds.has(l.leaseId) && matches(l)).map((l): PastHold => {
      const isLapsed = l.expiresAt.getTime() <= nowMs;
      return {
        store: ctx.storeName,
        resource: l.resource,
        leaseId: l.leaseId,
        owner: l.owner,
        task: l.task,
        fencingToken: l.fencingToken,
        acquiredAt: l.acquiredAt,
        heldForMs: Math.max(0, T - l.acquiredAt.getTime()),
        ending: isLapsed ? "expired" : "held",
        endedAt: isLapsed ? l.expiresAt : null,
      };
    }),
    ...[...ended.values()].map(
      (h): PastHold => ({
        store: ctx.storeName,
        resource: h.r,
        leaseId: h.l,
        owner: h.o,
        task: h.t,
        fencingToken: h.f,
        acquiredAt: new Date(h.s),
        heldForMs: Math.max(0, T - h.s),
        ending: h.k,
        endedAt: new Date(h.e),
      }),
    ),
  ];
  items.sort((a, b) => a.acquiredAt.getTime() - b.acquiredAt.getTime() || (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
  return { covered: true, at: q.at, items: items.slice(0, limit), hasMore: items.length > limit, ...(partial ? { partial } : {}), now, historyStartsAt: historyStartsAt! };
}

/** One bucket's leases acquired in the unprojected tail of its stream, before the instant, not ended there. */
interface UnlistedTail {
  keys: BucketKeys;
  /** The tail's last stream id: a lease's end, if it comes after the tail was read, is after this. */
  after: string;
  /** Starts of the holds open in the tail (holdsFromEntries filled it). */
  starts: Map<string, number>;
  leases: { resource: string; leaseId: string }[];
}

/** Held at the instant, by a current lease: granted before it and not lapsed by then. */
function isLiveAt(lease: Lease, tn: number): boolean {
  return lease.acquiredAt.getTime() < tn && lease.expiresAt.getTime() >= tn;
}

/**
 * The unlisted leases still current (read from their hashes), and, for those that ended since the
 * tail was read, their holds from the events after it (added to `ended` when `isAnswer`). Hashes
 * first, stream second, as for the listed leases: a lease ending in between shows in both, never
 * in neither.
 */
async function readUnlistedLive(
  ctx: RedisContext,
  deps: HeldAtDeps,
  tails: readonly UnlistedTail[],
  tn: number,
  ended: Map<string, HoldRecord>,
  isAnswer: (h: HoldRecord) => boolean,
): Promise<Lease[]> {
  if (tails.length === 0) return [];
  const hashes = await execPipeline(ctx, "heldAt", (p) => {
    for (const tail of tails) for (const u of tail.leases) p.hgetall(deps.leaseKey(u.resource));
  });
  const live: Lease[] = [];
  let at = 0;
  // Per tail, the lease ids no longer in their hashes: ended since the tail was read.
  const gone = tails.map((tail) => {
    const ids = new Set<string>();
    for (const u of tail.leases) {
      const lease = toLease(ctx.storeName, u.resource, (hashes[at++] ?? {}) as RawLease);
      if (lease?.leaseId !== u.leaseId) ids.add(u.leaseId);
      else if (isLiveAt(lease, tn)) live.push(lease);
    }
    return ids;
  });
  const ending = tails.flatMap((tail, i) => (gone[i]!.size > 0 ? [{ tail, ids: gone[i]! }] : []));
  if (ending.length === 0) return live;
  const replies = await execPipeline(ctx, "heldAt", (p) => {
    for (const { tail } of ending) p.xrange(tail.keys.events, `(${tail.after}`, "+", "COUNT", MAX_UNPROJECTED_EVENTS);
  });
  ending.forEach(({ tail, ids }, i) => {
    for (const h of holdsFromEntries(parseEntries(replies[i]), tail.starts).holds) {
      if (ids.has(h.l) && isAnswer(h)) ended.set(h.l, h);
    }
  });
  return live;
}

/**
 * Current leases acquired before `tn` that had not lapsed by then, oldest first (at most `want`);
 * `partial` when the store's list stopped at its read budget before the scan was done.
 */
async function readLiveAt(
  ctx: RedisContext,
  states: readonly BucketState[],
  deps: HeldAtDeps,
  q: HeldAtQuery,
  tn: number,
  want: number,
): Promise<{ leases: Lease[]; partial?: PartialRead }> {
  if (q.resource !== undefined) {
    const lease = await deps.get(q.resource);
    return { leases: lease && isLiveAt(lease, tn) ? [lease] : [] };
  }
  // No current lease was acquired before the instant (the usual case for an older one): nothing to read.
  if (states.every((s) => s.liveBefore === 0)) return { leases: [] };
  const found: Lease[] = [];
  if (q.prefix !== undefined) {
    // A prefix narrows by the names zset (the store's own list), in listing order: acquiredAt as
    // projected. A lease hash granted after the instant is skipped, not taken as the end of the
    // scan: its resource may be listed still at an earlier grant that has ended since (that hold
    // is in the stream). The scan ends with the first page whose listing order passes the instant.
    let cursor: string | undefined;
    for (;;) {
      const page = await deps.listOldestFirst({ prefix: q.prefix, owner: q.owner, task: q.task, limit: Math.min(1000, Math.max(want, 100)), cursor });
      for (const lease of page.items) {
        if (isLiveAt(lease, tn)) found.push(lease);
        if (found.length >= want) return { leases: found };
      }
      if (page.partial) return { leases: found, partial: page.partial };
      if (!page.nextCursor || listCursorScore(page.nextCursor, "held_longest") >= tn) return { leases: found };
      cursor = page.nextCursor;
    }
  }
  // Otherwise merge the buckets' `acq` zsets below tn (oldest first) and read only the
  // hashes of the candidates next in that order: about `want` of them without filters.
  const batch = Math.min(500, Math.max(50, want));
  const sources = states
    .filter((s) => s.liveBefore > 0)
    .map((s) => ({ state: s, position: undefined as ZsetPosition | undefined, buffer: [] as { resource: string; score: number }[], isExhausted: false }));
  while (found.length < want) {
    const needy = sources.filter((s) => s.buffer.length === 0 && !s.isExhausted);
    if (needy.length > 0) {
      const batches = needy.map((s) => nextZsetBatch(s.position, "-inf", batch));
      const replies = await execPipeline(ctx, "heldAt", (p) => {
        needy.forEach((s, i) => p.zrangebyscore(s.state.keys.acq, batches[i]!.from, `(${tn}`, "WITHSCORES", "LIMIT", 0, batches[i]!.count));
      });
      needy.forEach((s, i) => {
        const read = advanceZsetPosition(s.position, replies[i], batches[i]!.count, false);
        s.position = read.position;
        for (const entry of read.entries) s.buffer.push({ resource: entry.member, score: entry.score });
        if (read.isExhausted) s.isExhausted = true;
      });
    }
    const candidates: string[] = [];
    while (candidates.length < batch) {
      let best: (typeof sources)[number] | undefined;
      for (const s of sources) {
        const head = s.buffer[0];
        if (!head) {
          if (!s.isExhausted) break;
          continue;
        }
        const b = best?.buffer[0];
        if (!b || head.score < b.score || (head.score === b.score && head.resource < b.resource)) best = s;
      }
      // A bucket that may still have older entries must be refilled before anything is taken past it.
      if (!best || sources.some((s) => s.buffer.length === 0 && !s.isExhausted)) break;
      candidates.push(best.buffer.shift()!.resource);
    }
    if (candidates.length === 0) {
      if (sources.every((s) => s.buffer.length === 0 && s.isExhausted)) break;
      continue;
    }
    const hashes = await execPipeline(ctx, "heldAt", (p) => {
      for (const resource of candidates) p.hgetall(deps.leaseKey(resource));
    });
    candidates.forEach((resource, i) => {
      const lease = toLease(ctx.storeName, resource, (hashes[i] ?? {}) as RawLease);
      if (!lease || !isLiveAt(lease, tn)) return;
      if (q.owner !== undefined && lease.owner !== q.owner) return;
      if (q.task !== undefined && lease.task !== q.task) return;
      if (found.length < want) found.push(lease);
    });
  }
  return { leases: found };
}
