import { GROUP_TOTALS_DEPTH } from "../group-totals";
import { holdBucketIndex } from "../histogram";
import { prefixGroupOf } from "../prefix-groups";
import { resourcePrefix } from "../validation";
import { parseStreamId, streamEntryToRaw, type RawEvent } from "./codec";
import { callScript, execPipeline, parseTimeReply, type RedisContext } from "./connection";
import { buildHoldKeys, holdClass, holdsFromEntries, loadOpenStarts } from "./held-at";
import { buildEvidsKey, buildGrantsKey, buildHourContentionKey, buildIdStreamKey, buildKindStreamKey, buildLiveIndexKey, buildStatsKey, LIVE_INDEX_DONE, type BucketKeys } from "./keys";
import { EVIDS_TTL_S, HOUR_TTL_S, INDEXED_EVENT_KINDS, LEASE_SCRIPTS, MINUTE_TTL_S } from "./scripts";

/**
 * The projector: folds each bucket's event stream into the read models the console reads
 * (keys.ts): the listing zsets (acq, names), per-resource history lists, per-kind streams, the
 * owner and task id lists and the lease id / token → resource hashes the event filters read,
 * the per-minute / per-hour rollups, the hold index heldAt() reads (held-at.ts), plus renewals (counted in the durable totals, not stored as
 * events). The hot-path scripts only append the event; this runs off that path, in batches: by
 * the sweeper process and the console on an interval (PROJECTION_INTERVAL_MS), and by a read of
 * a read model first (so a caller reads its own writes).
 *
 * It also completes the durable lifetime totals (`<bucket>totals`, never trimmed, never
 * expiring; see totals.ts): the counts of the kinds the hot path does not count (contended,
 * renew_failed, lost, fencing_rejected), the hold histogram (`hold:h<n>`) and the hold sum, and
 * the per-prefix-group hold histograms (`<bucket>groups`, see keys.ts).
 * That is cheaper than counting them in every script — a terminal event would need a hold
 * bucket search and two more HINCRBYs on the hot path — and as exact: the cursor makes each
 * event count once, and lifetimeTotals() catches the projection up before reading. Only an
 * event trimmed from the stream before it was projected (see below) is missed, as by every read model.
 *
 * Each bucket has a cursor (`<bucket>proj`: the last applied stream id). A batch is the entries
 * after the cursor, turned into writes here and applied by the `project` script only if the
 * cursor is still the one the batch was read after, moving it in the same atomic step. So each
 * event reaches the read models exactly once and in stream order, whichever projector applies
 * it, and replaying a batch changes nothing.
 *
 * The hot path trims the stream only below the cursor, until a backlog reaches
 * EVENTS_BACKLOG_FACTOR × eventsMaxLen (nobody projecting for that long); past that it trims the
 * oldest events anyway and sets 'gap' in `<bucket>proj`. A batch finds such a gap by that mark or
 * by the cursor's own entry being gone (it reads from the cursor inclusive). The events lost never
 * reach the history, rollups or hold index; the durable totals the hot path counts and the lease
 * state do not depend on them. The listings (acq, names and the live owner / task zsets) are then
 * rebuilt from the lease state: the batch that finds the gap starts a walk of the bucket's expiry
 * index (`idx`: every lease hash), whose ZSCAN position is 'relist' in `<bucket>proj`, REBUILD_BATCH
 * leases per bucket per project() call (like the live backfill below, not in a read's catch-up);
 * the relist script lists each lease whose hash still holds the lease id read. Replaying the
 * retained events on top gives the same listings, so the walk and the batches may interleave.
 * A lease whose end was lost stays in the zsets; every read checks candidates against their
 * lease hash and skips it. Until the walk is done project() does not report itself caught up.
 *
 * The owner / task id streams (keys.ts: ido, idt) take entries in id order only, so they have a
 * cursor of their own (`ids` in `<bucket>proj`). Normally it moves with the main cursor, in the
 * same batch. A bucket whose events were projected before those streams existed (an upgrade, or
 * data loaded with the cursor set) has `ids` behind `last`: the projector then indexes that
 * retained history first, oldest first, PROJECT_BATCH entries per bucket per round (the id
 * streams and the grants only), while the main batches leave the id streams alone; once `ids`
 * reaches `last` they move together again. Until then an owner or task read says it is partial.
 *
 * The live-lease owner / task zsets (keys.ts: lo, lt) follow the acquired and ended events of each
 * batch, in stream order. A namespace whose leases were acquired before they existed (an upgrade,
 * or leases seeded with the cursor set) has no 'live' marker in `<bucket>proj`: the projector
 * then walks the bucket's `names` zset in byte order, REBUILD_BATCH resources per bucket per
 * project() call (not in the catch-up a read does first: reads do not pay for it), and adds
 * each lease whose hash still holds the lease id it read (the indexLive script checks that
 * atomically, so a lease ended meanwhile is not added back). The walk's position is 'live'
 * ("r:<resource>"), "done" at the end; until then an owner or task list walks the sort order as
 * before and, if that runs out of budget, says the index is building, and project() does not
 * report itself caught up.
 */

