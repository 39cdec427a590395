import { StatusPill } from "@/components/ui/status-pill";
import type { Tone } from "@/components/ui/badge";

/** Colour AND words for an audit outcome. */
const OUTCOME_STYLE: Record<string, { tone: Tone; label: string; title: string }> = {
  requested: { tone: "blue", label: "requested", title: "Written before the release; its outcome follows in another entry" },
  released: { tone: "green", label: "released", title: "The lease was force-released" },
  lease_changed: { tone: "amber", label: "lease changed", title: "Another lease held the resource (or none did): nothing was released" },
  denied_role: { tone: "red", label: "denied: role", title: "The user lacked the operator role" },
  reauth_required: { tone: "amber", label: "re-auth needed", title: "The sign-in was too old for this action" },
  rate_limited: { tone: "amber", label: "rate limited", title: "Too many attempts in a short time" },
  invalid_input: { tone: "red", label: "invalid input", title: "The request was malformed or cross-origin" },
  failed: { tone: "red", label: "failed", title: "The store could not be reached or refused" },
  created: { tone: "green", label: "created", title: "An API token was created (its secret is never recorded)" },
  revoked: { tone: "green", label: "revoked", title: "An API token was revoked" },
  not_found: { tone: "amber", label: "not found", title: "No live token had this id: nothing was revoked" },
};

export function AuditOutcomeBadge({ outcome }: { outcome: string }) {
  const style = OUTCOME_STYLE[outcome] ?? { tone: "neutral" as const, label: outcome, title: outcome };
  return <StatusPill tone={style.tone} label={style.label} title={style.title} />;
}

/** What an entry is about, in words. */
export const AUDIT_ACTION_LABELS: Record<string, string> = {
  force_release: "force release",
  token_create: "token create",
  token_revoke: "token revoke",
};
