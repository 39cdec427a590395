/**
 * What the force-release routes answer, and the limits the dialogs and the routes
 * share. Client-safe and dependency-free (the zod schemas are in
 * force-release-schema.ts, server side).
 *
 * Answers are typed results, never bare error strings: `code` says what happened,
 * `message` says it in words for the person at the keyboard.
 */
import type { Refusal } from "@/lib/console/shared/refusal-types";

export const MIN_REASON_CHARS = 10;
export const MAX_REASON_CHARS = 500;
/** The bulk dialog lists, and the server accepts, at most this many leases. */
export const MAX_BULK_LEASES = 100;

/** The holder as the lease page showed it, or the one found instead. */
export interface HolderView {
  leaseId: string;
  owner: string;
  task: string;
  fencingToken: string;
  expiresAt?: string;
}

export type ForceReleaseResult =
  | { ok: true; outcome: "released"; store: string; resource: string; auditId: string; released: Omit<HolderView, "leaseId" | "expiresAt"> & { leaseId: string } }
  | { ok: false; outcome: "lease_changed"; store: string; resource: string; auditId: string; current: HolderView | null; message: string }
  | Refusal;

/** Per-lease outcome of a bulk release (same shape as one force-release, plus which lease). */
export type BulkLeaseOutcome = { store: string; resource: string; leaseId: string; result: ForceReleaseResult };

export type BulkReleaseResult =
  | { ok: true; outcome: "done"; results: BulkLeaseOutcome[] }
  | Refusal;

/** `/audit` filtered to one lease's entries, with the given entry marked: the link the dialog shows afterwards. */
export function auditEntryHref(entry: { auditId: string; store: string; resource: string }): string {
  return `/audit?${new URLSearchParams({ store: entry.store, resource: entry.resource, entry: entry.auditId })}#audit-${entry.auditId}`;
}
