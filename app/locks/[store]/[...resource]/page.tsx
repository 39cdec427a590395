import type { Metadata } from "next";
import { LeaseDetailClient } from "@/components/locks/lease-detail-client";
import { ParamProblemNotice } from "@/components/locks/read-notices";
import { canSession, requirePermission, requireSession } from "@/lib/auth/session";
import { getLeaseDetailFromRoute } from "@/lib/console/get-lease-detail";

export const metadata: Metadata = { title: "Lease" };

type RouteParams = { store: string; resource: string[] };

export default async function LeasePage({ params }: { params: Promise<RouteParams> }) {
  const session = await requireSession();
  requirePermission(session, "leases:read");
  const route = await params;
  const result = await getLeaseDetailFromRoute(route);
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/locks" what="this lease" />;
  const outcome = result.view;
  const resource = outcome.ok ? outcome.data.resource : route.resource.map((s) => safeDecode(s)).join("/");
  // Display only: the force-release route re-checks the role with the IdP itself.
  const access = canSession(session, "leases:force_release")
    ? ({ canForceRelease: true } as const)
    : ({ canForceRelease: false, reason: "Force release needs the operator role." } as const);
  return <LeaseDetailClient store={outcome.store} resource={resource} initialData={outcome} access={access} />;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
