"use client";
import Link from "next/link";
import { useMemo } from "react";
import { FACET_SCAN_LIMIT, type FacetField, type FacetGroup, type FacetViewName, type FacetsView } from "@/lib/console/facets/facets-types";
import { ownerHref, withParams } from "@/lib/console/shared/links";
import { useFacetsQuery } from "@/lib/console/facets/facets-query";

const GROUP_TITLES: Record<FacetField, string> = {
  owner: "Owners",
  task: "Tasks",
  resource: "Resources",
  prefix: "Prefixes",
  kind: "Kinds",
};

const LIST_PATHS: Record<FacetViewName, string> = { leases: "/locks", events: "/events" };

const numberFormat = new Intl.NumberFormat("en-US");
const formatCount = (n: number) => numberFormat.format(n);
/** "2026-11-26 08:01:02" (the heading says UTC once). */
const formatClock = (iso: string) => iso.slice(0, 19).replace("T", " ");

/**
 * The counts above a list: for its filters and window, the top owners, tasks and
 * resources (and kinds), each a link that adds that filter to the URL. Answers
 * "which worker?" without paging through the list.
 */
export function FacetSummary({ view, search, initialData }: { view: FacetViewName; search: string; initialData?: FacetsView }) {
  const query = useFacetsQuery(view, search, initialData);
  const data = query.data;
  const params = useMemo(() => new URLSearchParams(search), [search]);
  if (!data) return null;
  const failed = data.stores.filter((s) => !s.ok).map((s) => s.store);
  const headingId = `facets-${view}-heading`;

  return (
    <section aria-labelledby={headingId} className="rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900/40">
      <h2 id={headingId} className="text-sm font-semibold">
        {data.total === 0 ? `No ${data.noun} to count` : `Who and what: ${formatCount(data.total)} ${data.noun}`}
        {data.from && data.to ? (
          <span className="font-normal text-zinc-600 dark:text-zinc-400">
            {" "}
            between <time dateTime={data.from}>{formatClock(data.from)}</time> and <time dateTime={data.to}>{formatClock(data.to)}</time> UTC
          </span>
        ) : null}
        {data.isCapped ? (
          <span className="font-normal text-zinc-600 dark:text-zinc-400"> (counted over the newest {formatCount(FACET_SCAN_LIMIT)} per store; narrow the filter for exact counts)</span>
        ) : null}
      </h2>
      {failed.length > 0 ? (
        <p className="mt-1 text-xs text-amber-800 dark:text-amber-200">Counts leave out {failed.join(", ")}: the store could not be read.</p>
      ) : null}
      {data.total > 0 ? (
        // Three groups fit one row at 1280 px with whole owner names; four take two rows.
        <div className={`mt-2 grid gap-x-6 gap-y-2 sm:grid-cols-2 ${data.groups.length === 3 ? "lg:grid-cols-3" : ""}`}>
          {data.groups.map((group) => (
            <FacetList key={group.field} group={group} data={data} params={params} path={LIST_PATHS[data.view]} />
          ))}
        </div>
      ) : null}
    </section>
  );
}

function FacetList({ group, data, params, path }: { group: FacetGroup; data: FacetsView; params: URLSearchParams; path: string }) {
  if (group.values.length === 0) return null;
  const titleId = `facet-${data.view}-${group.field}`;
  return (
    <div>
      <h3 id={titleId} className="text-xs font-medium tracking-wide text-zinc-600 uppercase dark:text-zinc-400">
        {GROUP_TITLES[group.field]}
      </h3>
      <ul aria-labelledby={titleId} className="mt-1 space-y-0.5">
        {group.values.map(({ value, count }) => {
          const isCurrent = params.get(group.field) === value;
          const text = (
            <>
              <span className="font-semibold tabular-nums">{formatCount(count)}</span>
              <span className="text-zinc-600 dark:text-zinc-400"> of {formatCount(data.total)} {data.noun}: </span>
              <span className="font-mono">{value}</span>
            </>
          );
          return (
            <li key={value} className="flex items-baseline gap-1 text-xs" title={`${count} of ${data.total} ${data.noun}: ${value}`}>
              {isCurrent ? (
                <span aria-current="true" className="min-w-0 truncate">
                  {text}
                </span>
              ) : (
                <Link
                  href={`${path}${withParams(params, { [group.field]: value })}`}
                  className="min-w-0 truncate text-sky-800 underline-offset-2 hover:underline dark:text-sky-300"
                >
                  {text}
                </Link>
              )}
              {group.field === "owner" ? (
                <>
                  <Link href={ownerHref(value)} className="shrink-0 text-zinc-600 underline underline-offset-2 dark:text-zinc-400">
                    <span className="sr-only">{value}: </span>owner page
                  </Link>
                </>
              ) : null}
            </li>
          );
        })}
      </ul>
    </div>
  );
}
