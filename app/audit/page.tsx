import type { Metadata } from "next";
import { AuditClient } from "@/components/audit/audit-client";
import { ChainStateNotice } from "@/components/audit/chain-state";
import { ParamProblemNotice, ReadLimitNotice } from "@/components/locks/read-notices";
import { getChainStatus } from "@/lib/audit/context";
import type { ChainStatus } from "@/lib/audit/chain-status";
import { requirePermission, requireSession, scopeFor } from "@/lib/auth/session";
import { takeRead } from "@/lib/console/api-response";
import { toSearchString } from "@/lib/console/links";
import { listAuditFromSearch } from "@/lib/console/list-audit";

export const metadata: Metadata = { title: "Audit" };

type SearchParams = Record<string, string | string[] | undefined>;

export default async function AuditPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const session = await requireSession();
  requirePermission(session, "audit:read");
  // Rendering reads the stores: it counts against the user's read rate like the /api reads.
  const limited = takeRead(session);
  if (limited) return <ReadLimitNotice retryAfterSeconds={limited.retryAfterSeconds} />;
  const params = await searchParams;
  const scope = scopeFor(session, "audit:read");
  let result: Awaited<ReturnType<typeof listAuditFromSearch>>;
  // Verified incrementally and remembered (lib/audit/chain-status): usually no walk at all on this path.
  const chain = getChainStatus().catch((error: unknown): ChainStatus | null => {
    console.error("[audit] could not check the audit chain", error);
    return null;
  });
  try {
    result = await listAuditFromSearch(params, scope);
  } catch (error) {
    // The audit database is down or not configured: say so here; the rest of the console still works.
    console.error("[audit] could not read the audit log", error);
    return (
      <div role="alert" className="rounded-lg border border-red-300 bg-red-50 p-4 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
        <p className="font-semibold">The audit log could not be read.</p>
        <p className="mt-1">Its database did not answer. Force-releases are refused until it is back (nothing is released without an audit entry).</p>
      </div>
    );
  }
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/audit" what="the audit log" />;
  return (
    <div className="space-y-3">
      <ChainStateNotice status={await chain} showIds={scope.kind === "all"} />
      <AuditClient search={toSearchString(params)} initialData={result.view} />
    </div>
  );
}
