import type { MeterProvider, TracerProvider } from "@opentelemetry/api";
import { z } from "zod";
import { DEFAULT_BACKOFF, computeBackoffDelay, jitterAround, type BackoffPolicy } from "./backoff";
import { AcquireTimeoutError, LeaseError, LeaseLostError } from "./errors";
import { LeaseTelemetry, type HeldLeaseTelemetry } from "./telemetry";
import type { AcquireResult, Lease, LeaseHolder, LeaseStore, LockStore, LostInput, ReleaseResult, RenewResult } from "./types";
import { MAX_TTL_MS, ZOwner, ZResource, ZTask, ZTtlMs, parseOrThrow } from "./validation";

/**
 * LeaseClient: the worker-side half of a lease.
 *
 * The store decides, on its own clock, who holds a resource. The client only
 * keeps a conservative local view ("my lease is good until D") so that work can
 * be stopped *before* the store could hand the resource to someone else:
 *
 * - D is measured on the MONOTONIC clock (performance.now), starting from the
 *   moment BEFORE the acquire/renew request was sent. The store starts its TTL
 *   when it processes the request, i.e. later, so network latency only ever
 *   makes D earlier than the store's expiry, never later. Client and store
 *   wall clocks are never compared.
 * - A safety margin is taken off D (see computeLocalDeadline) for the rate
 *   difference between the two clocks and for timer lateness on a busy event loop.
 *   D is a courtesy: it holds while the store's clock neither steps nor runs faster
 *   than the margin. A stepped or over-slewed store clock can hand the resource to
 *   another holder before D; the fencing token is what stays correct then.
 * - The heartbeat renews at ttl/3 (±10% jitter), each beat timed from the previous
 *   renew's send, so renew latency does not stretch the period; a renew that has
 *   not answered within a period counts as failed and the next attempt goes out.
 *   A failed renew (not_owner,
 *   expired) or a deadline passed without a successful renewal means the lease is
 *   LOST: the work's AbortSignal fires at once, and nothing is ever renewed again.
 *   Work that can still reach a downstream after losing is stopped there by the
 *   fencing token (see fencing.ts), not by this client.
 */

/**
 * Default fraction of the TTL kept as a safety margin off the local deadline: above
 * chrony's and ntpd's largest slew rate (83,333 ppm, 8.3 %), so a store clock that an NTP
 * daemon slews fast still expires the lease after the client gave up on it.
 */
export const DEFAULT_CLOCK_DRIFT_MARGIN = 0.1;
/** Minimum safety margin (ms), for very short TTLs. */
export const MIN_SAFETY_MARGIN_MS = 5;
/** Largest clockDriftMargin accepted: past half the TTL the heartbeat could not keep up. */
export const MAX_CLOCK_DRIFT_MARGIN = 0.5;
/** Heartbeat period as a fraction of the TTL. */
export const HEARTBEAT_FRACTION = 1 / 3;
/** Heartbeat jitter (±) so many holders don't renew in step. */
export const HEARTBEAT_JITTER = 0.1;
/** After a renew that threw (store unreachable), retry this often (fraction of TTL, capped). */
export const RENEW_RETRY_FRACTION = 0.1;
export const MAX_RENEW_RETRY_MS = 1_000;
/** Default: at most one opportunistic sweep per client every 10 s, and only when contended. */
export const DEFAULT_SWEEP_EVERY_MS = 10_000;
/** How long withLease waits for the best-effort `lost` report before returning. */
export const REPORT_LOST_WAIT_MS = 2_000;
/** How long close() lets aborted work wind down before releasing its lease under it. */
export const DEFAULT_CLOSE_GRACE_MS = 5_000;

/**
 * The local deadline for a lease whose acquire/renew request was sent at `sentAt`
 * (monotonic ms): sentAt + ttl − margin, margin = max(5 ms, clockDriftMargin × ttl).
 * The margin covers the store's clock running faster than ours (a slewing NTP daemon)
 * and a late timer, so the abort fires before the store expires the lease, as long as
 * the store's clock does not step.
 */
export function computeLocalDeadline(sentAt: number, ttlMs: number, clockDriftMargin = DEFAULT_CLOCK_DRIFT_MARGIN): number {
  return sentAt + ttlMs - Math.max(MIN_SAFETY_MARGIN_MS, ttlMs * clockDriftMargin);
}

export type LostReason = LostInput["reason"];

