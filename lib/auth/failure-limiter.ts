/**
 * Failed attempts (a wrong token, an unknown bearer) per client address, in fixed
 * windows. Past the limit an address is answered 429 until its window ends.
 * Framework-free: the console's metrics route and the lock API share it.
 *
 * There is no cap over all addresses together: an outsider could fill it and lock
 * everyone out. Keys come from lib/auth/client-address.ts, so a client cannot pick them.
 */
export interface FailureLimitOptions {
  windowMs: number;
  maxFailures: number;
  /** At most this many addresses are remembered; the oldest is forgotten first (bounded memory). */
  maxTrackedClients?: number;
}

export class FailureLimiter {
  private readonly clients = new Map<string, { windowStart: number; failures: number }>();
  private readonly maxTrackedClients: number;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly options: FailureLimitOptions = { windowMs: 60_000, maxFailures: 10 },
  ) {
    this.maxTrackedClients = options.maxTrackedClients ?? 10_000;
  }

  /** Seconds until `client` may try again, or 0 when it may try now. */
  retryAfterS(client: string): number {
    const now = this.now();
    const entry = this.clients.get(client);
    if (!entry || now - entry.windowStart >= this.options.windowMs || entry.failures < this.options.maxFailures) return 0;
    return Math.max(1, Math.ceil((entry.windowStart + this.options.windowMs - now) / 1000));
  }

  recordFailure(client: string): void {
    const now = this.now();
    const entry = this.clients.get(client);
    if (entry && now - entry.windowStart < this.options.windowMs) {
      entry.failures += 1;
      return;
    }
    this.clients.delete(client);
    if (this.clients.size >= this.maxTrackedClients) {
      const oldest = this.clients.keys().next().value;
      if (oldest !== undefined) this.clients.delete(oldest);
    }
    this.clients.set(client, { windowStart: now, failures: 1 });
  }

  get trackedClients(): number {
    return this.clients.size;
  }
}
