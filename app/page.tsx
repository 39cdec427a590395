import { OverviewClient } from "@/components/overview/overview-client";
import { ParamProblemNotice } from "@/components/locks/read-notices";
import { requirePermission, requireSession, scopeFor } from "@/lib/auth/session";
import { getOverviewFromSearch } from "@/lib/console/get-overview";
import { toSearchString } from "@/lib/console/links";
import { pageReadSignal } from "@/lib/console/page-signal";

type SearchParams = Record<string, string | string[] | undefined>;

export default async function OverviewPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const session = await requireSession();
  requirePermission(session, "leases:read");
  const params = await searchParams;
  const result = await getOverviewFromSearch(params, { scope: scopeFor(session, "leases:read"), signal: pageReadSignal() });
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/" what="the overview" />;
  return <OverviewClient search={toSearchString(params)} initialData={result.view} />;
}