/** What the client did, for logs and metrics. Listener errors are ignored. */
export type LeaseClientEvent =
  | { type: "acquired"; lease: Lease; attempts: number }
  | { type: "contended"; resource: string; holder: LeaseHolder; attempt: number }
  | { type: "renewed"; resource: string; leaseId: string; expiresAt: Date; renewals: number }
  | { type: "renew_refused"; resource: string; leaseId: string; reason: "not_owner" | "expired" }
  | { type: "renew_error"; resource: string; leaseId: string; error: unknown }
  | { type: "lost"; resource: string; leaseId: string; reason: LostReason }
  | { type: "released"; resource: string; leaseId: string; result: ReleaseResult }
  | { type: "release_error"; resource: string; leaseId: string; error: unknown }
  | { type: "report_lost_error"; resource: string; leaseId: string; error: unknown }
  | { type: "swept"; expired: number }
  | { type: "sweep_error"; error: unknown };

export interface LeaseClientOptions {
  owner: string;
  /** Opportunistic store.sweep() at most this often (ms), only when an acquire is contended. 0 = on every contended attempt. */
  sweepEveryMs?: number;
  /** Source of randomness in [0, 1) for jitter. Default Math.random. */
  random?: () => number;
  /** Monotonic clock in ms. Default performance.now. Never a wall clock. */
  now?: () => number;
  /**
   * Fraction of the TTL the local deadline keeps clear of the store's expiry, for a store
   * clock running fast (default 0.1, above an NTP daemon's largest slew). Raise it where
   * store clocks may drift further; a stepped store clock is covered only by fencing.
   */
  clockDriftMargin?: number;
  /** Waiting-acquire backoff ceilings. Default { baseMs: 20, capMs: 1000 }. */
  backoff?: BackoffPolicy;
  /** Observe what the client does (renewals, losses, background errors). */
  onEvent?: (event: LeaseClientEvent) => void;
  /** OpenTelemetry metrics (see telemetry.ts). Default: the global meter provider. */
  meterProvider?: MeterProvider;
  /** OpenTelemetry spans. Default: the global tracer provider. */
  tracerProvider?: TracerProvider;
  /**
   * The prefix-group attribute: `:`-segments kept (1–3, default 2) and distinct groups named
   * (default 20, the rest "other"); false records no telemetry at all.
   */
  telemetry?: { prefixDepth?: number; maxGroups?: number } | false;
}

export interface WithLeaseOptions {
  task: string;
  ttlMs: number;
  /** How long to keep trying when the resource is held. Default 0: one attempt. */
  waitMs?: number;
  /** Cancels the wait, and is forwarded to the work's signal. */
  signal?: AbortSignal;
}

export interface LeaseContext {
  /** Aborted as soon as the lease is known lost (reason: LeaseLostError) or the caller's signal aborts. */
  signal: AbortSignal;
  /** Pass this to every downstream write (see fencing.ts). */
  fencingToken: string;
  lease: Lease;
  /**
   * Milliseconds left before the local deadline (≤ 0 once passed), read from the
   * clock now. Check it right before a side effect: the abort timer may fire late
   * on a busy event loop.
   */
  remainingMs(): number;
  /** Not lost, not aborted, and the local deadline has not passed. */
  isValid(): boolean;
}

export type AcquireOptions = Omit<WithLeaseOptions, "signal"> & { signal?: AbortSignal };

export interface CloseOptions {
  /** How long aborted `withLease` work may take to return before its lease is released under it. Default 5000. */
  graceMs?: number;
}

/** What close() did: the withLease runs it aborted, and the leases it released itself (the rest were released by their runs). */
export interface CloseResult {
  aborted: number;
  released: number;
}

function isFunction(value: unknown): boolean {
  return typeof value === "function";
}

const ZMs = z.number().int().min(0).max(MAX_TTL_MS);
const ZClientOptions = z.strictObject({
  owner: ZOwner,
  sweepEveryMs: ZMs.optional(),
  random: z.custom<() => number>(isFunction, { error: "random must be a function" }).optional(),
  now: z.custom<() => number>(isFunction, { error: "now must be a function" }).optional(),
  clockDriftMargin: z.number().min(0).max(MAX_CLOCK_DRIFT_MARGIN).optional(),
  backoff: z
    .strictObject({ baseMs: z.number().int().min(1).max(60_000), capMs: z.number().int().min(1).max(MAX_TTL_MS) })
    .refine((b) => b.capMs >= b.baseMs, { error: "backoff.capMs must be >= backoff.baseMs" })
    .optional(),
  onEvent: z.custom<(event: LeaseClientEvent) => void>(isFunction, { error: "onEvent must be a function" }).optional(),
  meterProvider: z.custom<MeterProvider>((v) => isFunction((v as MeterProvider | null)?.getMeter), { error: "meterProvider must be an OpenTelemetry MeterProvider" }).optional(),
  tracerProvider: z.custom<TracerProvider>((v) => isFunction((v as TracerProvider | null)?.getTracer), { error: "tracerProvider must be an OpenTelemetry TracerProvider" }).optional(),
  telemetry: z
    .union([z.literal(false), z.strictObject({ prefixDepth: z.number().int().min(1).max(3).optional(), maxGroups: z.number().int().min(1).max(200).optional() })])
    .optional(),
});
const ZCloseOptions = z.strictObject({ graceMs: ZMs.optional() });
const ZWithLeaseOptions = z.strictObject({
  task: ZTask,
  ttlMs: ZTtlMs,
  waitMs: ZMs.optional(),
  signal: z.custom<AbortSignal>((v) => v instanceof AbortSignal, { error: "signal must be an AbortSignal" }).optional(),
});

