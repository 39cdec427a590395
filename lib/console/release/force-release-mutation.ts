"use client";
import type { BulkReleaseResult, ForceReleaseResult } from "@/lib/console/release/force-release-types";
import { auditKeys } from "@/lib/console/audit/keys";
import { leaseKeys } from "@/lib/console/leases/keys";
import { postMutation, RELEASE_UNSENT, usePostMutation } from "@/lib/console/shared/post-mutation";

/** The form as typed; the server validates it (zod) and takes the actor from the session. */
export interface ForceReleaseInput {
  store: string;
  resource: string;
  leaseId: string;
  reason: string;
  confirm: string;
}

export interface BulkReleaseInput {
  prefix: string;
  reason: string;
  confirm: string;
  leases: Array<{ store: string; resource: string; leaseId: string }>;
}


export function postForceRelease(input: ForceReleaseInput): Promise<ForceReleaseResult> {
  return postMutation<ForceReleaseResult>("/api/force-release", input, RELEASE_UNSENT);
}

export function postBulkRelease(input: BulkReleaseInput): Promise<BulkReleaseResult> {
  return postMutation<BulkReleaseResult>("/api/force-release/bulk", input, RELEASE_UNSENT);
}

export function useForceReleaseMutation() {
  return usePostMutation(postForceRelease, [leaseKeys.all, auditKeys.all]);
}

export function useBulkReleaseMutation() {
  return usePostMutation(postBulkRelease, [leaseKeys.all, auditKeys.all]);
}