/**
 * Stream entries read and applied per bucket per script call. Each call holds the server for its
 * whole batch (every other client's command waits behind it): 250 acquire/release events take
 * 1.4–1.9 ms of an idle server on the 2-core development machine (bench/redis-projector-profile.ts).
 * Smaller batches shorten that stall but cost more per event: 100 take ~0.8 ms, and 20–30 % more
 * server time per event, with no change seen in the workers' acquire p99 on that machine, which
 * CPU scheduling sets (bench/README.md).
 */
export const PROJECT_BATCH = 250;
/**
 * Leases per bucket per project() call of the live-zset backfill and the listings' rebuild: walks
 * that run once after an upgrade or a gap, one batch per call, so they keep the larger batch.
 */
export const REBUILD_BATCH = 1_000;
/** Rounds (batches per bucket) one project() call takes by default: 8,000 events per bucket, about a second of a busy bucket. */
export const PROJECT_ROUNDS = 32;
/** How often the console and the sweeper project: a read model lags its stream by at most about this. */
export const PROJECTION_INTERVAL_MS = 1_000;

const TERMINAL_KINDS = new Set(["released", "expired", "force_released"]);
/**
 * Kinds the hot path counts in the durable totals itself: conservation (acquired = ended + held)
 * is checked against them, so they must not wait for (or depend on) a projection.
 */
const HOT_PATH_TOTAL_KINDS = new Set(["acquired", "released", "expired", "force_released"]);
/**
 * Kinds copied into a per-kind stream. Besides the rare kinds the store has always copied,
 * `contended`: it is rare on a quiet system (a filter for it would otherwise read every event
 * of the window) and frequent only where the per-kind stream's cap keeps it bounded anyway.
 * acquired and released are left out: together they are most events, so reading the bucket
 * streams for them finds a page quickly.
 */
export const KIND_STREAM_KINDS: readonly string[] = [...INDEXED_EVENT_KINDS, "contended"];
const INDEXED_KINDS = new Set<string>(KIND_STREAM_KINDS);
const DAY_MS = 86_400_000;
/** The field of a bucket's projection hash holding since when its hour stats count per prefix group (ms). */
export const PREFIX_GROUPS_FIELD = "groups";

/**
 * Per prefix group (prefix-groups.ts), in the hour's stats hash only: `g|<kind>|<group>` counts and,
 * for terminal events, `gh|<hold bucket>|<group>`. Day hashes sum them with every other field.
 */
export function addGroupCounts(
  hourKey: string,
  kind: string,
  resource: string,
  holdMs: string | number | undefined,
  count: (key: string, field: string, n: number) => void,
): void {
  const group = prefixGroupOf(resource);
  count(hourKey, `g|${kind}|${group}`, 1);
  if (TERMINAL_KINDS.has(kind)) count(hourKey, `gh|${holdBucketIndex(Number(holdMs ?? 0))}|${group}`, 1);
}

/** Contention is counted per 3-segment prefix; shallower depths are sums over it, done on read. */
const CONTENTION_PREFIX_DEPTH = 3;

export interface ProjectorOptions {
  eventsMaxLen: number;
  evidsMaxLen: number;
}

export interface ProjectResult {
  /** Events applied to the read models by this call (others may have applied more meanwhile). */
  applied: number;
  /** Every bucket's read models had reached the end of its stream when this call ended. */
  isCaughtUp: boolean;
}

/** Writes for one batch, in the `project` script's encoding: keys by index, writes as `argc, command, key index, arg…`. */
class BatchWrites {
  readonly keys: string[];
  readonly args: (string | number)[] = [];
  private readonly keyIndex = new Map<string, number>();

  constructor(fixedKeys: string[]) {
    this.keys = [...fixedKeys];
    fixedKeys.forEach((k, i) => this.keyIndex.set(k, i + 1));
  }

