/**
 * The scrape token for `/api/metrics` (METRICS_TOKEN): validated at start-up,
 * compared in constant time. Guessing is slowed down per client address
 * (lib/auth/failure-limiter.ts, in metrics-access.ts).
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
