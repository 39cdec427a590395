import type { Metadata } from "next";
import { AdviceClient } from "@/components/advice/advice-client";
import { ParamProblemNotice, ReadLimitNotice } from "@/components/locks/read-notices";
import { requirePermission, requireSession, scopeFor } from "@/lib/auth/session";
import { takeRead } from "@/lib/console/api-response";
import { getTtlAdviceFromSearch } from "@/lib/console/get-ttl-advice";
import { toSearchString } from "@/lib/console/links";
import { pageReadSignal } from "@/lib/console/page-signal";

export const metadata: Metadata = { title: "TTL advice" };

type SearchParams = Record<string, string | string[] | undefined>;

export default async function AdvicePage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const session = await requireSession();
  requirePermission(session, "leases:read");
  // Rendering reads the stores: it counts against the user's read rate like the /api reads.
  const limited = takeRead(session);
  if (limited) return <ReadLimitNotice retryAfterSeconds={limited.retryAfterSeconds} />;
  const params = await searchParams;
  const result = await getTtlAdviceFromSearch(params, { scope: scopeFor(session, "leases:read"), signal: pageReadSignal() });
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/advice" what="TTL advice" />;
  return <AdviceClient search={toSearchString(params)} initialData={result.view} />;
}
