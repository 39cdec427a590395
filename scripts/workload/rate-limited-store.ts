import type { LeaseStore } from "@leasewatch/lease";
import { layerStore } from "@leasewatch/lease/internal";
import type { WorkloadCounters } from "./counters";

/**
 * Token bucket: at most `ratePerSecond` operations per second, with a burst of
 * one second's worth. `take()` waits for a token instead of failing, so the
 * workload slows down rather than erroring when it would exceed its budget.
 */
export class TokenBucket {
  private tokens: number;
  private lastRefill = performance.now();
  private queue: Promise<void> = Promise.resolve();

  constructor(readonly ratePerSecond: number) {
    this.tokens = ratePerSecond;
  }

  /** Resolves when a token is available. Calls are served in order. */
  take(): Promise<void> {
    const turn = this.queue.then(() => this.waitForToken());
    this.queue = turn;
    return turn;
  }

  private async waitForToken(): Promise<void> {
    for (;;) {
      const now = performance.now();
      this.tokens = Math.min(this.ratePerSecond, this.tokens + ((now - this.lastRefill) / 1000) * this.ratePerSecond);
      this.lastRefill = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      const waitMs = ((1 - this.tokens) / this.ratePerSecond) * 1000;
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, waitMs)));
    }
  }
}

/**
 * A LeaseStore that spends one token per write (acquire, renew, release,
 * reports, sweep) so a demo workload can never push more than its budget at a
 * store — including the heartbeats and back-off retries LeaseClient makes.
 * It also counts what the store answered, so the workload's stats are the
 * store's own verdicts rather than what the workers hoped for. Reads pass
 * straight through.
 */
export function createRateLimitedStore(store: LeaseStore, bucket: TokenBucket, counters: WorkloadCounters): LeaseStore {
  const spend = async () => {
    await bucket.take();
    counters.ops += 1;
  };
  return layerStore(store, {
    override: {
      async acquire(input) {
        await spend();
        const result = await store.acquire(input);
        if (result.acquired) counters.acquired += 1;
        else counters.contended += 1;
        return result;
      },
      async renew(input) {
        await spend();
        const result = await store.renew(input);
        if (result.renewed) counters.renewed += 1;
        else counters.renewFailed += 1;
        return result;
      },
      async release(input) {
        await spend();
        const result = await store.release(input);
        if (result.released) counters.released += 1;
        return result;
      },
      async forceRelease(input) {
        await spend();
        return store.forceRelease(input);
      },
      async reportFencingRejection(input) {
        await spend();
        return store.reportFencingRejection(input);
      },
      async reportLost(input) {
        await spend();
        const event = await store.reportLost(input);
        counters.lost += 1;
        return event;
      },
      async sweep() {
        await spend();
        const result = await store.sweep();
        counters.swept += result.expired;
        return result;
      },
      // The underlying store's lifetime belongs to whoever created it.
      close: async () => {},
    },
  });
}