interface ClientContext {
  store: LockStore;
  now: () => number;
  clockDriftMargin: number;
  random: () => number;
  emit: (event: LeaseClientEvent) => void;
  telemetry: LeaseTelemetry;
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** `promise`'s outcome, or `timeoutError()` thrown when it has not settled within `ms`. */
async function settleOrThrow<T>(promise: Promise<T>, ms: number, timeoutError: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timeoutError()), Math.max(0, ms));
  });
  // The losing promise's rejection must not surface as unhandled.
  promise.catch(() => undefined);
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits for `promise` at most `ms`; returns whether it settled in time. Never rejects. */
async function settleWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One held lease. Tracks the local deadline and whether the lease is lost;
 * `renew()`/`release()` talk to the store, one at a time: a release never
 * overtakes a renew still in flight on another pooled connection (which would
 * refuse that renew and record a spurious `renew_failed` / `lost`).
 * Once lost it never renews again; it sends only the best-effort `lost` report
 * and, when the loss was the local deadline, a release by lease id.
 */
export class LeaseHandle {
  readonly lease: Lease;
  /** Monotonic time just before the acquire was sent. */
  readonly sentAt: number;
  private deadline: number;
  private lastRenewSentAt: number;
  private lostReason: LostReason | null = null;
  private releaseResult: ReleaseResult | null = null;
  private releasing: Promise<ReleaseResult> | null = null;
  /** Tail of this lease's store operations: each starts after the previous one settled. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly background: Array<Promise<unknown>> = [];
  private readonly lostListeners = new Set<(error: LeaseLostError) => void>();
  /** @internal active count, hold time and the hold span of this lease */
  readonly telemetry: HeldLeaseTelemetry;

  /** @internal created by LeaseClient */
  constructor(
    private readonly ctx: ClientContext,
    lease: Lease,
    sentAt: number,
  ) {
    this.lease = lease;
    this.sentAt = sentAt;
    this.lastRenewSentAt = sentAt;
    this.deadline = computeLocalDeadline(sentAt, lease.ttlMs, ctx.clockDriftMargin);
    this.telemetry = ctx.telemetry.leaseStarted(lease, sentAt);
  }

  get resource(): string {
    return this.lease.resource;
  }
  get leaseId(): string {
    return this.lease.leaseId;
  }
  get fencingToken(): string {
    return this.lease.fencingToken;
  }
  /** Local deadline on the client's monotonic clock. */
  get localDeadline(): number {
    return this.deadline;
  }
  /** Milliseconds of local validity left (≤ 0 once the deadline passed). */
  remainingMs(): number {
    return this.deadline - this.ctx.now();
  }
  get isLost(): boolean {
    return this.lostReason !== null;
  }
  get isReleased(): boolean {
    return this.releaseResult?.released === true;
  }
  /** Held, not lost, and the local deadline has not passed. */
  isValid(): boolean {
    return !this.isLost && this.releaseResult === null && this.remainingMs() > 0;
  }
  get lostError(): LeaseLostError | null {
    return this.lostReason ? new LeaseLostError(this.resource, this.lostReason) : null;
  }

  /** Runs `operation` after every earlier operation on this lease has settled. */
  private enqueue<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.queue.then(operation, operation);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** `orRequested`: also refuse once a release was asked for (a renew asked for before it still goes first). */
  private assertUsable(orRequested: boolean): void {
    if (this.lostReason) throw new LeaseLostError(this.resource, this.lostReason);
    if (this.releaseResult || (orRequested && this.releasing)) throw new LeaseError(`lease on "${this.resource}" was already released`, "lease_released");
  }