  add(command: string, key: string, ...args: (string | number)[]): void {
    this.args.push(args.length, command, this.indexOf(key), ...args);
  }

  /** The key's index in KEYS (1-based), added if new. */
  indexOf(key: string): number {
    let index = this.keyIndex.get(key);
    if (index === undefined) {
      this.keys.push(key);
      index = this.keys.length;
      this.keyIndex.set(key, index);
    }
    return index;
  }
}

interface BucketState {
  bucket: number;
  cursor: string;
  /** The id-stream cursor as read this round (see above); equal to `cursor` once history is indexed. */
  ids: string;
  /** The live owner / task zsets' backfill position as read this round (see above); LIVE_INDEX_DONE once built. */
  live: string;
  /** This call has applied its one backfill batch of the live zsets to the bucket. */
  isBackfilled: boolean;
  /** The listings' rebuild position as read this round (see above); "" when none is under way. */
  relist: string;
  /** This call has applied its one rebuild batch of the listings to the bucket. */
  isRelisted: boolean;
  isDone: boolean;
}

/**
 * A projector over a store's buckets. It remembers each bucket's cursor between calls (one
 * round trip fewer when nothing changed); the cursor in Redis is the truth, re-read every round.
 */
export class Projector {
  private readonly cursors: string[];
  private inFlight: Promise<ProjectResult> | null = null;
  private queued: Promise<ProjectResult> | null = null;

  constructor(
    private readonly ctx: RedisContext,
    private readonly bucketKeys: readonly BucketKeys[],
    private readonly options: ProjectorOptions,
  ) {
    this.cursors = bucketKeys.map(() => "");
  }

  /**
   * Projects up to `maxRounds` batches per bucket. Calls made while one runs share the next run
   * (which starts after it, so it sees every event written before the call was made).
   * `backfill: false` (reads catching up) skips the live-zset backfill batch (see the header).
   */
  project(maxRounds = PROJECT_ROUNDS, options: { backfill?: boolean } = {}): Promise<ProjectResult> {
    const backfill = options.backfill ?? true;
    if (!this.inFlight) {
      this.inFlight = this.run(maxRounds, backfill).finally(() => {
        this.inFlight = null;
      });
      return this.inFlight;
    }
    this.queued ??= this.inFlight
      .catch(() => undefined)
      .then(() => {
        this.queued = null;
        return this.project(maxRounds, { backfill });
      });
    return this.queued;
  }

  /**
   * How far the read models are behind: the age, on the store's clock, of the oldest event
   * not projected yet (0 when every bucket is caught up).
   */
  async lag(): Promise<{ lagMs: number }> {
    const cursors = await execPipeline(this.ctx, "projectionLag", (p) => {
      p.time();
      for (const keys of this.bucketKeys) p.hget(keys.proj, "last");
    });
    const nowMs = parseTimeReply(cursors[0]);
    const next = await execPipeline(this.ctx, "projectionLag", (p) => {
      this.bucketKeys.forEach((keys, b) => {
        const cursor = cursors[b + 1] as string | null;
        p.xrange(keys.events, cursor ? `(${cursor}` : "-", "+", "COUNT", 1);
      });
    });
    let lagMs = 0;
    for (const reply of next) {
      const first = (reply as [string, string[]][] | null)?.[0];
      if (first) lagMs = Math.max(lagMs, nowMs - Number(first[0].split("-")[0]));
    }
    return { lagMs: Math.max(0, lagMs) };
  }

  private async run(maxRounds: number, backfill: boolean): Promise<ProjectResult> {
    // Without backfill (a read catching up) the live-zset backfill is left to the next interval projection.
    const states: BucketState[] = this.bucketKeys.map((_, bucket) => ({
      bucket,
      cursor: this.cursors[bucket]!,
      ids: "",
      live: "",
      isBackfilled: !backfill,
      relist: "",
      isRelisted: !backfill,
      isDone: false,
    }));
    let applied = 0;
    for (let round = 0; round < maxRounds; round++) {
      const pending = states.filter((s) => !s.isDone);
      if (pending.length === 0) break;
      applied += await this.round(pending);
    }
    return { applied, isCaughtUp: states.every((s) => s.isDone && (!backfill || (s.live === LIVE_INDEX_DONE && s.relist === ""))) };
  }

