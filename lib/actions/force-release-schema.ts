/**
 * What the force-release form sends and what the server answers, shared by the
 * route handlers (app/api/force-release) and the dialogs. Client-safe: zod only.
 *
 * Answers are typed results, never bare error strings: `code` says what happened,
 * `message` says it in words for the person at the keyboard.
 */
import { z } from "zod";

export const MIN_REASON_CHARS = 10;
export const MAX_REASON_CHARS = 500;
/** The bulk dialog lists, and the server accepts, at most this many leases. */
export const MAX_BULK_LEASES = 100;
/** A force-release needs a sign-in at most this old (re-authentication otherwise). */
export const FORCE_RELEASE_MAX_AUTH_AGE_MS = 15 * 60_000;

const MAX_RESOURCE_BYTES = 512;
const NON_PRINTABLE = /[\u0000-\u001f\u007f-\u009f]/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STORE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/i;

const byteLength = (s: string) => new TextEncoder().encode(s).length;

const ZStoreName = z.string({ error: "store is required" }).regex(STORE_NAME, { error: "store must be a store name" });
const ZResourceName = z
  .string({ error: "resource is required" })
  .min(1, { error: "resource must not be empty" })
  .refine((s) => byteLength(s) <= MAX_RESOURCE_BYTES, { error: `resource must be at most ${MAX_RESOURCE_BYTES} bytes` })
  .refine((s) => !NON_PRINTABLE.test(s), { error: "resource must be printable text" });
const ZLeaseIdText = z.string({ error: "leaseId is required" }).regex(UUID, { error: "leaseId must be a lease id (a UUID)" });
export const ZReason = z
  .string({ error: "reason is required" })
  .trim()
  .min(MIN_REASON_CHARS, { error: `reason must be at least ${MIN_REASON_CHARS} characters` })
  .max(MAX_REASON_CHARS, { error: `reason must be at most ${MAX_REASON_CHARS} characters` })
  .refine((s) => !/[\u0000-\u0008\u000b-\u001f\u007f]/.test(s), { error: "reason must be printable text" });

/** One lease: the form shows it, the reason says why, `confirm` is the resource typed again. */
export const ZForceReleaseForm = z
  .strictObject({
    store: ZStoreName,
    resource: ZResourceName,
    leaseId: ZLeaseIdText,
    reason: ZReason,
    confirm: z.string({ error: "type the resource name to confirm" }),
  })
  .refine((f) => f.confirm === f.resource, { error: "the typed name does not match the resource", path: ["confirm"] });
export type TForceReleaseForm = z.infer<typeof ZForceReleaseForm>;

/** Every lapsed or overdue lease under a prefix: the exact leases the dialog listed, `confirm` is the prefix typed again. */
export const ZBulkReleaseForm = z
  .strictObject({
    prefix: ZResourceName,
    reason: ZReason,
    confirm: z.string({ error: "type the prefix to confirm" }),
    leases: z
      .array(z.strictObject({ store: ZStoreName, resource: ZResourceName, leaseId: ZLeaseIdText }))
      .min(1, { error: "no lease to release" })
      .max(MAX_BULK_LEASES, { error: `at most ${MAX_BULK_LEASES} leases at once` }),
  })
  .refine((f) => f.confirm === f.prefix, { error: "the typed prefix does not match", path: ["confirm"] })
  .refine((f) => f.leases.every((l) => l.resource.startsWith(f.prefix)), { error: "every lease must be under the prefix", path: ["leases"] });
export type TBulkReleaseForm = z.infer<typeof ZBulkReleaseForm>;

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
