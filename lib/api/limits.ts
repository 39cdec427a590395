/**
 * Per-token limits, so one tenant cannot starve the others: a token bucket for the
 * request rate (burst = one second's worth) and a cap on requests in flight (a
 * waiting acquire holds a slot while it waits). In process memory: each API replica
 * enforces its own share.
 */
export interface LimitDecision {
  ok: boolean;
  retryAfterS: number;
}

export class TokenLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly inFlight = new Map<string, number>();

  take(id: string, ratePerSec: number, now = performance.now()): LimitDecision {
    const bucket = this.buckets.get(id) ?? { tokens: ratePerSec, at: now };
    bucket.tokens = Math.min(ratePerSec, bucket.tokens + ((now - bucket.at) / 1000) * ratePerSec);
    bucket.at = now;
    this.buckets.set(id, bucket);
    if (bucket.tokens < 1) return { ok: false, retryAfterS: Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerSec)) };
    bucket.tokens -= 1;
    return { ok: true, retryAfterS: 0 };
  }

  /** Takes a concurrency slot; the returned function gives it back (idempotent). */
  enter(id: string, max: number): (() => void) | null {
    const current = this.inFlight.get(id) ?? 0;
    if (current >= max) return null;
    this.inFlight.set(id, current + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const n = (this.inFlight.get(id) ?? 1) - 1;
      if (n <= 0) this.inFlight.delete(id);
      else this.inFlight.set(id, n);
    };
  }
}