  /**
   * One round: read each pending bucket's cursors, renewals and next batch together, then apply the
   * batches; a bucket whose id streams lag its cursor also gets one batch of history indexed.
   */
  private async round(pending: BucketState[]): Promise<number> {
    const replies = await execPipeline(this.ctx, "project", (p) => {
      p.time();
      for (const s of pending) {
        const keys = this.bucketKeys[s.bucket]!;
        p.hmget(keys.proj, "last", "renewed", "ids", "live", "relist", "gap", PREFIX_GROUPS_FIELD);
        p.hget(keys.totals, "renewed");
        // From the cursor inclusive: its entry missing means events after it were trimmed unprojected.
        p.xrange(keys.events, s.cursor || "-", "+", "COUNT", PROJECT_BATCH + 1);
      }
    });
    const nowMs = parseTimeReply(replies[0]);
    const calls: Promise<number>[] = [];
    const applies: Array<() => Promise<number>> = [];
    const lagging: BucketState[] = [];
    const unlisted: BucketState[] = [];
    const relisting: BucketState[] = [];
    const groupMarks: Array<{ bucket: number; fromMs: number }> = [];
    pending.forEach((s, i) => {
      const [last, renewedApplied, ids, live, relist, gap, groupsFrom] = (replies[1 + 3 * i] as (string | null)[]) ?? [];
      // Per-group counts start with the first event this projector folds: before it, a bucket that
      // had already projected events has none for them (read by prefixStats as its coverage).
      if (groupsFrom == null) groupMarks.push({ bucket: s.bucket, fromMs: last ? parseStreamId(last).ms + 1 : 0 });
      const renewed = (replies[2 + 3 * i] as string | null) ?? "0";
      let entries = (replies[3 + 3 * i] as [string, string[]][] | null) ?? [];
      const stored = last ?? "";
      if (stored !== s.cursor) {
        // Another projector moved on (or this one has not read the cursor yet): read again from there.
        s.cursor = stored;
        this.cursors[s.bucket] = stored;
        return;
      }
      s.ids = ids ?? "";
      s.live = live ?? "";
      s.relist = relist ?? "";
      let isGap = gap != null;
      if (s.cursor && entries[0]?.[0] === s.cursor) entries.shift();
      else if (s.cursor && entries.length > 0) isGap = true;
      entries = entries.slice(0, PROJECT_BATCH);
      const isIndexed = s.ids === s.cursor;
      const isListed = s.live === LIVE_INDEX_DONE;
      if (!isIndexed) lagging.push(s);
      // The live-zset backfill and the listings' rebuild take one batch per bucket per call, not per round.
      if (!isListed && !s.isBackfilled) {
        s.isBackfilled = true;
        unlisted.push(s);
      }
      if (s.relist !== "" && !s.isRelisted) {
        s.isRelisted = true;
        relisting.push(s);
      }
      if (entries.length === 0 && renewed === (renewedApplied ?? "0") && !isGap) {
        if (isIndexed) s.isDone = true;
        return;
      }
      applies.push(() => this.apply(s, entries, nowMs, isIndexed, isGap));
    });
    if (groupMarks.length > 0) {
      await execPipeline(this.ctx, "project", (p) => {
        for (const m of groupMarks) p.hsetnx(this.bucketKeys[m.bucket]!.proj, PREFIX_GROUPS_FIELD, m.fromMs);
      });
    }
    // Started only now, after the marks: a mark that fails leaves no batch running unawaited.
    calls.push(...applies.map((apply) => apply()));
    if (lagging.length > 0) calls.push(this.indexHistory(lagging, nowMs));
    if (unlisted.length > 0) calls.push(this.indexLive(unlisted));
    if (relisting.length > 0) calls.push(this.relist(relisting));
    const counts = await Promise.all(calls);
    return counts.reduce((a, b) => a + b, 0);
  }