  /**
   * Extends the lease on the store. The new local deadline is measured from just
   * before this request was sent. A refusal marks the handle lost (and records
   * `lost`); a lost or released handle throws instead of asking again.
   * A thrown error (store unreachable) leaves the handle as it was.
   */
  async renew(): Promise<RenewResult> {
    this.assertUsable(true);
    return this.enqueue(async () => {
      // Lost or released while waiting for an earlier operation: nothing is sent.
      this.assertUsable(false);
      const sentAt = this.ctx.now();
      this.lastRenewSentAt = sentAt;
      const reply = this.ctx.telemetry
        .storeCall("renew", this.resource, () => this.ctx.store.renew({ resource: this.resource, leaseId: this.leaseId, ttlMs: this.lease.ttlMs }), renewOutcome, this.telemetry.parentContext)
        .then((result) => this.applyRenew(result, sentAt));
      // A renew hung on a half-open connection must not hold the next attempt back until
      // the deadline: past one heartbeat period it counts as failed. Its answer, should it
      // still come, is applied all the same (the deadline is timed from its own send).
      const timeoutMs = Math.max(MIN_SAFETY_MARGIN_MS, this.lease.ttlMs * HEARTBEAT_FRACTION);
      const settled = settleOrThrow(reply, timeoutMs, () => new LeaseError(`renew of "${this.resource}" did not answer within ${Math.round(timeoutMs)} ms`, "renew_timeout"));
      settled.then(
        (result) => this.ctx.telemetry.recordRenewal(this.resource, renewOutcome(result)),
        (error: unknown) => this.ctx.telemetry.recordRenewal(this.resource, error instanceof LeaseError && error.code === "renew_timeout" ? "timeout" : "error"),
      );
      return settled;
    });
  }

  /** Monotonic time the latest renew was sent (the acquire's, before any renew). */
  get lastSentAt(): number {
    return this.lastRenewSentAt;
  }

  private applyRenew(result: RenewResult, sentAt: number): RenewResult {
    if (result.renewed) {
      // A success that arrives after we declared the lease lost changes nothing:
      // the work was already told to stop, and we never un-lose a lease. The
      // release queued by the loss runs after this renew and ends the extension.
      if (!this.lostReason) {
        // Slack: the share of the TTL left on the validity this renew extends (its start is the
        // deadline plus the margin, less the TTL), measured when the reply arrived.
        const margin = Math.max(MIN_SAFETY_MARGIN_MS, this.lease.ttlMs * this.ctx.clockDriftMargin);
        this.ctx.telemetry.recordRenewalSlack(this.resource, (this.deadline + margin - this.ctx.now()) / this.lease.ttlMs);
        this.deadline = Math.max(this.deadline, computeLocalDeadline(sentAt, this.lease.ttlMs, this.ctx.clockDriftMargin));
        this.ctx.emit({ type: "renewed", resource: this.resource, leaseId: this.leaseId, expiresAt: result.expiresAt, renewals: result.renewals });
      }
    } else if (!this.lostReason) {
      this.ctx.emit({ type: "renew_refused", resource: this.resource, leaseId: this.leaseId, reason: result.reason });
      this.markLost(result.reason);
    }
    return result;
  }

  /**
   * Gives the lease back (compare-by-lease-id on the store), after any renew in
   * flight. Idempotent once it succeeded. A refusal means the lease had been lost
   * without us knowing: the handle becomes lost and `lost` is recorded. Throws
   * LeaseLostError when the handle already knew it was lost.
   */
  async release(): Promise<ReleaseResult> {
    if (this.releaseResult) return this.releaseResult;
    if (this.lostReason) throw new LeaseLostError(this.resource, this.lostReason);
    return this.sendRelease();
  }

  /** One release per handle; a failed send (store unreachable) may be tried again. */
  private sendRelease(): Promise<ReleaseResult> {
    this.releasing ??= this.enqueue(async () => {
      // After a deadline loss the store records the end as an expiry: the holder could not keep it.
      const input = this.lostReason === "deadline_passed" ? { resource: this.resource, leaseId: this.leaseId, afterDeadlineLoss: true } : { resource: this.resource, leaseId: this.leaseId };
      const result = await this.ctx.telemetry.storeCall("release", this.resource, () => this.ctx.store.release(input), releaseOutcome, this.telemetry.parentContext);
      this.ctx.emit({ type: "released", resource: this.resource, leaseId: this.leaseId, result });
      if (result.released) {
        this.releaseResult = result;
        this.telemetry.end("released", this.ctx.now());
      } else this.markLost(result.reason);
      return result;
    }).catch((error: unknown) => {
      this.releasing = null;
      throw error;
    });
    return this.releasing;
  }

