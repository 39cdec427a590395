import { StatusPill } from "@/components/ui/status-pill";
import type { Tone } from "@/components/ui/badge";
import type { LeaseState } from "@leasewatch/lease/model";

/** Colour AND words: the state reads the same without colour. */
export const LEASE_STATE_STYLE: Record<LeaseState, { tone: Tone; label: string; title: string }> = {
  held: { tone: "green", label: "held", title: "Held and renewed on time" },
  expiring: { tone: "amber", label: "expiring", title: "Less than a quarter of its TTL left" },
  overdue: { tone: "red", label: "overdue", title: "Not renewed for over 2/3 of its TTL: the holder missed a heartbeat (likely a zombie)" },
  lapsed: { tone: "neutral", label: "lapsed", title: "Its TTL ran out; the store no longer honours it and the expiry is not recorded yet (next sweep)" },
};

export function LeaseStatePill({ state }: { state: LeaseState }) {
  const style = LEASE_STATE_STYLE[state];
  return <StatusPill tone={style.tone} label={style.label} title={style.title} />;
}
