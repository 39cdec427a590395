/**
 * A small seeded PRNG so a workload (and a seeded data set) can be replayed:
 * the same seed gives the same resources, owners and timings.
 */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max] inclusive. */
  int(min: number, max: number): number;
  /** Uniform in [min, max). */
  between(min: number, max: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** Log-normal around `median` (spread = sigma of the underlying normal); most values near the median, a long tail. */
  logNormal(median: number, sigma: number): number;
  /** Integer in [1, n], skewed towards small values (a few hot tenants, a long tail of quiet ones). */
  skewed(n: number, exponent?: number): number;
}

/** mulberry32: tiny, fast, good enough for test data (not for anything secret). */
export function createRandom(seed: number = Date.now()): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const gaussian = (): number => {
    // Box-Muller; 1 - next() keeps log() away from 0.
    const u = 1 - next();
    const v = next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    between: (min, max) => min + next() * (max - min),
    chance: (p) => next() < p,
    pick: <T,>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error("pick from an empty list");
      return items[Math.floor(next() * items.length)] as T;
    },
    logNormal: (median, sigma) => median * Math.exp(sigma * gaussian()),
    skewed: (n, exponent = 2.2) => 1 + Math.min(n - 1, Math.floor(n * Math.pow(next(), exponent))),
  };
}
