import type { Metadata } from "next";
import { FacetSummary } from "@/components/facets/facet-summary";
import { LeasesClient } from "@/components/locks/leases-client";
import { PastLeases } from "@/components/past/past-leases";
import { ParamProblemNotice, ReadLimitNotice } from "@/components/locks/read-notices";
import { canSession, requirePermission, requireSession, scopeFor } from "@/lib/auth/session";
import { takeRead } from "@/lib/console/api-response";
import { toSearchString } from "@/lib/console/links";
import { getLeaseFacetsFromSearch } from "@/lib/console/facets";
import { getPastLeasesFromSearch } from "@/lib/console/get-past-leases";
import { listLeasesFromSearch } from "@/lib/console/list-leases";
import { pageReadSignal } from "@/lib/console/page-signal";

export const metadata: Metadata = { title: "Leases" };

type SearchParams = Record<string, string | string[] | undefined>;

export default async function LeasesPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const session = await requireSession();
  requirePermission(session, "leases:read");
  // Rendering reads the stores: it counts against the user's read rate like the /api reads.
  const limited = takeRead(session);
  if (limited) return <ReadLimitNotice retryAfterSeconds={limited.retryAfterSeconds} />;
  const params = await searchParams;
  const scope = scopeFor(session, "leases:read");
  // `at=`: the past view (what was held then), not the live list.
  if (params.at !== undefined && params.at !== "") {
    const past = await getPastLeasesFromSearch(params, { scope, signal: pageReadSignal() });
    if (!past.ok) return <ParamProblemNotice problem={past.problem} resetHref="/locks" what="the past view" />;
    return <PastLeases view={past.view} search={toSearchString(params)} />;
  }
  const signal = pageReadSignal();
  const [result, facets] = await Promise.all([listLeasesFromSearch(params, { scope, signal }), getLeaseFacetsFromSearch(params, { scope, signal })]);
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/locks" what="leases" />;
  // Display only: the bulk release route re-checks the role with the IdP itself.
  const access = canSession(session, "leases:force_release")
    ? ({ canForceRelease: true } as const)
    : ({ canForceRelease: false, reason: "Force release needs the operator role." } as const);
  const search = toSearchString(params);
  const summary = <FacetSummary view="leases" search={search} initialData={facets.ok ? facets.view : undefined} />;
  return <LeasesClient search={search} initialData={result.view} access={access} releaseScope={scopeFor(session, "leases:force_release")} summary={summary} />;
}