  /** @internal */
  onLost(listener: (error: LeaseLostError) => void): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  /**
   * @internal Marks the lease lost (first reason wins), tells listeners, and
   * records `lost` on the store in the background. Returns false if already lost.
   * When the loss is our own deadline the store may still hold the lease (or a
   * renew in flight may yet extend it): it is released by lease id, after that
   * renew, so no zombie lease outlives us by another TTL. Release compares the id,
   * so it can never end someone else's lease.
   */
  markLost(reason: LostReason): boolean {
    if (this.lostReason || this.releaseResult?.released) return false;
    this.lostReason = reason;
    this.telemetry.lost(reason, this.ctx.now());
    this.ctx.emit({ type: "lost", resource: this.resource, leaseId: this.leaseId, reason });
    const error = new LeaseLostError(this.resource, reason);
    for (const listener of this.lostListeners) listener(error);
    // Best effort: the store may be the reason we lost it. Never throws.
    this.background.push(
      this.ctx.store
        .reportLost({
          resource: this.resource,
          leaseId: this.leaseId,
          owner: this.lease.owner,
          task: this.lease.task,
          fencingToken: this.fencingToken,
          reason,
        })
        .catch((reportError: unknown) => {
          this.ctx.emit({ type: "report_lost_error", resource: this.resource, leaseId: this.leaseId, error: reportError });
        }),
    );
    if (reason === "deadline_passed") {
      this.background.push(
        this.sendRelease().catch((releaseError: unknown) => {
          this.ctx.emit({ type: "release_error", resource: this.resource, leaseId: this.leaseId, error: releaseError });
        }),
      );
    }
    return true;
  }

  /** @internal Waits (bounded) for the `lost` report and the release after a loss, so callers see them recorded when we return. */
  async settleLostReport(maxWaitMs: number): Promise<void> {
    if (this.background.length > 0) await settleWithin(Promise.all(this.background), maxWaitMs);
  }
}

/** Drives renewals of one handle until stopped or lost. */
class Heartbeat {
  private beatTimer: ReturnType<typeof setTimeout> | undefined;
  private deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  private isStopped = false;

  constructor(
    private readonly handle: LeaseHandle,
    private readonly ctx: ClientContext,
  ) {}

  /** The first beat is timed from when the acquire was sent, like the deadline, not from now. */
  start(): void {
    this.armDeadline();
    this.scheduleBeat(this.handle.sentAt + this.nextBeatMs() - this.ctx.now());
  }

  /**
   * Stops renewing and watching the deadline. A renew still in flight needs no
   * waiting for: the handle runs the release after it.
   */
  stop(): void {
    this.isStopped = true;
    clearTimeout(this.beatTimer);
    clearTimeout(this.deadlineTimer);
  }

  private nextBeatMs(): number {
    return jitterAround(this.handle.lease.ttlMs * HEARTBEAT_FRACTION, HEARTBEAT_JITTER, this.ctx.random);
  }

  private retryMs(): number {
    const base = Math.min(MAX_RENEW_RETRY_MS, Math.max(MIN_SAFETY_MARGIN_MS, this.handle.lease.ttlMs * RENEW_RETRY_FRACTION));
    return jitterAround(base, HEARTBEAT_JITTER, this.ctx.random);
  }

  private scheduleBeat(ms: number): void {
    if (this.isStopped || !this.handle.isValid()) return;
    this.beatTimer = setTimeout(() => this.beat(), Math.max(0, ms));
  }

  /** The deadline is enforced by its own timer: a renew that hangs must not keep the lease "valid". */
  private armDeadline(): void {
    clearTimeout(this.deadlineTimer);
    if (this.isStopped || this.handle.isLost) return;
    this.deadlineTimer = setTimeout(() => {
      if (this.isStopped || this.handle.isLost) return;
      if (this.handle.remainingMs() <= 0) this.handle.markLost("deadline_passed");
      else this.armDeadline(); // fired early, or the deadline moved
    }, Math.max(0, this.handle.remainingMs()));
  }

  private beat(): void {
    if (this.isStopped || this.handle.isLost) return;
    // Never renew past the local deadline: by then another holder may already
    // have the resource, and the work must be treated as stopped.
    if (this.handle.remainingMs() <= 0) {
      this.handle.markLost("deadline_passed");
      return;
    }
    void this.renewOnce();
  }

  private async renewOnce(): Promise<void> {
    let result: RenewResult;
    try {
      result = await this.handle.renew();
    } catch (error) {
      if (this.handle.isLost || this.isStopped) return;
      // Store unreachable: keep trying at short intervals; the deadline timer
      // declares the lease lost if none succeeds in time.
      this.ctx.emit({ type: "renew_error", resource: this.handle.resource, leaseId: this.handle.leaseId, error });
      // A renew that timed out already waited a whole period: the next one is due now.
      const timedOut = error instanceof LeaseError && error.code === "renew_timeout";
      this.scheduleBeat(timedOut ? this.handle.lastSentAt + this.nextBeatMs() - this.ctx.now() : this.retryMs());
      return;
    }
    if (result.renewed && !this.handle.isLost) {
      this.armDeadline();
      // Timed from the renew's send, as the deadline is: a slow reply must not stretch the period.
      this.scheduleBeat(this.handle.lastSentAt + this.nextBeatMs() - this.ctx.now());
    }
    // A refusal already marked the handle lost (renew() does it); nothing more is sent.
  }
}

