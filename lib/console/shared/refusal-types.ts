/**
 * The refusal every console mutation answers with (force-release, observed release, API
 * tokens): client-safe and dependency-free. `code` says what happened, `message` says it in
 * words for the person at the keyboard.
 */

export type RefusalCode =
  | "not_signed_in"
  | "forbidden"
  | "reauth_required"
  | "idp_unavailable"
  | "cross_origin"
  | "rate_limited"
  | "invalid_input"
  | "audit_unavailable"
  | "failed";

export interface FieldIssue {
  field: string;
  message: string;
}

/** A refused mutation; `Code` adds a mutation's own codes to the shared ones. */
export interface Refusal<Code extends string = RefusalCode> {
  ok: false;
  outcome: "refused";
  code: Code;
  message: string;
  /** The same words as `message`, under the key every API error response carries. */
  error: string;
  /** Audit entry of the refusal, when one was written. */
  auditId?: string;
  issues?: FieldIssue[];
  /** For reauth_required: where to sign in again and come back. */
  reauthUrl?: string;
  retryAfterSeconds?: number;
}

/** HTTP status for each refusal, so scripts and tests can tell them apart without parsing words. */
export const REFUSAL_STATUS: Record<RefusalCode, number> = {
  not_signed_in: 401,
  forbidden: 403,
  reauth_required: 403,
  idp_unavailable: 503,
  cross_origin: 403,
  rate_limited: 429,
  invalid_input: 400,
  audit_unavailable: 503,
  failed: 500,
};

/** How recent a sign-in every audited mutation asks for (an older one is sent to sign in again). */
export const MUTATION_MAX_AUTH_AGE_MS = 15 * 60_000;
