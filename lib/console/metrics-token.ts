/**
 * The scrape token for `/api/metrics` (METRICS_TOKEN): validated at start-up,
 * compared in constant time, and guessing slowed down.
 *
 * Framework-free so instrumentation.ts can check it at boot without loading
 * next-auth or the stores.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { z } from "zod";

export const MIN_METRICS_TOKEN_LENGTH = 32;
/** Long enough not to be guessed; printable, no spaces (it travels in a header). */
const ZMetricsToken = z.string().regex(new RegExp(`^[\\x21-\\x7e]{${MIN_METRICS_TOKEN_LENGTH},256}$`));

export class MetricsTokenError extends Error {
  constructor() {
    super(`METRICS_TOKEN must be ${MIN_METRICS_TOKEN_LENGTH}-256 printable characters without spaces (e.g. \`openssl rand -hex 32\`)`);
    this.name = "MetricsTokenError";
  }
}

/** The configured token, or null when unset. Throws MetricsTokenError when set but unusable. */
export function readMetricsToken(env: Record<string, string | undefined> = process.env): string | null {
  const raw = env.METRICS_TOKEN;
  if (raw === undefined || raw === "") return null;
  const parsed = ZMetricsToken.safeParse(raw);
  if (!parsed.success) throw new MetricsTokenError();
  return parsed.data;
}

/**
 * Compares digests, not the strings: both sides are always 32 bytes, so neither the
 * comparison nor an early length check tells a guesser anything about the token.
 */
export function isSameToken(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Failed attempts allowed per client address per window, and for all addresses together. */
const WINDOW_MS = 60_000;
const MAX_FAILURES_PER_CLIENT = 10;
const MAX_FAILURES_TOTAL = 100;
/** At most this many addresses are remembered; the oldest is forgotten first (bounded memory). */
const MAX_TRACKED_CLIENTS = 10_000;

/**
 * Counts failed token attempts in fixed one-minute windows. Past the limit a client
 * (and, past the global limit, everyone presenting a token) gets 429 until the window
 * ends — a guesser gets about ten tries a minute. The global cap bounds guessing
 * even by a client that varies its forwarded address.
 */
export class FailureLimiter {
  private readonly clients = new Map<string, { windowStart: number; failures: number }>();
  private total = { windowStart: 0, failures: 0 };

  constructor(private readonly now: () => number = Date.now) {}

  /** Seconds until `client` may try again, or 0 when it may try now. */
  retryAfterS(client: string): number {
    const now = this.now();
    const entry = this.clients.get(client);
    const clientWait = entry && now - entry.windowStart < WINDOW_MS && entry.failures >= MAX_FAILURES_PER_CLIENT ? entry.windowStart + WINDOW_MS - now : 0;
    const totalWait = now - this.total.windowStart < WINDOW_MS && this.total.failures >= MAX_FAILURES_TOTAL ? this.total.windowStart + WINDOW_MS - now : 0;
    return Math.ceil(Math.max(clientWait, totalWait) / 1000);
  }

  recordFailure(client: string): void {
    const now = this.now();
    if (now - this.total.windowStart >= WINDOW_MS) this.total = { windowStart: now, failures: 0 };
    this.total.failures += 1;
    const entry = this.clients.get(client);
    if (entry && now - entry.windowStart < WINDOW_MS) {
      entry.failures += 1;
      return;
    }
    this.clients.delete(client);
    if (this.clients.size >= MAX_TRACKED_CLIENTS) {
      const oldest = this.clients.keys().next().value;
      if (oldest !== undefined) this.clients.delete(oldest);
    }
    this.clients.set(client, { windowStart: now, failures: 1 });
  }

  get trackedClients(): number {
    return this.clients.size;
  }
}

/** The client address as the TLS proxy in front reports it (first X-Forwarded-For hop), else "direct". */
export function clientAddressOf(request: Request): string {
  const forwarded = request.headers.get("x-forwarded-for")?.split(",")[0]?.trim();
  return forwarded || request.headers.get("x-real-ip")?.trim() || "direct";
}
