import type { Metadata } from "next";
import { AdviceClient } from "@/components/advice/advice-client";
import { ParamProblemNotice } from "@/components/locks/read-notices";
import { type PageSearchParams, startSearchPageRead } from "@/components/page-read";
import { getTtlAdviceFromSearch } from "@/lib/console/advice/get-ttl-advice";

export const metadata: Metadata = { title: "TTL advice" };

export default async function AdvicePage({ searchParams }: { searchParams: Promise<PageSearchParams> }) {
  const read = await startSearchPageRead("leases:read", searchParams);
  if (!read.ok) return read.notice;
  const result = await getTtlAdviceFromSearch(read.params, { scope: read.scope, signal: read.signal });
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/advice" what="TTL advice" />;
  return <AdviceClient search={read.search} initialData={result.view} />;
}
