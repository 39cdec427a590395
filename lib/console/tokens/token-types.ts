/**
 * What the API token routes answer, and the limits the form and the routes
 * share. Client-safe and dependency-free (the zod schema is in
 * api-token-schema.ts, server side). Answers are typed results: `code` says what
 * happened, `message` says it in words.
 */
import { REFUSAL_STATUS, type Refusal, type RefusalCode } from "@/lib/console/shared/refusal-types";

export const API_TOKEN_ACTIONS = ["acquire", "renew", "release", "read", "report"] as const;
export type ApiTokenAction = (typeof API_TOKEN_ACTIONS)[number];

/** What each action lets a worker do, for the form. */
export const API_TOKEN_ACTION_HELP: Record<ApiTokenAction, string> = {
  acquire: "take leases",
  renew: "extend its leases",
  release: "end its leases",
  read: "list and read leases",
  report: "report fencing rejections",
};

/** Expiry choices offered, in days; the server accepts 1 to MAX_TOKEN_DAYS. */
export const TOKEN_EXPIRY_DAYS = [7, 30, 90, 180, 365] as const;
export const DEFAULT_TOKEN_DAYS = 90;
/** A credential that never has to be rotated is a credential nobody rotates. */
export const MAX_TOKEN_DAYS = 365;
export const MAX_TOKEN_PREFIXES = 32;

export type ApiTokenState = "live" | "expired" | "revoked";

/** A token as the console shows it: never the secret, never its hash. */
export interface ApiTokenView {
  id: string;
  name: string;
  prefixes: string[];
  stores: string[];
  actions: string[];
  ratePerSec: number;
  maxConcurrent: number;
  createdAt: string;
  createdBy: string;
  expiresAt: string;
  revokedAt: string | null;
  state: ApiTokenState;
}

export type TokenRefusalCode = RefusalCode | "name_taken" | "not_found";

export type TokenRefusal = Refusal<TokenRefusalCode>;

export type CreateTokenResult =
  | {
      ok: true;
      outcome: "created";
      /** The bearer token in clear: in this answer only, never again. */
      secret: string;
      token: ApiTokenView;
      auditId: string;
    }
  | TokenRefusal;

export type RevokeTokenResult = { ok: true; outcome: "revoked"; token: ApiTokenView; auditId: string } | TokenRefusal;

export const TOKEN_REFUSAL_STATUS: Record<TokenRefusalCode, number> = { ...REFUSAL_STATUS, name_taken: 409, not_found: 404 };
