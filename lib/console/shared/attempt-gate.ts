/**
 * The first check of every audited mutation once the caller's session is known,
 * before the IdP is asked or the audit log is written: a rate limit per user and
 * per address. An attempt over it costs nothing but a count: its refusal is
 * tallied (lib/audit/refusal-tally), so a burst becomes one entry with its count.
 */
import type { AuditDraft } from "@/lib/audit/entry";
import type { RefusalTally } from "@/lib/audit/refusal-tally";
import type { TakeResult, TokenBucketLimiter } from "./rate-limit";

export interface AttemptGate {
  perUser: TokenBucketLimiter;
  perAddress: TokenBucketLimiter;
  tally: RefusalTally;
}

export interface Attempt {
  /** What is attempted (force_release, token_create, …): each has its own count. */
  action: string;
  actorId: string;
  /** The client's address as the nearest proxy saw it; null without a proxy (then only the per-user limit applies). */
  ip: string | null;
  /** Rate-limit tokens this attempt takes (a bulk release: one per lease, capped by the caller). */
  cost: number;
  /** The refused attempt's entry, as it would be written alone (built only when the attempt is refused). */
  draft(detail: string): AuditDraft;
}

export type GateResult = TakeResult;

/** Takes the attempt's tokens, address first (so a refused address does not spend the user's budget), or counts its refusal. */
export function passAttemptGate(gate: AttemptGate, attempt: Attempt): GateResult {
  let taken = attempt.ip === null ? ({ allowed: true } as TakeResult) : gate.perAddress.take(attempt.ip);
  let limit = "per address";
  if (taken.allowed) {
    taken = gate.perUser.take(attempt.actorId, attempt.cost);
    limit = "per user";
  }
  if (!taken.allowed) gate.tally.add(`${attempt.action}\u0000${attempt.actorId}`, attempt.draft(`${limit}; retry after ${taken.retryAfterSeconds} s`));
  return taken;
}
