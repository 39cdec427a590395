"use client";
import { useMutation, useQueryClient, type QueryKey } from "@tanstack/react-query";
import type { Refusal } from "@/lib/console/shared/refusal-types";

/** A "failed" refusal made in the browser, when the server gave none. */
function failedHere(message: string): Refusal {
  return { ok: false, outcome: "refused", code: "failed", message, error: message };
}

/**
 * POSTs to a console mutation route. Every answer, refusals included, is a typed result in
 * JSON; anything else (a proxy's HTML error page, a dropped connection) becomes a "failed"
 * refusal so the form always has something to say. `unsent`: what that refusal says when the
 * request never reached the console.
 */
export async function postMutation<T>(path: string, body: unknown, unsent: string): Promise<T | Refusal> {
  let response: Response;
  try {
    response = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
      cache: "no-store",
    });
  } catch {
    return failedHere(unsent);
  }
  const parsed = (await response.json().catch(() => null)) as T | null;
  if (parsed && typeof parsed === "object" && "outcome" in parsed) return parsed;
  return failedHere(`The console answered HTTP ${response.status} without a result.`);
}

/** A mutation that POSTs with postMutation and, once settled, refetches every query under `invalidates`. */
export function usePostMutation<Input, Result>(post: (input: Input) => Promise<Result>, invalidates: readonly QueryKey[]) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: post,
    onSettled: () => Promise.all(invalidates.map((queryKey) => queryClient.invalidateQueries({ queryKey }))),
  });
}

/** What a release's failed answer says when the request never reached the console. */
export const RELEASE_UNSENT = "The console could not be reached; nothing was sent to the store.";
