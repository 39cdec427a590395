/**
 * Per-user (and per-address) rate limits for the audited mutations: a token
 * bucket per key, in this process's memory. Taken before the IdP is asked or the
 * audit log written (see attempt-gate.ts). Enough for one console replica (the audit log still records
 * every attempt); several replicas would each allow the full rate — a shared
 * limit would need Redis, which the console does not otherwise write to.
 */

export interface TokenBucketOptions {
  /** Attempts allowed in a burst. */
  capacity: number;
  /** Tokens added back per second. */
  refillPerSecond: number;
  /** Buckets kept at most (oldest dropped): memory stays bounded whatever the callers send. */
  maxKeys?: number;
}

export type TakeResult = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class TokenBucketLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly maxKeys: number;

  constructor(private readonly options: TokenBucketOptions) {
    this.maxKeys = options.maxKeys ?? 10_000;
  }

  /** Takes `cost` tokens for `key` at time `nowMs` if it has them. */
  take(key: string, cost = 1, nowMs = Date.now()): TakeResult {
    const { capacity, refillPerSecond } = this.options;
    const previous = this.buckets.get(key);
    const elapsedSeconds = previous ? Math.max(0, nowMs - previous.at) / 1000 : 0;
    const tokens = previous ? Math.min(capacity, previous.tokens + elapsedSeconds * refillPerSecond) : capacity;
    // Re-inserting keeps Map order = least recently used first, for the eviction below.
    this.buckets.delete(key);
    if (tokens < cost) {
      this.buckets.set(key, { tokens, at: nowMs });
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((cost - tokens) / refillPerSecond)) };
    }
    this.buckets.set(key, { tokens: tokens - cost, at: nowMs });
    while (this.buckets.size > this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
    return { allowed: true };
  }
}

/**
 * Force-releases per user: a burst of 10, then one every 6 s. A bulk release is
 * charged one token per lease, capped at the whole bucket: a bulk of 100 needs a
 * full bucket (it is one decision), not ten minutes of waiting.
 */
export const forceReleaseLimiter = new TokenBucketLimiter({ capacity: 10, refillPerSecond: 1 / 6 });

/** API token creates and revokes per user: a burst of 10, then one every 6 s (same budget as force-release). */
export const tokenChangeLimiter = new TokenBucketLimiter({ capacity: 10, refillPerSecond: 1 / 6 });

/**
 * Audited mutations per client address, whoever is signed in: a burst of 30, then one every 2 s
 * (looser than per user, since several people can share an address behind a NAT).
 */
export const attemptAddressLimiter = new TokenBucketLimiter({ capacity: 30, refillPerSecond: 1 / 2 });
