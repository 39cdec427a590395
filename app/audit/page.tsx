import type { Metadata } from "next";
import { AuditClient } from "@/components/audit/audit-client";
import { ChainStateNotice } from "@/components/audit/chain-state";
import { ParamProblemNotice } from "@/components/locks/read-notices";
import { type PageSearchParams, startSearchPageRead } from "@/components/page-read";
import { getChainStatus } from "@/lib/audit/context";
import type { ChainStatus } from "@/lib/audit/chain-status";
import { listAuditFromSearch } from "@/lib/console/audit/list-audit";
import { getLogger } from "@/lib/log/logger";

export const metadata: Metadata = { title: "Audit" };

export default async function AuditPage({ searchParams }: { searchParams: Promise<PageSearchParams> }) {
  const read = await startSearchPageRead("audit:read", searchParams);
  if (!read.ok) return read.notice;
  const { scope, params } = read;
  let result: Awaited<ReturnType<typeof listAuditFromSearch>>;
  // Verified incrementally and remembered (lib/audit/chain-status): usually no walk at all on this path.
  const chain = getChainStatus().catch((error: unknown): ChainStatus | null => {
    getLogger("audit").error({ err: error }, "could not check the audit chain");
    return null;
  });
  try {
    result = await listAuditFromSearch(params, scope);
  } catch (error) {
    // The audit database is down or not configured: say so here; the rest of the console still works.
    getLogger("audit").error({ err: error }, "could not read the audit log");
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
      <AuditClient search={read.search} initialData={result.view} />
    </div>
  );
}
