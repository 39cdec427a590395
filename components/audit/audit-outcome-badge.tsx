import { StatusPill } from "@/components/ui/status-pill";
import type { Tone } from "@/components/ui/badge";

/** Colour AND words for an audit outcome. */
const OUTCOME_STYLE: Record<string, { tone: Tone; label: string; title: string }> = {
  requested: { tone: "blue", label: "requested", title: "Written before the release; its outcome follows in another entry" },
  released: { tone: "green", label: "released", title: "The lease was force-released" },
  lease_changed: { tone: "amber", label: "lease changed", title: "Another lease held the resource (or none did): nothing was released" },
  denied_role: { tone: "red", label: "denied: role", title: "The user lacked the operator role" },
  reauth_required: { tone: "amber", label: "re-auth needed", title: "The sign-in was too old for a force-release" },
  rate_limited: { tone: "amber", label: "rate limited", title: "Too many force-releases in a short time" },
  invalid_input: { tone: "red", label: "invalid input", title: "The request was malformed or cross-origin" },
  failed: { tone: "red", label: "failed", title: "The store could not be reached or refused" },
};

export function AuditOutcomeBadge({ outcome }: { outcome: string }) {
  const style = OUTCOME_STYLE[outcome] ?? { tone: "neutral" as const, label: outcome, title: outcome };
  return <StatusPill tone={style.tone} label={style.label} title={style.title} />;
}
