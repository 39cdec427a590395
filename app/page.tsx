import { OverviewClient } from "@/components/overview/overview-client";
import { ParamProblemNotice } from "@/components/locks/read-notices";
import { type PageSearchParams, startSearchPageRead } from "@/components/page-read";
import { getOverviewFromSearch } from "@/lib/console/overview/get-overview";
import { listLeasesFromSearch } from "@/lib/console/leases/list-leases";
import { stuckTileQuery } from "@/lib/console/shared/links";
import { withTimeout } from "@/lib/server/timeout";

/**
 * How long the page waits for the stuck tile's read once the overview's own is done. At volume a
 * Redis store has no index for overdue leases and walks its expiry index (up to its read budget,
 * about a second at a million leases): the overview is not held back for it.
 */
const STUCK_TILE_GRACE_MS = 150;

const single = (value: string | string[] | undefined): string | null => (typeof value === "string" && value !== "" ? value : null);

export default async function OverviewPage({ searchParams }: { searchParams: Promise<PageSearchParams> }) {
  const read = await startSearchPageRead("leases:read", searchParams);
  if (!read.ok) return read.notice;
  const { scope, params, signal } = read;
  // The "overdue / lapsed now" tile: the stuck list, narrowed as the overview is (a bad store or prefix is the overview's to report).
  const stuckStop = new AbortController();
  const stuckRead = listLeasesFromSearch(stuckTileQuery(single(params.store), single(params.prefix)), {
    scope,
    signal: signal ? AbortSignal.any([signal, stuckStop.signal]) : stuckStop.signal,
  }).catch(() => null);
  const result = await getOverviewFromSearch(params, { scope, signal });
  const stuck = await withTimeout(stuckRead, STUCK_TILE_GRACE_MS, "the stuck tile").catch(() => null);
  // Not ready: the tile reads it in the browser, so this read stops rather than run on for nobody.
  if (stuck === null) stuckStop.abort();
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/" what="the overview" />;
  return <OverviewClient search={read.search} initialData={result.view} initialStuck={stuck?.ok ? stuck.view : null} />;
}
