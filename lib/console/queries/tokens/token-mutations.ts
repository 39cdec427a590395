"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { CreateTokenResult, RevokeTokenResult, TokenRefusal } from "@/lib/actions/api-token-types";
import { auditKeys } from "../audit/keys";

/** The create form as sent; the server validates it (zod) and takes the creator from the session. */
export interface CreateTokenInput {
  name: string;
  prefixes: string[];
  stores: string[];
  actions: string[];
  expiresInDays: number;
}

function failedHere(message: string): TokenRefusal {
  return { ok: false, outcome: "refused", code: "failed", message, error: message };
}

/** Every answer, refusals included, is a typed result; anything else becomes a "failed" one so the form always has something to say. */
async function postTokenChange<T>(path: string, body: unknown): Promise<T | TokenRefusal> {
  let response: Response;
  try {
    response = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
      cache: "no-store",
    });
  } catch {
    return failedHere("The console could not be reached; nothing was changed.");
  }
  const parsed = (await response.json().catch(() => null)) as T | null;
  if (parsed && typeof parsed === "object" && "outcome" in parsed) return parsed;
  return failedHere(`The console answered HTTP ${response.status} without a result.`);
}

export function useCreateTokenMutation() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: CreateTokenInput) => postTokenChange<CreateTokenResult>("/api/tokens", input),
    onSettled: () => queryClient.invalidateQueries({ queryKey: auditKeys.all }),
  });
}

export function useRevokeTokenMutation() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: { id: string }) => postTokenChange<RevokeTokenResult>("/api/tokens/revoke", input),
    onSettled: () => queryClient.invalidateQueries({ queryKey: auditKeys.all }),
  });
}