/**
 * Acquires leases on one store for one owner.
 *
 * ```ts
 * const client = new LeaseClient(store, { owner: "worker-7" });
 * await client.withLease("tenant_123:billing-close:2026-04", async ({ signal, fencingToken }) => {
 *   await doWork({ signal, fencingToken });
 * }, { task: "run-4411", ttlMs: 10_000, waitMs: 30_000 });
 * ```
 */
export class LeaseClient<S extends LockStore = LeaseStore> {
  /** The store as given (the client itself uses only its lock: LockStore). */
  readonly store: S;
  readonly owner: string;
  private readonly ctx: ClientContext;
  private readonly sweepEveryMs: number;
  private readonly backoff: BackoffPolicy;
  private lastSweepAt = Number.NEGATIVE_INFINITY;
  /** Aborted by close(): waiting acquires stop, running work is told to stop. */
  private readonly closing = new AbortController();
  /** withLease runs in progress, for close(). */
  private readonly running = new Set<WithLeaseRun>();
  /** Leases acquired and not yet known released or lost (acquire() handles included), for close(). */
  private readonly held = new Set<LeaseHandle>();

  constructor(store: S, options: LeaseClientOptions) {
    if (!store || typeof store.acquire !== "function") throw new LeaseError("LeaseClient: a LeaseStore is required");
    const opts = parseOrThrow(ZClientOptions, options, "LeaseClient");
    this.store = store;
    this.owner = opts.owner;
    this.sweepEveryMs = opts.sweepEveryMs ?? DEFAULT_SWEEP_EVERY_MS;
    this.backoff = opts.backoff ?? DEFAULT_BACKOFF;
    const onEvent = opts.onEvent;
    const telemetry = new LeaseTelemetry(store, {
      meterProvider: opts.meterProvider,
      tracerProvider: opts.tracerProvider,
      ...(opts.telemetry === false ? { enabled: false } : opts.telemetry),
    });
    this.ctx = {
      telemetry,
      store,
      now: opts.now ?? (() => performance.now()),
      clockDriftMargin: opts.clockDriftMargin ?? DEFAULT_CLOCK_DRIFT_MARGIN,
      random: opts.random ?? Math.random,
      emit: (event) => {
        if (!onEvent) return;
        try {
          onEvent(event);
        } catch {
          // A broken listener must not break lease handling.
        }
      },
    };
  }

  /**
   * Acquires `resource` (waiting up to `waitMs`), runs `fn` while a heartbeat keeps
   * the lease alive, and releases it in `finally`.
   *
   * Outcome:
   * - fn resolved, lease held throughout → fn's value.
   * - the lease was lost (renew refused, local deadline passed, or release found it
   *   gone) → rejects with LeaseLostError *even if fn resolved*: work done after
   *   losing may have overlapped another holder, so its result is suspect.
   *   Exception: if fn rejected with its own error (not the abort we caused), that
   *   error is rethrown, being more specific; the loss is still recorded (`lost`).
   * - fn rejected, lease fine → fn's error; a failing release never masks it.
   * - fn resolved but release threw (store unreachable) → fn's value; the lease
   *   lapses on its TTL, and a `release_error` client event is emitted.
   * - close() aborted the signal → fn's outcome; if fn was still running when close()
   *   released the lease under it, a `client_closed` LeaseError even if fn resolved.
   * Throws LeaseError for bad input before touching the store; AcquireTimeoutError
   * when `waitMs` ran out.
   */
  async withLease<T>(resource: string, fn: (context: LeaseContext) => Promise<T>, options: WithLeaseOptions): Promise<T> {
    const validResource = parseOrThrow(ZResource, resource, "withLease");
    const opts = parseOrThrow(ZWithLeaseOptions, options, "withLease");
    if (typeof fn !== "function") throw new LeaseError("withLease: fn must be a function");

    const handle = await this.acquireWithin(validResource, opts);
    const work = new AbortController();
    const stopListening = handle.onLost((error) => work.abort(error));
    const onCallerAbort = () => work.abort(opts.signal?.reason);
    opts.signal?.addEventListener("abort", onCallerAbort, { once: true });
    const heartbeat = new Heartbeat(handle, this.ctx);
    // Before the heartbeat starts: its renewals are the hold span's children.
    handle.telemetry.startHold();
    let markDone!: () => void;
    const run: WithLeaseRun = { handle, work, heartbeat, done: new Promise<void>((resolve) => (markDone = resolve)), isReleasedUnderIt: false };
    this.running.add(run);
    // The reply may arrive after the local deadline (slow store, paused process):
    // then the work must not start at all, whatever the timers say.
    const checkDeadline = () => {
      if (!handle.isLost && handle.remainingMs() <= 0) handle.markLost("deadline_passed");
    };
    checkDeadline();
    heartbeat.start();
    const context: LeaseContext = {
      signal: work.signal,
      fencingToken: handle.fencingToken,
      lease: handle.lease,
      remainingMs: () => handle.remainingMs(),
      isValid: () => handle.isValid() && !work.signal.aborted,
    };

    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      const lostBeforeStart = handle.lostError;
      if (lostBeforeStart) throw lostBeforeStart;
      outcome = { ok: true, value: await handle.telemetry.run(() => fn(context)) };
    } catch (error) {
      outcome = { ok: false, error };
    } finally {
      opts.signal?.removeEventListener("abort", onCallerAbort);
      heartbeat.stop();
      // Success is only reported for work that ended within the local deadline.
      checkDeadline();
      stopListening();
    }

