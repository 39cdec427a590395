/** The audit log's actions and outcomes: plain data, safe to import in the browser. */

/** What an audit entry is about: a force-release, or a change to the lock API's tokens. */
export const AUDIT_ACTIONS = ["force_release", "token_create", "token_revoke"] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Outcomes an audit entry can record (lib/audit writes them). */
export const AUDIT_OUTCOMES = [
  "requested",
  "released",
  "lease_changed",
  "denied_role",
  "reauth_required",
  "rate_limited",
  "invalid_input",
  "failed",
  // Token changes: a token was created or revoked, or the token to revoke was not live.
  "created",
  "revoked",
  "not_found",
] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];
/** The outcomes a force-release entry can have (metrics count only these). */
export const FORCE_RELEASE_OUTCOMES = ["requested", "released", "lease_changed", "denied_role", "reauth_required", "rate_limited", "invalid_input", "failed"] as const satisfies readonly AuditOutcome[];
