"use client";
import Link from "next/link";
import { formatNumber } from "@/lib/console/shared/format";
import { buildQuery, stuckTileQuery } from "@/lib/console/shared/links";
import { useLeasesQuery } from "@/lib/console/leases/leases-query";
import { stuckCounts } from "@/lib/console/overview/stuck-counts";
import type { LeasesView } from "@/lib/console/shared/views";
import { cx } from "@/components/ui/cx";
import { useRefreshChoice } from "@/components/ui/live-refresh";

/**
 * "Overdue / lapsed now": the leases whose holder stopped renewing, counted per store, each
 * count a link to the list sorted by how long overdue. Read now, not over the window.
 */
export function StuckLeasesTile({ store, prefix, initialData }: { store: string | null; prefix: string | null; initialData: LeasesView | null }) {
  const { intervalMs } = useRefreshChoice();
  const query = useLeasesQuery(new URLSearchParams(stuckTileQuery(store, prefix)).toString(), initialData ?? undefined, { intervalMs });
  const view = query.data ?? initialData;
  const perStore = view ? stuckCounts(view) : [];
  const total = perStore.reduce((sum, s) => sum + (s.count ?? 0), 0);
  const isCapped = perStore.some((s) => s.isCapped);
  const isUnread = view === null || perStore.some((s) => s.count === null);
  const value = view === null ? "—" : `${formatNumber(total)}${isCapped ? "+" : ""}`;
  const isBad = total > 0;
  const listHref = (only: string | null) => `/locks${buildQuery({ state: "stuck", store: only, prefix })}`;
  return (
    <div className="relative rounded-lg border border-zinc-200 bg-white px-3 py-2.5 dark:border-zinc-800 dark:bg-zinc-900/40" data-testid="stuck-tile">
      <dt className="text-xs font-medium text-zinc-600 dark:text-zinc-400">Overdue / lapsed now</dt>
      <dd className={cx("mt-1 text-2xl font-semibold tabular-nums tracking-tight", isBad && "text-red-700 dark:text-red-300")}>
        <Link href={listHref(store)} aria-label={`Overdue / lapsed now: ${value}${isBad ? ", needs attention" : ""}`} className="rounded">
          {value}
        </Link>
      </dd>
      <dd className="mt-0.5 text-xs text-zinc-600 dark:text-zinc-400">
        {view === null ? (
          // The page did not wait for this read (slow at volume): it is under way here.
          query.isError ? "could not be read" : "reading…"
        ) : perStore.length === 0 ? (
          "no store answered"
        ) : (
          <ul className="flex flex-wrap gap-x-2">
            {perStore.map((s) => (
              <li key={s.store}>
                {s.count === null ? (
                  <span>
                    <span className="font-mono">{s.store}</span>: not read
                  </span>
                ) : (
                  <Link
                    href={listHref(s.store)}
                    aria-label={`${s.store}: ${s.count}${s.isCapped ? "+" : ""} overdue or lapsed${s.isPartial ? " (the read stopped early: there may be more)" : ""}`}
                    title={s.isPartial ? "The read stopped at its bound before it had looked at every lease: there may be more" : undefined}
                    className="underline decoration-dotted underline-offset-4 hover:decoration-solid"
                  >
                    <span className="font-mono">{s.store}</span> {formatNumber(s.count)}
                    {s.isCapped ? "+" : ""}
                  </Link>
                )}
              </li>
            ))}
          </ul>
        )}
        {isUnread && perStore.length > 0 ? <span className="sr-only"> (a store could not be read, so the total leaves it out)</span> : null}
      </dd>
    </div>
  );
}
