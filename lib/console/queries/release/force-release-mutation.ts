"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { BulkReleaseResult, ForceReleaseResult } from "@/lib/actions/force-release-types";
import { auditKeys } from "../audit/keys";
import { leaseKeys } from "../leases/keys";

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

/**
 * POSTs to a force-release route. Every answer, refusals included, is a typed
 * result in JSON; anything else (a proxy's HTML error page, a dropped connection)
 * becomes a "failed" result so the dialog always has something to say.
 */
/** A "failed" result made in the browser, when the server gave none. */
function failedHere(message: string): Extract<ForceReleaseResult, { outcome: "refused" }> {
  return { ok: false, outcome: "refused", code: "failed", message, error: message };
}

async function postRelease<T>(path: string, body: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
      cache: "no-store",
    });
  } catch {
    return failedHere("The console could not be reached; nothing was sent to the store.") as T;
  }
  const parsed = (await response.json().catch(() => null)) as T | null;
  if (parsed && typeof parsed === "object" && "outcome" in parsed) return parsed;
  return failedHere(`The console answered HTTP ${response.status} without a result.`) as T;
}

export function postForceRelease(input: ForceReleaseInput): Promise<ForceReleaseResult> {
  return postRelease<ForceReleaseResult>("/api/force-release", input);
}

export function postBulkRelease(input: BulkReleaseInput): Promise<BulkReleaseResult> {
  return postRelease<BulkReleaseResult>("/api/force-release/bulk", input);
}

export function useForceReleaseMutation() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: postForceRelease,
    onSettled: () => Promise.all([queryClient.invalidateQueries({ queryKey: leaseKeys.all }), queryClient.invalidateQueries({ queryKey: auditKeys.all })]),
  });
}

export function useBulkReleaseMutation() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: postBulkRelease,
    onSettled: () => Promise.all([queryClient.invalidateQueries({ queryKey: leaseKeys.all }), queryClient.invalidateQueries({ queryKey: auditKeys.all })]),
  });
}
