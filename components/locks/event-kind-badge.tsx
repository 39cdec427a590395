import { Badge, type Tone } from "@/components/ui/badge";
import type { LeaseEventKind } from "@leasewatch/lease/model";

export const EVENT_KIND_STYLE: Record<LeaseEventKind, { tone: Tone; label: string }> = {
  acquired: { tone: "blue", label: "acquired" },
  released: { tone: "green", label: "released" },
  expired: { tone: "red", label: "expired" },
  force_released: { tone: "violet", label: "force-released" },
  contended: { tone: "amber", label: "contended" },
  renew_failed: { tone: "amber", label: "renew failed" },
  lost: { tone: "red", label: "lost" },
  fencing_rejected: { tone: "red", label: "fencing rejected" },
};

export function EventKindBadge({ kind }: { kind: LeaseEventKind }) {
  const style = EVENT_KIND_STYLE[kind];
  return <Badge tone={style.tone}>{style.label}</Badge>;
}
