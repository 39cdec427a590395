"use client";
import type { CreateTokenResult, RevokeTokenResult } from "@/lib/console/tokens/token-types";
import { auditKeys } from "@/lib/console/audit/keys";
import { postMutation, usePostMutation } from "@/lib/console/shared/post-mutation";

/** The create form as sent; the server validates it (zod) and takes the creator from the session. */
export interface CreateTokenInput {
  name: string;
  prefixes: string[];
  stores: string[];
  actions: string[];
  expiresInDays: number;
}

const TOKEN_UNSENT = "The console could not be reached; nothing was changed.";

export function useCreateTokenMutation() {
  return usePostMutation((input: CreateTokenInput) => postMutation<CreateTokenResult>("/api/tokens", input, TOKEN_UNSENT), [auditKeys.all]);
}

export function useRevokeTokenMutation() {
  return usePostMutation((input: { id: string }) => postMutation<RevokeTokenResult>("/api/tokens/revoke", input, TOKEN_UNSENT), [auditKeys.all]);
}
