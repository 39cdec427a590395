"use client";
import type { ObservedReleaseResult } from "@/lib/console/observed/observed-release-types";
import type { TObservedReleaseForm } from "@/lib/observed/release-form";
import { auditKeys } from "@/lib/console/audit/keys";
import { postMutation, usePostMutation } from "@/lib/console/shared/post-mutation";
import { RELEASE_UNSENT } from "@/lib/console/shared/post-mutation";
import { observedKeys } from "./observed-query";

export function postObservedRelease(input: TObservedReleaseForm): Promise<ObservedReleaseResult> {
  return postMutation<ObservedReleaseResult>("/api/observed/release", input, RELEASE_UNSENT);
}

export function useObservedReleaseMutation() {
  return usePostMutation(postObservedRelease, [observedKeys.all, auditKeys.all]);
}
