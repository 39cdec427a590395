import type { Metadata } from "next";
import { LeasesClient } from "@/components/locks/leases-client";
import { ParamProblemNotice } from "@/components/locks/read-notices";
import { canSession, requirePermission, requireSession } from "@/lib/auth/session";
import { toSearchString } from "@/lib/console/links";
import { listLeasesFromSearch } from "@/lib/console/list-leases";

export const metadata: Metadata = { title: "Leases" };

type SearchParams = Record<string, string | string[] | undefined>;

export default async function LeasesPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const session = await requireSession();
  requirePermission(session, "leases:read");
  const params = await searchParams;
  const result = await listLeasesFromSearch(params);
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/locks" what="leases" />;
  // Display only: the bulk release route re-checks the role with the IdP itself.
  const access = canSession(session, "leases:force_release")
    ? ({ canForceRelease: true } as const)
    : ({ canForceRelease: false, reason: "Force release needs the operator role." } as const);
  return <LeasesClient search={toSearchString(params)} initialData={result.view} access={access} />;
}
