import { OverviewClient } from "@/components/overview/overview-client";
import { ParamProblemNotice, ReadLimitNotice } from "@/components/locks/read-notices";
import { requirePermission, requireSession, scopeFor } from "@/lib/auth/session";
import { takeRead } from "@/lib/console/api-response";
import { getOverviewFromSearch } from "@/lib/console/get-overview";
import { toSearchString } from "@/lib/console/links";
import { pageReadSignal } from "@/lib/console/page-signal";

type SearchParams = Record<string, string | string[] | undefined>;

export default async function OverviewPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const session = await requireSession();
  requirePermission(session, "leases:read");
  // Rendering reads the stores: it counts against the user's read rate like the /api reads.
  const limited = takeRead(session);
  if (limited) return <ReadLimitNotice retryAfterSeconds={limited.retryAfterSeconds} />;
  const params = await searchParams;
  const result = await getOverviewFromSearch(params, { scope: scopeFor(session, "leases:read"), signal: pageReadSignal() });
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/" what="the overview" />;
  return <OverviewClient search={toSearchString(params)} initialData={result.view} />;
}
