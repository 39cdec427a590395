import type { Metadata } from "next";
import { AuditClient } from "@/components/audit/audit-client";
import { ParamProblemNotice } from "@/components/locks/read-notices";
import { requirePermission, requireSession } from "@/lib/auth/session";
import { toSearchString } from "@/lib/console/links";
import { listAuditFromSearch } from "@/lib/console/list-audit";

export const metadata: Metadata = { title: "Audit" };

type SearchParams = Record<string, string | string[] | undefined>;

export default async function AuditPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const session = await requireSession();
  requirePermission(session, "audit:read");
  const params = await searchParams;
  const result = await listAuditFromSearch(params);
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/audit" what="the audit log" />;
  return <AuditClient search={toSearchString(params)} initialData={result.view} />;
}
