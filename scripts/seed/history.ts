import { randomUUID } from "node:crypto";
import type { LeaseEvent, LeaseEventKind } from "@leasewatch/lease";
import { findHistoryViolations } from "@leasewatch/lease/testing";
import { HOT_RESOURCES, LONG_HOLD_RESOURCES, makeOwner, makeTask, pickLedgerResource, pickTenantResource } from "../workload/names";
import type { Random } from "../workload/random";

/**
 * Synthetic lease history for demo backfill and benchmarks: a stream of events
 * in time order that looks like the live workload (same resource names, the
 * same mix of clean releases, crashes, contention, lost leases and fencing
 * rejections), with a daily rhythm and a couple of incidents.
 *
 * Every hold that starts also ends inside the window (released, expired or
 * force-released), so conservation — acquired = released + expired +
 * force_released + held — holds for the history on its own. Writers still check
 * it with `findHistoryViolations` (lib/lease/testing/history-checks.ts) before
 * writing: see `toLeaseEvents`.
 */
export interface SyntheticEvent {
  at: number;
  kind: LeaseEventKind;
  resource: string;
  leaseId: string;
  owner: string;
  task: string;
  /** Decimal string; callers map to their store's token scheme via `tokenFor`. */
  fencingToken: string;
  holdMs?: number;
  actor?: string;
  reason?: string;
  detail?: Record<string, unknown>;
  /** Renewals made during the hold (terminal events only). */
  renewals?: number;
  /** `expired` only: when the TTL ran out (acquired + holdMs); the event is recorded at or after it. */
  expiredAt?: number;
}

export interface HistoryOptions {
  from: number;
  to: number;
  /** Roughly how many events to produce (the result is within a few percent). */
  targetEvents: number;
  random: Random;
  /** Incident windows (ms epoch) where contention and expiries spike. Default: one, in the second half. */
  incidents?: Array<{ from: number; to: number }>;
  /** The fencing token of the n-th hold (n from 0, in start order). Must increase with n. */
  tokenFor?: (n: number, at: number) => string;
}

/** Average events one hold produces (acquired + terminal + its share of contention, lost, fencing). */
const EVENTS_PER_HOLD = 2.8;

interface Pending {
  at: number;
  seq: number;
  event: SyntheticEvent;
}

