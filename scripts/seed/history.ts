import { randomUUID } from "node:crypto";
import type { LeaseEventKind } from "@/lib/lease";
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
 * force_released + held — holds for the history on its own.
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

/** Generate the history in time order. Lazily: a million events never sit in memory at once. */
export function* generateHistory(opts: HistoryOptions): Generator<SyntheticEvent> {
  const { random, from, to } = opts;
  const incidents = opts.incidents ?? defaultIncidents(from, to);
  const tokenFor = opts.tokenFor ?? ((n: number) => String(n + 1));
  const meanGapMs = (to - from) / Math.max(1, opts.targetEvents / EVENTS_PER_HOLD);
  const heap = new EventHeap();
  let seq = 0;
  let holds = 0;
  const isInIncident = (at: number) => incidents.some((w) => at >= w.from && at < w.to);

  let t = from;
  for (;;) {
    const incident = isInIncident(t);
    // Arrivals: a Poisson process whose rate follows the daily rhythm (x3 during an incident).
    const rate = dailyRhythm(t) * (incident ? 3 : 1);
    t += (-Math.log(1 - random.next()) * meanGapMs) / rate;
    // Emit everything due before the next hold starts (keeps the output in time order).
    while (heap.size > 0 && heap.peek()!.at <= Math.min(t, to)) yield heap.pop()!.event;
    if (t >= to) break;

    const r = random.next();
    const kind = r < 0.72 ? "tenant" : r < 0.92 ? "hot" : r < 0.95 ? "slow" : r < 0.97 ? "ledger" : r < 0.985 ? "crash-cron" : "long";
    const resource =
      kind === "tenant" ? pickTenantResource(random)
      : kind === "hot" ? random.pick(HOT_RESOURCES)
      : kind === "slow" ? `tenant_${random.skewed(400)}:report-export`
      : kind === "ledger" ? pickLedgerResource(random)
      : kind === "crash-cron" ? "cron:nightly-report"
      : random.pick(LONG_HOLD_RESOURCES);
    const ttlMs = kind === "long" ? 30_000 : kind === "hot" ? 5_000 : kind === "slow" ? 3_000 : kind === "ledger" ? 1_000 : 10_000;
    const holdMs = Math.round(
      kind === "long" ? random.between(2 * 60_000, 8 * 60_000)
      : kind === "hot" ? random.between(300, 1_500) * (incident ? 4 : 1)
      : Math.min(60_000, Math.max(20, random.logNormal(900, 0.9))),
    );
    const owner = makeOwner(random, kind === "hot" ? "scheduler" : kind === "ledger" ? "ledger" : undefined);
    const task = makeTask(random);
    const leaseId = randomUUID();
    const fencingToken = tokenFor(holds++, t);
    const base = { resource, leaseId, owner, task, fencingToken };
    const start = Math.round(t);
    const hold: SyntheticEvent[] = [];
    const push = (event: SyntheticEvent) => hold.push(event);
    push({ ...base, at: start, kind: "acquired" });

    // How it ends: mostly clean releases; crashes and lost leases climb during an incident.
    const e = random.next();
    const crashP = (kind === "crash-cron" ? 0.5 : 0.03) * (incident ? 3 : 1);
    const lostP = kind === "slow" ? 0.25 : kind === "ledger" ? 0.3 : 0.002;
    let end: number;
    if (e < crashP) {
      // Crashed: the lease runs out its TTL after the last heartbeat; recorded by a sweep a little later.
      const lastBeat = start + Math.floor(random.between(0, 2)) * (ttlMs / 3);
      end = Math.round(lastBeat + ttlMs + random.between(50, 5_000));
      push({ ...base, at: end, kind: "expired", holdMs: Math.round(lastBeat + ttlMs - start), renewals: Math.round((lastBeat - start) / (ttlMs / 3)) });
    } else if (e < crashP + lostP) {
      // Lost: a late heartbeat is refused; the holder learns it lost the lease; the expiry is recorded.
      const lapse = start + ttlMs;
      const late = Math.round(lapse + random.between(100, ttlMs * 0.6));
      end = Math.round(lapse + random.between(20, 400));
      push({ ...base, at: end, kind: "expired", holdMs: ttlMs, renewals: 0 });
      push({ ...base, at: late, kind: "renew_failed", reason: "expired" });
      push({ ...base, at: late + 1, kind: "lost", reason: "expired" });
      if (kind === "ledger") {
        // The stale writer's late write is refused by the downstream that already saw a newer token.
        push({
          ...base,
          at: late + 2,
          kind: "fencing_rejected",
          detail: { seenToken: tokenFor(holds, late), by: "ledger-db" },
        });
      }
    } else if (e < crashP + lostP + 0.0003) {
      // Force-releases are rare: an operator stepping in a few times a day.
      end = start + holdMs;
      push({ ...base, at: end, kind: "force_released", holdMs, actor: "alice@example.com", reason: "stuck after deploy; runbook step 3" });
    } else {
      end = start + holdMs;
      push({ ...base, at: end, kind: "released", holdMs, renewals: Math.floor(holdMs / (ttlMs / 3)) });
    }

    // Others refused while this one held it: hot spots always, and a trickle on tenant resources.
    const waiters = kind === "hot" ? random.int(1, incident ? 12 : 6) : kind === "tenant" && random.chance(0.05) ? 1 : 0;
    for (let i = 0; i < waiters; i++) {
      push({
        resource,
        leaseId,
        fencingToken,
        owner: makeOwner(random, "scheduler"),
        task: makeTask(random),
        at: Math.round(random.between(start + 1, Math.max(start + 2, end - 1))),
        kind: "contended",
        detail: { holderOwner: owner, holderTask: task },
      });
    }
    // A hold that would end after `to` is left out whole: the history never reaches into the
    // future, and never has an `acquired` without its ending.
    if (hold.every((event) => event.at <= to)) for (const event of hold) heap.push({ at: event.at, seq: seq++, event });
  }
  while (heap.size > 0) yield heap.pop()!.event;
}
