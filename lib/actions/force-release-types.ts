/**
 * What the force-release routes answer, and the limits the dialogs and the routes
 * share. Client-safe and dependency-free (the zod schemas are in
 * force-release-schema.ts, server side).
 *
 * Answers are typed results, never bare error strings: `code` says what happened,
 * `message` says it in words for the person at the keyboard.
 */

export const MIN_REASON_CHARS = 10;
export const MAX_REASON_CHARS = 500;
/** The bulk dialog lists, and the server accepts, at most this many leases. */
export const MAX_BULK_LEASES = 100;
/** A force-release needs a sign-in at most this old (re-authentication otherwise). */
export const FORCE_RELEASE_MAX_AUTH_AGE_MS = 15 * 60_000;

/** The holder as the lease page showed it, or the one found instead. */
export interface HolderView {
  leaseId: string;
  owner: string;
  task: string;
  fencingToken: string;
  expiresAt?: string;
}

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

export type ForceReleaseResult =
  | { ok: true; outcome: "released"; store: string; resource: string; auditId: string; released: Omit<HolderView, "leaseId" | "expiresAt"> & { leaseId: string } }
  | { ok: false; outcome: "lease_changed"; store: string; resource: string; auditId: string; current: HolderView | null; message: string }
  | {
      ok: false;
      outcome: "refused";
      code: RefusalCode;
      message: string;
      /** The same words as `message`, under the key every API error response carries. */
      error: string;
      /** Audit entry of the refusal, when one was written. */
      auditId?: string;
      issues?: FieldIssue[];
      /** For reauth_required: where to sign in again and come back. */
      reauthUrl?: string;
      retryAfterSeconds?: number;
    };

/** Per-lease outcome of a bulk release (same shape as one force-release, plus which lease). */
export type BulkLeaseOutcome = { store: string; resource: string; leaseId: string; result: ForceReleaseResult };

export type BulkReleaseResult =
  | { ok: true; outcome: "done"; results: BulkLeaseOutcome[] }
  | Extract<ForceReleaseResult, { outcome: "refused" }>;

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

/** `/audit` filtered to one lease's entries, with the given entry marked: the link the dialog shows afterwards. */
export function auditEntryHref(entry: { auditId: string; store: string; resource: string }): string {
  return `/audit?${new URLSearchParams({ store: entry.store, resource: entry.resource, entry: entry.auditId })}#audit-${entry.auditId}`;
}