    // Release unless lost: a lost lease is never renewed, and a lease lost to the
    // deadline is already being released by id (see LeaseHandle.markLost).
    if (!handle.isLost) {
      try {
        await handle.release();
      } catch (error) {
        this.ctx.emit({ type: "release_error", resource: handle.resource, leaseId: handle.leaseId, error });
        handle.telemetry.end("release_failed", this.ctx.now());
      }
    }
    await handle.settleLostReport(REPORT_LOST_WAIT_MS);
    handle.telemetry.endHold();
    this.running.delete(run);
    this.held.delete(handle);
    markDone();

    const lost = handle.lostError;
    if (outcome.ok) {
      if (lost) throw lost;
      // Like work after a loss: it may have overlapped the next holder.
      if (run.isReleasedUnderIt) throw work.signal.reason;
      return outcome.value;
    }
    if (lost && isCausedByAbort(outcome.error)) throw lost;
    throw outcome.error;
  }

  /**
   * Acquires `resource` for callers that run their own loop: they must call
   * `renew()` well within the TTL, watch `remainingMs()`, and `release()` at the end.
   */
  async acquire(resource: string, options: AcquireOptions): Promise<LeaseHandle> {
    const validResource = parseOrThrow(ZResource, resource, "acquire");
    const opts = parseOrThrow(ZWithLeaseOptions, options, "acquire");
    return this.acquireWithin(validResource, opts);
  }

  /**
   * Stops this client for a shutdown: no new acquires (waiting ones stop with a `client_closed`
   * LeaseError), every running `withLease` has its signal aborted with that error, gets `graceMs`
   * to return (releasing its lease as usual), and then every lease still held, acquire()'s
   * included, is released by lease id, so none is left to run out its TTL and record an
   * expiry. Does not close the store, which the caller may share. Calling it again waits again.
   */
  async close(options: CloseOptions = {}): Promise<CloseResult> {
    const { graceMs = DEFAULT_CLOSE_GRACE_MS } = parseOrThrow(ZCloseOptions, options, "close");
    const reason = new LeaseError("the lease client is closing", "client_closed");
    if (!this.closing.signal.aborted) this.closing.abort(reason);
    const runs = [...this.running];
    for (const run of runs) run.work.abort(reason);
    if (runs.length > 0) await settleWithin(Promise.all(runs.map((run) => run.done)), graceMs);
    // Work that ignored its signal: stop renewing and release under it (by id, so never another holder's lease).
    for (const run of this.running) {
      run.heartbeat.stop();
      run.isReleasedUnderIt = true;
    }
    const stillHeld = [...this.held].filter((handle) => !handle.isLost && !handle.isReleased);
    const results = await Promise.all(
      stillHeld.map((handle) =>
        handle.release().then(
          (result) => result.released,
          (error: unknown) => {
            this.ctx.emit({ type: "release_error", resource: handle.resource, leaseId: handle.leaseId, error });
            return false;
          },
        ),
      ),
    );
    for (const handle of stillHeld) if (handle.isReleased || handle.isLost) this.held.delete(handle);
    return { aborted: runs.length, released: results.filter(Boolean).length };
  }

  /** acquireUntil, with the whole wait recorded as `leasewatch.lease.acquire.duration`. */
  private async acquireWithin(resource: string, opts: z.output<typeof ZWithLeaseOptions>): Promise<LeaseHandle> {
    const loading = this.ctx.telemetry.ready();
    if (loading) await loading;
    const startedAt = this.ctx.now();
    let outcome: "granted" | "timeout" | "aborted" | "error" = "error";
    try {
      const handle = await this.acquireUntil(resource, opts, startedAt);
      outcome = "granted";
      return handle;
    } catch (error) {
      outcome = error instanceof AcquireTimeoutError ? "timeout" : opts.signal?.aborted || this.closing.signal.aborted ? "aborted" : "error";
      throw error;
    } finally {
      this.ctx.telemetry.recordAcquireWait(resource, (this.ctx.now() - startedAt) / 1000, outcome);
    }
  }

  private async acquireUntil(resource: string, opts: z.output<typeof ZWithLeaseOptions>, startedAt: number): Promise<LeaseHandle> {
    const { task, ttlMs } = opts;
    const waitMs = opts.waitMs ?? 0;
    const signal = opts.signal ? AbortSignal.any([opts.signal, this.closing.signal]) : this.closing.signal;
    signal.throwIfAborted();
    // Handles the caller released or lost since are no longer close()'s to release, nor ones a whole
    // TTL past their local deadline (dropped without a release): the store has expired those.
    for (const handle of this.held) {
      if (handle.isReleased || handle.isLost || handle.remainingMs() < -handle.lease.ttlMs) this.held.delete(handle);
    }
    for (let attempt = 0; ; attempt++) {
      // Taken BEFORE sending: the local deadline must not include our own latency.
      const sentAt = this.ctx.now();
      const result = await this.acquireOnce(resource, task, ttlMs);
      if (result === CONTENTION) {
        // Not acquired, holder unknown (see acquireOnce): like contention, it waits and
        // tries again within waitMs.
        const remainingMs = waitMs - (this.ctx.now() - startedAt);
        if (remainingMs <= 0) throw new AcquireTimeoutError(resource, waitMs);
        await sleepFor(computeBackoffDelay(this.backoff, attempt, remainingMs, this.ctx.random), signal);
        continue;
      }
      if (result.acquired) {
        const handle = new LeaseHandle(this.ctx, result.lease, sentAt);
        this.ctx.emit({ type: "acquired", lease: result.lease, attempts: attempt + 1 });
        if (signal.aborted) {
          // The caller gave up while the request was in flight: give it back.
          await handle.release().catch(() => undefined);
          signal.throwIfAborted();
        }
        this.held.add(handle);
        return handle;
      }
      this.ctx.emit({ type: "contended", resource, holder: result.holder, attempt });
      this.sweepOpportunistically();
      const remainingMs = waitMs - (this.ctx.now() - startedAt);
      if (remainingMs <= 0) throw new AcquireTimeoutError(resource, waitMs, result.holder);
      await sleepFor(computeBackoffDelay(this.backoff, attempt, remainingMs, this.ctx.random), signal);
    }
  }

  /**
   * One acquire; a store's `contention` error (it kept losing insert races) becomes CONTENTION,
   * and so does `lease_ended`: this client never chooses a lease id, so that is the store's own
   * resend of an acquire whose reply was lost, finding that the lease it granted lapsed meanwhile.
   * Not acquired, so it waits and tries again like any other refusal.
   */
  private async acquireOnce(resource: string, task: string, ttlMs: number): Promise<AcquireResult | typeof CONTENTION> {
    try {
      return await this.ctx.telemetry.storeCall("acquire", resource, () => this.store.acquire({ resource, owner: this.owner, task, ttlMs }), acquireOutcome);
    } catch (error) {
      if (error instanceof LeaseError && (error.code === "contention" || error.code === "lease_ended")) return CONTENTION;
      throw error;
    }
  }

  /**
   * Contended acquires are where lapsed-but-unrecorded leases hurt (the console
   * shows them as held). Sweeping here is cheap and bounded by sweepEveryMs per client.
   */
  private sweepOpportunistically(): void {
    const now = this.ctx.now();
    if (now - this.lastSweepAt < this.sweepEveryMs) return;
    this.lastSweepAt = now;
    this.store.sweep().then(
      (r) => this.ctx.emit({ type: "swept", expired: r.expired }),
      (error: unknown) => this.ctx.emit({ type: "sweep_error", error }),
    );
  }
}

const CONTENTION = Symbol("contention");

const acquireOutcome = (result: AcquireResult) => (result.acquired ? "granted" : "contended");
const renewOutcome = (result: RenewResult) => (result.renewed ? "renewed" : result.reason);
const releaseOutcome = (result: ReleaseResult) => (result.released ? "released" : result.reason);

/** One withLease in progress, as close() sees it. */
interface WithLeaseRun {
  handle: LeaseHandle;
  work: AbortController;
  heartbeat: Heartbeat;
  done: Promise<void>;
  /** close() released the lease while fn was still running: its result is suspect. */
  isReleasedUnderIt: boolean;
}

/** fn gave up because we aborted its signal (or rethrew our LeaseLostError). */
function isCausedByAbort(error: unknown): boolean {
  if (error instanceof LeaseLostError) return true;
  if (error instanceof Error) {
    if (error.name === "AbortError") return true;
    if (error.cause instanceof LeaseLostError) return true;
  }
  return false;
}
