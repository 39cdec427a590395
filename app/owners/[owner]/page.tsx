import type { Metadata } from "next";
import { ParamProblemNotice, ReadLimitNotice } from "@/components/locks/read-notices";
import { OwnerClient } from "@/components/owners/owner-client";
import { requirePermission, requireSession, scopeFor } from "@/lib/auth/session";
import { takeRead } from "@/lib/console/api-response";
import { getOwnerFromRoute } from "@/lib/console/get-owner";
import { toSearchString } from "@/lib/console/links";
import { pageReadSignal } from "@/lib/console/page-signal";

export const metadata: Metadata = { title: "Owner" };

type SearchParams = Record<string, string | string[] | undefined>;

export default async function OwnerPage({ params, searchParams }: { params: Promise<{ owner: string }>; searchParams: Promise<SearchParams> }) {
  const session = await requireSession();
  requirePermission(session, "leases:read");
  // Rendering reads the stores: it counts against the user's read rate like the /api reads.
  const limited = takeRead(session);
  if (limited) return <ReadLimitNotice retryAfterSeconds={limited.retryAfterSeconds} />;
  const [{ owner }, search] = await Promise.all([params, searchParams]);
  const result = await getOwnerFromRoute(owner, search, { scope: scopeFor(session, "leases:read"), signal: pageReadSignal() });
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/locks" what="this owner" />;
  return <OwnerClient search={toSearchString(search)} initialData={result.view} />;
}