/** A binary min-heap on (at, seq): holds overlap, but events must come out in time order. */
class EventHeap {
  private items: Pending[] = [];
  get size() {
    return this.items.length;
  }
  peek(): Pending | undefined {
    return this.items[0];
  }
  push(item: Pending) {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop(): Pending | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l]!, a[m]!)) m = l;
        if (r < a.length && this.less(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
  private less(x: Pending, y: Pending) {
    return x.at < y.at || (x.at === y.at && x.seq < y.seq);
  }
}

/** Load relative to the mean: busier in working hours (UTC), quiet at night. */
function dailyRhythm(at: number): number {
  const hour = new Date(at).getUTCHours() + new Date(at).getUTCMinutes() / 60;
  return 1 + 0.45 * Math.sin(((hour - 8) / 24) * 2 * Math.PI);
}

export function defaultIncidents(from: number, to: number): Array<{ from: number; to: number }> {
  const span = to - from;
  const length = Math.min(45 * 60_000, span * 0.08);
  const start = from + span * 0.62;
  return [{ from: start, to: start + length }];
}

/** A synthetic event as a store would return it (tokens already the store's), for the history checks. */
export function toLeaseEvent(e: SyntheticEvent, index: number, fencingToken: string = e.fencingToken, detail: Record<string, unknown> | undefined = e.detail): LeaseEvent {
  return {
    id: String(index),
    store: "backfill",
    at: new Date(e.at),
    kind: e.kind,
    resource: e.resource,
    leaseId: e.leaseId,
    owner: e.owner,
    task: e.task,
    fencingToken,
    ...(e.holdMs === undefined ? {} : { holdMs: e.holdMs }),
    ...(detail === undefined ? {} : { detail }),
  };
}

/**
 * Refuses a history that breaks any invariant the live stores keep (overlapping
 * holds, tokens going down, an acquire without exactly one end, holdMs at odds
 * with the times, a fencing rejection citing a token this store never issued
 * for the resource). Called before anything is written: a demo must never show
 * an impossible history. `events` are in time order, with the store's tokens.
 */
export function assertValidHistory(events: readonly LeaseEvent[], what: string): void {
  const violations = findHistoryViolations(events);
  if (violations.length === 0) return;
  const shown = violations.slice(0, 5).join("; ");
  throw new Error(`${what}: refusing to write a history that breaks ${violations.length} invariant(s): ${shown}${violations.length > 5 ? "; …" : ""}`);
}

/** One resource's schedule: who holds it, until when, and when that end is recorded. */
interface Occupancy {
  startedAt: number;
  leaseId: string;
  owner: string;
  task: string;
  fencingToken: string;
  /** acquiredAt + holdMs: the release, or the moment the TTL ran out. */
  heldUntil: number;
  /** The terminal event's time (an expiry is recorded a little after the TTL ran out). */
  endRecordedAt: number;
  /** The hold before this one, while this one is still only planned (a waiter queued for it). */
  previous?: Occupancy;
}

type HoldKind = "tenant" | "hot" | "slow" | "ledger" | "crash-cron" | "long";

/** How long each kind of worker waits for a busy resource (the live workload's `waitMs`). */
function waitMsOf(kind: HoldKind, random: Random): number {
  if (kind === "hot") return 3_000;
  if (kind === "tenant") return random.chance(0.3) ? 2_000 : 0;
  return 0;
}

/**
 * Generate the history in time order. Lazily: a million events never sit in memory at once.
 *
 * Each resource is scheduled on its own, as the store would grant it: an arrival
 * that finds the resource held is refused (`contended`) and, if it is willing to
 * wait, acquires just after the holder's end is recorded; otherwise it gives up.
 * So holds of one resource never overlap, tokens (numbered in grant order) only
 * go up per resource, and every hold ends exactly once inside the window.
 */
export function* generateHistory(opts: HistoryOptions): Generator<SyntheticEvent> {
  const { random, from, to } = opts;
  const incidents = opts.incidents ?? defaultIncidents(from, to);
  const tokenFor = opts.tokenFor ?? ((n: number) => String(n + 1));
  const meanGapMs = (to - from) / Math.max(1, opts.targetEvents / EVENTS_PER_HOLD);
  const heap = new EventHeap();
  const occupancy = new Map<string, Occupancy>();
  let seq = 0;
  let holds = 0;
  const isInIncident = (at: number) => incidents.some((w) => at >= w.from && at < w.to);
  const emit = (events: readonly SyntheticEvent[]) => {
    for (const event of events) heap.push({ at: event.at, seq: seq++, event });
  };

  /** One hold of `resource` from `start`: its events, and when it ends. The token is drawn here, in grant order. */
  const planHold = (kind: HoldKind, resource: string, start: number, incident: boolean, owner: string) => {
    const ttlMs = kind === "long" ? 30_000 : kind === "hot" ? 5_000 : kind === "slow" ? 3_000 : kind === "ledger" ? 1_000 : 10_000;
    const holdMs = Math.round(
      kind === "long" ? random.between(2 * 60_000, 8 * 60_000)
      : kind === "hot" ? random.between(300, 1_500) * (incident ? 4 : 1)
      : Math.min(60_000, Math.max(20, random.logNormal(900, 0.9))),
    );
    const task = makeTask(random);
    const leaseId = randomUUID();
    const fencingToken = tokenFor(holds++, start);
    const base = { resource, leaseId, owner, task, fencingToken };
    const events: SyntheticEvent[] = [{ ...base, at: start, kind: "acquired" }];
    /** Events the holder records after its end (a refused renew, the loss): they do not hold the resource. */
    const after: SyntheticEvent[] = [];

    // How it ends: mostly clean releases; crashes and lost leases climb during an incident.
    const e = random.next();
    const crashP = (kind === "crash-cron" ? 0.5 : 0.03) * (incident ? 3 : 1);
    const lostP = kind === "slow" ? 0.25 : kind === "ledger" ? 0.3 : 0.002;
    let heldUntil: number;
    let endRecordedAt: number;
    let isLostLedger = false;
    if (e < crashP) {
      // Crashed: the lease runs out its TTL after the last heartbeat; recorded by a sweep a little later.
      const lastBeat = start + Math.floor(random.between(0, 2)) * Math.round(ttlMs / 3);
      heldUntil = lastBeat + ttlMs;
      endRecordedAt = Math.round(heldUntil + random.between(50, 5_000));
      events.push({ ...base, at: endRecordedAt, kind: "expired", holdMs: heldUntil - start, expiredAt: heldUntil, renewals: Math.round((lastBeat - start) / (ttlMs / 3)) });
    } else if (e < crashP + lostP) {
      // Lost: a late heartbeat is refused; the holder learns it lost the lease; the expiry is recorded.
      heldUntil = start + ttlMs;
      endRecordedAt = Math.round(heldUntil + random.between(20, 400));
      events.push({ ...base, at: endRecordedAt, kind: "expired", holdMs: ttlMs, expiredAt: heldUntil, renewals: 0 });
      const late = Math.round(endRecordedAt + random.between(100, ttlMs * 0.6));
      after.push({ ...base, at: late, kind: "renew_failed", reason: "expired" }, { ...base, at: late + 1, kind: "lost", reason: "expired" });
      isLostLedger = kind === "ledger";
    } else if (e < crashP + lostP + 0.0003) {
      // Force-releases are rare: an operator stepping in a few times a day.
      heldUntil = endRecordedAt = start + holdMs;
      events.push({ ...base, at: heldUntil, kind: "force_released", holdMs, actor: "alice@example.com", reason: "stuck after deploy; runbook step 3" });
    } else {
      heldUntil = endRecordedAt = start + holdMs;
      events.push({ ...base, at: heldUntil, kind: "released", holdMs, renewals: Math.floor(holdMs / (ttlMs / 3)) });
    }

    // Others refused while this one held it: hot spots always, and a trickle on tenant resources.
    const waiters = kind === "hot" ? random.int(1, incident ? 12 : 6) : kind === "tenant" && random.chance(0.05) ? 1 : 0;
    for (let i = 0; i < waiters && heldUntil - start > 2; i++) {
      events.push({
        resource,
        leaseId,
        fencingToken,
        owner: makeOwner(random, "scheduler"),
        task: makeTask(random),
        at: Math.round(random.between(start + 1, heldUntil - 1)),
        kind: "contended",
        detail: { holderOwner: owner, holderTask: task },
      });
    }
    const held: Occupancy = { startedAt: start, leaseId, owner, task, fencingToken, heldUntil, endRecordedAt };
    return { events, after, occupancy: held, isLostLedger, base };
  };

  let t = from;
  for (;;) {
    const incident = isInIncident(t);
    // Arrivals: a Poisson process whose rate follows the daily rhythm (x3 during an incident).
    const rate = dailyRhythm(t) * (incident ? 3 : 1);
    t += (-Math.log(1 - random.next()) * meanGapMs) / rate;
    // Emit everything due before this arrival (keeps the output in time order: nothing planned
    // from here on is earlier than `t`).
    while (heap.size > 0 && heap.peek()!.at <= Math.min(t, to)) yield heap.pop()!.event;
    if (t >= to) break;

    const r = random.next();
    const kind: HoldKind = r < 0.72 ? "tenant" : r < 0.92 ? "hot" : r < 0.95 ? "slow" : r < 0.97 ? "ledger" : r < 0.985 ? "crash-cron" : "long";
    const resource =
      kind === "tenant" ? pickTenantResource(random)
      : kind === "hot" ? random.pick(HOT_RESOURCES)
      : kind === "slow" ? `tenant_${random.skewed(400)}:report-export`
      : kind === "ledger" ? pickLedgerResource(random)
      : kind === "crash-cron" ? "cron:nightly-report"
      : random.pick(LONG_HOLD_RESOURCES);
    const owner = makeOwner(random, kind === "hot" ? "scheduler" : kind === "ledger" ? "ledger" : undefined);
    const arrival = Math.round(t);

    // The resource may still be held (or its expiry not yet recorded): the store decides, not the arrival.
    let start = arrival;
    const latest = occupancy.get(resource);
    const contend = (holder: Occupancy) =>
      emit([
        {
          resource,
          leaseId: holder.leaseId,
          fencingToken: holder.fencingToken,
          owner,
          task: makeTask(random),
          at: arrival,
          kind: "contended",
          detail: { holderOwner: holder.owner, holderTask: holder.task },
        },
      ]);
    if (latest && arrival < latest.startedAt) {
      // Someone is already queued for it: this arrival is refused by whoever holds it now, if anyone, and gives up.
      const holder = latest.previous;
      if (holder && arrival >= holder.startedAt && arrival < holder.heldUntil) contend(holder);
      continue;
    }
    if (latest && arrival <= latest.endRecordedAt) {
      if (arrival < latest.heldUntil) {
        contend(latest);
        // Not willing to wait that long: it gives up (the refusal is all the store saw).
        if (latest.endRecordedAt - arrival > waitMsOf(kind, random)) continue;
      }
      start = latest.endRecordedAt + random.int(1, 250);
    }

    const hold = planHold(kind, resource, start, incident, owner);
    const planned = [...hold.events, ...hold.after];
    let last = hold.occupancy;
    if (hold.isLostLedger) {
      // The stale writer's rescuer takes the resource over once the expiry is recorded and writes
      // with its newer token; the stale writer's late write is then refused, having seen that token.
      const rescuerStart = hold.occupancy.endRecordedAt + random.int(1, 100);
      const rescue = planHold("tenant", resource, rescuerStart, incident, makeOwner(random, "ledger"));
      const refusedAt = rescuerStart + random.int(20, 200);
      planned.push(...rescue.events, ...rescue.after, {
        ...hold.base,
        at: refusedAt,
        kind: "fencing_rejected",
        detail: { seenToken: rescue.base.fencingToken, by: "ledger-db" },
      });
      last = { ...rescue.occupancy, previous: hold.occupancy };
    } else if (start > arrival && latest) {
      last = { ...last, previous: { ...latest, previous: undefined } };
    }
    // A hold that would end after `to` is left out whole (and the resource stays as it was): the
    // history never reaches into the future, and never has an `acquired` without its ending.
    if (planned.some((event) => event.at > to)) continue;
    occupancy.set(resource, last);
    emit(planned);
  }
  while (heap.size > 0) yield heap.pop()!.event;
}
