import type { Metadata } from "next";
import { FacetSummary } from "@/components/facets/facet-summary";
import { LeasesClient } from "@/components/locks/leases-client";
import { PastLeases } from "@/components/past/past-leases";
import { ParamProblemNotice } from "@/components/locks/read-notices";
import { type PageSearchParams, startSearchPageRead } from "@/components/page-read";
import { canSession, scopeFor } from "@/lib/auth/session";
import { getLeaseFacetsFromSearch } from "@/lib/console/facets/facets";
import { getPastLeasesFromSearch } from "@/lib/console/past/get-past-leases";
import { listLeasesFromSearch } from "@/lib/console/leases/list-leases";

export const metadata: Metadata = { title: "Leases" };

export default async function LeasesPage({ searchParams }: { searchParams: Promise<PageSearchParams> }) {
  const read = await startSearchPageRead("leases:read", searchParams);
  if (!read.ok) return read.notice;
  const { session, scope, params, search, signal } = read;
  // `at=` stands in for now: who held what then (the past view), or with state=expired the
  // expiries of the window ending then (the list below, read as of `at`).
  if (params.at !== undefined && params.at !== "" && params.state !== "expired") {
    const past = await getPastLeasesFromSearch(params, { scope, signal });
    if (!past.ok) return <ParamProblemNotice problem={past.problem} resetHref="/locks" what="the past view" />;
    return <PastLeases view={past.view} search={search} />;
  }
  const [result, facets] = await Promise.all([listLeasesFromSearch(params, { scope, signal }), getLeaseFacetsFromSearch(params, { scope, signal })]);
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/locks" what="leases" />;
  // Display only: the bulk release route re-checks the role with the IdP itself.
  const access = canSession(session, "leases:force_release")
    ? ({ canForceRelease: true } as const)
    : ({ canForceRelease: false, reason: "Force release needs the operator role." } as const);
  const summary = <FacetSummary view="leases" search={search} initialData={facets.ok ? facets.view : undefined} />;
  return <LeasesClient search={search} initialData={result.view} access={access} releaseScope={scopeFor(session, "leases:force_release")} summary={summary} />;
}
