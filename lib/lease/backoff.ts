/**
 * Exponential backoff with FULL jitter for waiting acquires.
 *
 * Full jitter (sleep = random(0, min(cap, base * 2^attempt))) rather than
 * "equal" or no jitter: many waiters that were refused by the same holder would
 * otherwise retry in lock-step and hit the store together every time it frees up.
 */
export interface BackoffPolicy {
  /** First ceiling, in ms. */
  baseMs: number;
  /** The ceiling never grows past this, in ms. */
  capMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 20, capMs: 1_000 };

/** The ceiling for `attempt` (0-based): min(cap, base * 2^attempt). */
export function computeBackoffCeiling(policy: BackoffPolicy, attempt: number): number {
  // 2^attempt overflows to Infinity for huge attempts; min() still gives the cap.
  return Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempt));
}

/** A full-jitter delay for `attempt`, never longer than `remainingMs`. */
export function computeBackoffDelay(policy: BackoffPolicy, attempt: number, remainingMs: number, random: () => number): number {
  const delay = random() * computeBackoffCeiling(policy, attempt);
  return Math.max(0, Math.min(delay, remainingMs));
}

/** `base` ± `fraction`: heartbeat jitter so many holders don't renew in step. */
export function jitterAround(base: number, fraction: number, random: () => number): number {
  return base * (1 - fraction + 2 * fraction * random());
}
