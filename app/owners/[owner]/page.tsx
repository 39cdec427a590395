import type { Metadata } from "next";
import { ParamProblemNotice } from "@/components/locks/read-notices";
import { OwnerClient } from "@/components/owners/owner-client";
import { type PageSearchParams, startSearchPageRead } from "@/components/page-read";
import { getOwnerFromRoute } from "@/lib/console/owners/get-owner";

export const metadata: Metadata = { title: "Owner" };

export default async function OwnerPage({ params, searchParams }: { params: Promise<{ owner: string }>; searchParams: Promise<PageSearchParams> }) {
  const read = await startSearchPageRead("leases:read", searchParams);
  if (!read.ok) return read.notice;
  const { owner } = await params;
  const result = await getOwnerFromRoute(owner, read.params, { scope: read.scope, signal: read.signal });
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/locks" what="this owner" />;
  return <OwnerClient search={read.search} initialData={result.view} />;
}
