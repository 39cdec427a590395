import { describe, expect, it } from "vitest";
import { TokenBucketLimiter } from "./rate-limit";

describe("TokenBucketLimiter", () => {
  it("allows a burst up to capacity, then refuses with the wait until a token is back", () => {
    const limiter = new TokenBucketLimiter({ capacity: 3, refillPerSecond: 0.5 });
    const t = 1_000_000;
    expect([1, 2, 3].map(() => limiter.take("alice", 1, t).allowed)).toEqual([true, true, true]);
    expect(limiter.take("alice", 1, t)).toEqual({ allowed: false, retryAfterSeconds: 2 });
    // Another user has their own bucket.
    expect(limiter.take("bob", 1, t).allowed).toBe(true);
    // One token back after 2 s, not before.
    expect(limiter.take("alice", 1, t + 1_900).allowed).toBe(false);
    expect(limiter.take("alice", 1, t + 2_100).allowed).toBe(true);
  });

  it("refills no further than capacity", () => {
    const limiter = new TokenBucketLimiter({ capacity: 2, refillPerSecond: 1 });
    limiter.take("a", 2, 0);
    expect(limiter.take("a", 3, 3_600_000).allowed).toBe(false);
    expect(limiter.take("a", 2, 3_600_000).allowed).toBe(true);
  });

  it("keeps at most maxKeys buckets", () => {
    const limiter = new TokenBucketLimiter({ capacity: 1, refillPerSecond: 0.001, maxKeys: 2 });
    limiter.take("a", 1, 0);
    limiter.take("b", 1, 0);
    limiter.take("c", 1, 0);
    // "a" was evicted, so it starts over with a full bucket.
    expect(limiter.take("a", 1, 0).allowed).toBe(true);
    expect(limiter.take("c", 1, 0).allowed).toBe(false);
  });
});