  /**
   * One batch per lagging bucket of the history its id streams miss: the entries after `ids` up to
   * the main cursor, oldest first, into the id streams and the grants (both keyed by the events'
   * own ids or values, so a replay writes nothing new). Applied under the `ids` cursor check
   * alone. Returns 0: these events were applied to the other read models before.
   */
  private async indexHistory(lagging: BucketState[], nowMs: number): Promise<number> {
    const replies = await execPipeline(this.ctx, "project", (p) => {
      for (const s of lagging) {
        p.xrange(this.bucketKeys[s.bucket]!.events, s.ids ? `(${s.ids}` : "-", s.cursor, "COUNT", PROJECT_BATCH);
      }
    });
    await Promise.all(
      lagging.map(async (s, i) => {
        const entries = (replies[i] as [string, string[]][] | null) ?? [];
        const keys = this.bucketKeys[s.bucket]!;
        const writes = new BatchWrites(this.fixedKeys(keys, nowMs));
        const grants = new Map<string, Map<string, string>>();
        const idStreams = new Set<string>();
        for (const entry of entries) {
          const raw = streamEntryToRaw(entry);
          if (!raw.kind || !raw.resource) continue;
          this.addIdStreamWrites(writes, idStreams, keys, entry[0], raw);
          addGrant(grants, keys, parseStreamId(entry[0]).ms, raw);
        }
        for (const key of idStreams) writes.add("EXPIRE", key, EVIDS_TTL_S);
        addGrantWrites(writes, grants);
        // A short read reached the main cursor (or the stream holds nothing older): history is indexed.
        const reached = entries.length < PROJECT_BATCH ? s.cursor : entries.at(-1)![0];
        // Like any batch it folds the renewals counted since the last one into the current rollups.
        await callScript(this.ctx, LEASE_SCRIPTS.project, writes.keys, ["*", "", s.ids, reached, ...writes.args]);
      }),
    );
    return 0;
  }

  /**
   * One backfill batch per bucket of the live owner / task zsets (see the header): the next
   * REBUILD_BATCH names after the bucket's 'live' position, their acq scores and lease hashes, then
   * the indexLive script adds those still held by the lease id read. Returns 0 (no events applied).
   */
  private async indexLive(unlisted: BucketState[]): Promise<number> {
    const pages = (await execPipeline(this.ctx, "project", (p) => {
      for (const s of unlisted) {
        const from = s.live.startsWith("r:") ? `(${s.live.slice(2)}` : "-";
        p.zrangebylex(this.bucketKeys[s.bucket]!.names, from, "+", "LIMIT", 0, REBUILD_BATCH);
      }
    })) as string[][];
    const withNames = unlisted.map((s, i) => ({ s, names: pages[i] ?? [] }));
    const nonEmpty = withNames.filter((x) => x.names.length > 0);
    const details = nonEmpty.length === 0 ? [] : await execPipeline(this.ctx, "project", (p) => {
      for (const { s, names } of nonEmpty) {
        const keys = this.bucketKeys[s.bucket]!;
        p.zmscore(keys.acq, ...names);
        for (const resource of names) p.hmget(`${keys.base}lease:${resource}`, "leaseId", "owner", "task");
      }
    });
    let at = 0;
    await Promise.all(
      withNames.map(async ({ s, names }) => {
        const keys = this.bucketKeys[s.bucket]!;
        const scriptKeys = [keys.proj];
        const args: (string | number)[] = [s.live, names.length < REBUILD_BATCH ? LIVE_INDEX_DONE : `r:${names.at(-1)!}`];
        if (names.length > 0) {
          const scores = (details[at++] as (string | null)[] | null) ?? [];
          for (let j = 0; j < names.length; j++) {
            const [leaseId, owner, task] = (details[at++] as (string | null)[] | null) ?? [];
            const score = scores[j];
            // Not projected yet (no acq entry) or ended: its acquired event will add it, or nothing should.
            if (!leaseId || owner == null || task == null || score == null) continue;
            const resource = names[j]!;
            scriptKeys.push(`${keys.base}lease:${resource}`, buildLiveIndexKey(keys, "owner", owner), buildLiveIndexKey(keys, "task", task));
            args.push(resource, leaseId, score);
          }
        }
        await callScript(this.ctx, LEASE_SCRIPTS.indexLive, scriptKeys, args);
      }),
    );
    return 0;
  }

