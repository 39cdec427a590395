"use client";
import Link from "next/link";
import { Skeleton } from "@/components/ui/skeleton";
import { StatusPill } from "@/components/ui/status-pill";
import { formatNumber, formatPercent } from "@/lib/console/shared/format";
import { adviceWindowWithin } from "@/lib/console/advice/advice-windows";
import { buildQuery } from "@/lib/console/shared/links";
import { useRenewalSlackQuery } from "@/lib/console/advice/advice-query";
import { SlackHistogram } from "./slack-histogram";

/**
 * Renewal slack over a window, for the overview and the lease page: how much of
 * the TTL renewals found left, and the close calls. `search` is the page's own
 * query string (store, window, from, to are used) or one built for a prefix.
 */
export function RenewalSlackPanel({ search, prefix, className }: { search: string; prefix?: string; className?: string }) {
  const params = new URLSearchParams(search.startsWith("?") ? search.slice(1) : search);
  // Slack is kept for 7 days of hours: a longer page window shows its last 7 days, and says so.
  const { isClamped, ...window } = adviceWindowWithin({
    window: params.get("window") ?? undefined,
    from: params.get("from") ?? undefined,
    to: params.get("to") ?? undefined,
  });
  const own = buildQuery({ store: params.get("store") ?? undefined, ...window, prefix: prefix ?? params.get("prefix") ?? undefined });
  const query = useRenewalSlackQuery(own);
  const view = query.data;
  return (
    <section aria-labelledby="renewal-slack" className={className ?? "rounded-lg border border-zinc-200 p-4 dark:border-zinc-800"}>
      <div className="mb-2 flex flex-wrap items-baseline justify-between gap-2">
        <h2 id="renewal-slack" className="text-sm font-semibold">
          Renewal slack{prefix ? <span className="font-normal text-zinc-500 dark:text-zinc-400"> · renewals under <span className="font-mono">{prefix}</span></span> : null}
          {isClamped ? <span className="font-normal text-zinc-500 dark:text-zinc-400"> · last 7 days of this window (the most slack covers)</span> : null}
        </h2>
        <Link href={`/advice${own}`} className="text-xs font-medium underline underline-offset-2">
          TTL advice
        </Link>
      </div>
      {query.isError ? (
        <p role="status" className="text-sm text-amber-800 dark:text-amber-200">Renewal slack could not be read: {query.error.message}</p>
      ) : !view ? (
        <Skeleton className="h-24 w-full" />
      ) : view.renewals === 0 ? (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">No renewals in this window. Holders that renew (heartbeat at ttl/3) show here.</p>
      ) : (
        <div className="space-y-2">
          <p className="flex flex-wrap items-center gap-2 text-sm">
            <span>{formatNumber(view.renewals)} renewals</span>
            <StatusPill
              tone={view.closeCalls > 0 ? "amber" : "green"}
              label={`${formatNumber(view.closeCalls)} close calls`}
              detail={formatPercent(view.closeCalls / view.renewals)}
              title="Renewals that arrived with under 20 % of the TTL left: one pause away from losing the lease"
            />
          </p>
          <SlackHistogram histogram={view.histogram} closeCalls={view.closeCalls} renewals={view.renewals} />
        </div>
      )}
    </section>
  );
}
