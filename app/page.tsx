import { OverviewClient } from "@/components/overview/overview-client";
import { ParamProblemNotice } from "@/components/locks/read-notices";
import { type PageSearchParams, startSearchPageRead } from "@/components/page-read";
import { getOverviewFromSearch } from "@/lib/console/overview/get-overview";
import { listLeasesFromSearch } from "@/lib/console/leases/list-leases";
import { stuckTileQuery } from "@/lib/console/shared/links";

const single = (value: string | string[] | undefined): string | null => (typeof value === "string" && value !== "" ? value : null);

export default async function OverviewPage({ searchParams }: { searchParams: Promise<PageSearchParams> }) {
  const read = await startSearchPageRead("leases:read", searchParams);
  if (!read.ok) return read.notice;
  const { scope, params, signal } = read;
  const [result, stuck] = await Promise.all([
    getOverviewFromSearch(params, { scope, signal }),
    // The "overdue / lapsed now" tile: the stuck list, narrowed as the overview is (a bad store or prefix is the overview's to report).
    listLeasesFromSearch(stuckTileQuery(single(params.store), single(params.prefix)), { scope, signal }).catch(() => null),
  ]);
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/" what="the overview" />;
  return <OverviewClient search={read.search} initialData={result.view} initialStuck={stuck?.ok ? stuck.view : null} />;
}