  /**
   * One batch per bucket of the listings' rebuild from the lease state (see the header): the next
   * ZSCAN page of the bucket's expiry index, those leases' hashes, then the relist script lists the
   * ones still held by the lease id read. Returns 0 (no events applied).
   */
  private async relist(relisting: BucketState[]): Promise<number> {
    const pages = (await execPipeline(this.ctx, "project", (p) => {
      for (const s of relisting) p.zscan(this.bucketKeys[s.bucket]!.idx, s.relist, "COUNT", REBUILD_BATCH);
    })) as [string, string[]][];
    const withNames = relisting.map((s, i) => {
      const [next, flat] = pages[i] ?? ["0", []];
      // ZSCAN answers members and scores (expiry times, not needed here).
      return { s, next, names: flat.filter((_, j) => j % 2 === 0) };
    });
    const nonEmpty = withNames.filter((x) => x.names.length > 0);
    const hashes = nonEmpty.length === 0 ? [] : await execPipeline(this.ctx, "project", (p) => {
      for (const { s, names } of nonEmpty) {
        for (const resource of names) p.hmget(`${this.bucketKeys[s.bucket]!.base}lease:${resource}`, "leaseId", "owner", "task", "acquiredAt");
      }
    });
    let at = 0;
    await Promise.all(
      withNames.map(async ({ s, next, names }) => {
        const keys = this.bucketKeys[s.bucket]!;
        const scriptKeys = [keys.proj, keys.acq, keys.names];
        const args: (string | number)[] = [s.relist, next === "0" ? "" : next];
        for (const resource of names) {
          const [leaseId, owner, task, acquiredAt] = (hashes[at++] as (string | null)[] | null) ?? [];
          // Ended since the index was read: its end is in the stream, or nothing should list it.
          if (!leaseId || owner == null || task == null || acquiredAt == null) continue;
          scriptKeys.push(`${keys.base}lease:${resource}`, buildLiveIndexKey(keys, "owner", owner), buildLiveIndexKey(keys, "task", task));
          args.push(resource, leaseId, acquiredAt);
        }
        await callScript(this.ctx, LEASE_SCRIPTS.relist, scriptKeys, args);
      }),
    );
    return 0;
  }

  /** The `project` script's fixed KEYS: the cursor, the totals, the current minute's and hour's rollups (renewals go there). */
  private fixedKeys(keys: BucketKeys, nowMs: number): string[] {
    const nowMinute = Math.floor(nowMs / 60_000);
    return [keys.proj, keys.totals, buildStatsKey(keys, "m", nowMinute), buildStatsKey(keys, "h", Math.floor(nowMinute / 60))];
  }

  /**
   * The event's entry in its owner's and its task's id streams: its own id and its kind (so a kind
   * filter beside the owner or task is applied before any entry is fetched). One `IDS` write adds
   * both (see the project script): most of a batch's writes are these, and each argument costs on
   * both ends. `touched` collects the streams, to be given their expiry once per batch.
   */
  private addIdStreamWrites(writes: BatchWrites, touched: Set<string>, keys: BucketKeys, id: string, raw: RawEvent): void {
    const streams = [raw.owner && buildIdStreamKey(keys, "owner", raw.owner), raw.task && buildIdStreamKey(keys, "task", raw.task)].filter(
      (key): key is string => !!key,
    );
    if (streams.length === 0) return;
    // Capped like the bucket stream (an id stream never needs more entries than it keeps), by the
    // batch's first entry in each stream: a cap checked by every entry cost Redis 4 % of projecting.
    const caps = streams.map((key) => (touched.has(key) ? "" : this.options.eventsMaxLen));
    for (const key of streams) touched.add(key);
    writes.add("IDS", streams[0]!, streams[1] === undefined ? 0 : writes.indexOf(streams[1]), caps[0]!, caps[1] ?? "", id, raw.kind!);
  }

  /**
   * The hold index (held-at.ts) for one batch: each ended hold into its duration class's zset,
   * the starts of holds still open in `holds:open` (an expiry's event carries its length, not its
   * start). An expiry whose acquire came in an earlier batch takes its start from there: one
   * HMGET, only then. Read before the batch is applied, so if another projector moves the cursor
   * meanwhile, this batch is refused as a whole and nothing read here is used.
   */
  private async addHoldIndexWrites(writes: BatchWrites, keys: BucketKeys, raws: RawEvent[]): Promise<void> {
    const hk = buildHoldKeys(keys);
    const { holds, acquired, ended } = holdsFromEntries(raws, await loadOpenStarts(this.ctx, hk, raws));
    if (acquired.size > 0) writes.add("HSET", hk.open, ...[...acquired].flatMap(([leaseId, ms]) => [leaseId, ms]));
    if (ended.length > 0) writes.add("HDEL", hk.open, ...ended);
    // One ZADD per duration class for the whole batch: each write is a command call inside the
    // project script, and a batch of a thousand holds mostly falls into one or two classes.
    const byClass = new Map<number, (string | number)[]>();
    for (const h of holds) {
      const k = holdClass(h.e - h.s);
      let members = byClass.get(k);
      if (!members) byClass.set(k, (members = []));
      members.push(h.e, JSON.stringify(h));
    }
    for (const [k, members] of byClass) writes.add("ZADD", hk.classKey(k), ...members);
    if (byClass.size > 0) writes.add("SADD", hk.classes, ...byClass.keys());
  }

  /**
   * `isIndexed`: the bucket's id streams have reached the cursor, so this batch writes them too (and moves both cursors).
   * `isGap`: events before this batch were trimmed unprojected, so it (re)starts the listings' rebuild.
   */
  private async apply(s: BucketState, entries: [string, string[]][], nowMs: number, isIndexed: boolean, isGap: boolean): Promise<number> {
    const keys = this.bucketKeys[s.bucket]!;
    const writes = new BatchWrites(this.fixedKeys(keys, nowMs));
    if (isGap) {
      // A walk already under way starts over: it may have passed leases whose acquire was lost since.
      writes.add("HSET", keys.proj, "relist", "0");
      writes.add("HDEL", keys.proj, "gap");
    }
    const counters = new Map<string, Map<string, number>>();
    const count = (key: string, field: string, n: number) => {
      let fields = counters.get(key);
      if (!fields) counters.set(key, (fields = new Map()));
      fields.set(field, (fields.get(field) ?? 0) + n);
    };
    const totals = new Map<string, number>();
    const total = (field: string, n: number) => totals.set(field, (totals.get(field) ?? 0) + n);
    const history = new Map<string, string[]>();
    const idStreams = new Set<string>();
    const cappedKindStreams = new Set<string>();
    const grants = new Map<string, Map<string, string>>();
    const raws: RawEvent[] = [];
    const listed = new Map<string, number | null>();
    // Live owner / task zsets: zset key → resource → score (acquired) or null (ended); the last event wins.
    const live = new Map<string, Map<string, number | null>>();
    const setLive = (key: string, resource: string, score: number | null) => {
      let members = live.get(key);
      if (!members) live.set(key, (members = new Map()));
      members.set(resource, score);
    };
    // A batch mostly lies within one minute: its stats keys are built once per minute seen.
    let statsMinute = Number.NaN;
    let statsKeys: string[] = [];
    let contentionKey = "";
    for (const entry of entries) {
      const raw = streamEntryToRaw(entry);
      raws.push(raw);
      const { kind, resource } = raw;
      if (!kind || !resource) continue;
      const ms = parseStreamId(entry[0]).ms;
      const minute = Math.floor(ms / 60_000);
      if (minute !== statsMinute) {
        statsMinute = minute;
        statsKeys = [buildStatsKey(keys, "m", minute), buildStatsKey(keys, "h", Math.floor(minute / 60))];
        contentionKey = buildHourContentionKey(keys, Math.floor(minute / 60));
      }
      if (TERMINAL_KINDS.has(kind)) {
        const holdMs = Number(raw.holdMs ?? 0);
        const bucket = holdBucketIndex(holdMs);
        total(`hold:h${bucket}`, 1);
        total("holdSum", holdMs);
        // Lifetime holds per prefix group (groups hash, read by groupTotals()): here, not in the
        // release script, so acquire and release do no more work for /api/metrics.
        const group = resourcePrefix(resource, GROUP_TOTALS_DEPTH);
        count(keys.groups, `h|${bucket}|${group}`, 1);
        count(keys.groups, `hs|${group}`, holdMs);
      }
      if (!HOT_PATH_TOTAL_KINDS.has(kind)) total(kind, 1);
      const contentionField = kind === "contended" ? `cp:${resourcePrefix(resource, CONTENTION_PREFIX_DEPTH)}` : null;
      for (const key of statsKeys) {
        if (TERMINAL_KINDS.has(kind)) {
          const holdMs = Number(raw.holdMs ?? 0);
          count(key, `${kind}:h${holdBucketIndex(holdMs)}`, 1);
          count(key, "holdSum", holdMs);
        } else {
          count(key, kind, 1);
          if (contentionField) count(key, contentionField, 1);
        }
      }
      // The hour's contention per name once more, on its own: what a store-wide read takes (stats.ts).
      if (contentionField) count(contentionKey, contentionField, 1);
      addGroupCounts(statsKeys[1]!, kind, resource, raw.holdMs, count);
      // The listing zsets follow each resource's last acquire or end in the batch.
      if (kind === "acquired") listed.set(resource, ms);
      else if (TERMINAL_KINDS.has(kind)) listed.set(resource, null);
      // An end removes the resource from its own lease's owner and task sets (a takeover's expired
      // event names the old holder); the new holder's acquired event, later in the batch, adds it back.
      if (kind === "acquired" || TERMINAL_KINDS.has(kind)) {
        const score = kind === "acquired" ? ms : null;
        if (raw.owner) setLive(buildLiveIndexKey(keys, "owner", raw.owner), resource, score);
        if (raw.task) setLive(buildLiveIndexKey(keys, "task", raw.task), resource, score);
      }
      let ids = history.get(resource);
      if (!ids) history.set(resource, (ids = []));
      ids.push(entry[0]);
      if (isIndexed) this.addIdStreamWrites(writes, idStreams, keys, entry[0], raw);
      addGrant(grants, keys, ms, raw);
      if (INDEXED_KINDS.has(kind)) {
        // Capped like the bucket stream, by the batch's first copy into it (as the id streams are).
        const key = buildKindStreamKey(keys, kind);
        if (cappedKindStreams.has(key)) writes.add("XADD", key, entry[0], ...entry[1]);
        else writes.add("XADD", key, "MAXLEN", "~", this.options.eventsMaxLen, entry[0], ...entry[1]);
        cappedKindStreams.add(key);
      }
    }
    for (const [resource, acquiredAt] of listed) {
      if (acquiredAt === null) {
        writes.add("ZREM", keys.acq, resource);
        writes.add("ZREM", keys.names, resource);
      } else {
        writes.add("ZADD", keys.acq, acquiredAt, resource);
        writes.add("ZADD", keys.names, 0, resource);
      }
    }
    for (const [key, members] of live) {
      const added: (string | number)[] = [];
      const removed: string[] = [];
      for (const [resource, score] of members) {
        if (score === null) removed.push(resource);
        else added.push(score, resource);
      }
      if (removed.length > 0) writes.add("ZREM", key, ...removed);
      if (added.length > 0) writes.add("ZADD", key, ...added);
    }
    for (const [resource, ids] of history) {
      const key = buildEvidsKey(keys, resource);
      // LPUSH of oldest…newest leaves the newest first.
      writes.add("LPUSH", key, ...ids);
      writes.add("LTRIM", key, 0, this.options.evidsMaxLen - 1);
      writes.add("EXPIRE", key, EVIDS_TTL_S);
    }
    // Owner and task filters range over the id streams instead of the bucket streams; they expire
    // like the history lists.
    for (const key of idStreams) writes.add("EXPIRE", key, EVIDS_TTL_S);
    addGrantWrites(writes, grants);
    for (const [field, n] of totals) writes.add("HINCRBY", keys.totals, field, n);
    await this.addHoldIndexWrites(writes, keys, raws);
    for (const [key, fields] of counters) {
      for (const [field, n] of fields) writes.add("HINCRBY", key, field, n);
      // The groups hash is lifetime: never expires.
      if (key !== keys.groups) writes.add("EXPIRE", key, key.includes(":stats:m:") ? MINUTE_TTL_S : HOUR_TTL_S);
    }
    const last = entries.at(-1)?.[0] ?? "";
    // Indexed: the id-stream cursor is checked and moves with the main one; else it is left to indexHistory().
    const idsCursor = isIndexed ? [s.ids, last] : ["*", ""];
    const reply = (await callScript(this.ctx, LEASE_SCRIPTS.project, writes.keys, [s.cursor, last, ...idsCursor, ...writes.args])) as string[];
    if (reply[0] !== "applied") {
      s.cursor = reply[1] ?? "";
      this.cursors[s.bucket] = s.cursor;
      return 0;
    }
    if (last) {
      s.cursor = last;
      this.cursors[s.bucket] = last;
    }
    if (isGap) s.relist = "0";
    // A full batch may have more behind it; a short one reached the end of the stream.
    if (entries.length < PROJECT_BATCH) s.isDone = true;
    return entries.length;
  }
}

/** The grants hash of the event's day: its lease id and token, each → its resource. */
function addGrant(grants: Map<string, Map<string, string>>, keys: BucketKeys, ms: number, raw: RawEvent): void {
  if (!raw.resource || !(raw.leaseId || raw.token)) return;
  const key = buildGrantsKey(keys, Math.floor(ms / DAY_MS));
  let fields = grants.get(key);
  if (!fields) grants.set(key, (fields = new Map()));
  if (raw.leaseId) fields.set(`l:${raw.leaseId}`, raw.resource);
  if (raw.token) fields.set(`t:${raw.token}`, raw.resource);
}

function addGrantWrites(writes: BatchWrites, grants: Map<string, Map<string, string>>): void {
  for (const [key, fields] of grants) {
    writes.add("HSET", key, ...[...fields].flat());
    writes.add("EXPIRE", key, EVIDS_TTL_S);
  }
}
