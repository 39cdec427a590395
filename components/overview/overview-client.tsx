"use client";
import { useMemo } from "react";
import { ActiveLeasesChart } from "@/components/charts/active-leases-chart";
import { ContentionChart } from "@/components/charts/contention-chart";
import { ExpiryRatioChart } from "@/components/charts/expiry-ratio-chart";
import { HoldHistogramChart } from "@/components/charts/hold-histogram-chart";
import { HoldQuantilesChart } from "@/components/charts/hold-quantiles-chart";
import { RenewalSlackPanel } from "@/components/advice/renewal-slack-panel";
import { buildTimeScale } from "@/components/charts/time-axis";
import { StoreReadProblems } from "@/components/locks/read-notices";
import { ShareLink } from "@/components/past/share-link";
import { TimeScrubber } from "@/components/past/time-scrubber";
import { UtcRange } from "@/components/past/utc-range";
import { WindowStatement } from "@/components/past/window-statement";
import { formatUtc } from "@/components/ui/format";
import { buildQuery, withParams } from "@/lib/console/shared/links";
import { bucketUnit, drillDownWindow } from "@/lib/console/shared/time-scale";
import { useOverviewQuery } from "@/lib/console/overview/overview-query";
import type { LeasesView, OverviewView } from "@/lib/console/shared/views";
import { ObservedOverviewSection } from "./observed-overview";
import { OverviewControls } from "./overview-controls";
import { OverviewTiles } from "./overview-tiles";
import { StuckLeasesTile } from "./stuck-leases-tile";
import { StoreBreakdown } from "./store-breakdown";
import { TopContention } from "./top-contention";

const WINDOW_TITLES: Record<OverviewView["window"], string> = {
  "15m": "last 15 minutes",
  "1h": "last hour",
  "6h": "last 6 hours",
  "24h": "last 24 hours",
  "7d": "last 7 days",
  "30d": "last 30 days (whole UTC days)",
  custom: "custom window",
};

/** A window ending at `at=` instead of now: "the hour ending at …". */
const WINDOW_SPANS: Record<OverviewView["window"], string> = {
  "15m": "the 15 minutes",
  "1h": "the hour",
  "6h": "the 6 hours",
  "24h": "the 24 hours",
  "7d": "the 7 days (whole UTC days)",
  "30d": "the 30 days (whole UTC days)",
  custom: "custom window",
};

const BUCKET_WORDS = { minute: "per-minute", hour: "hourly", day: "daily" } as const;
/** The event lists' longest custom range (MAX_CUSTOM_RANGE_MS in lib/console/shared/params.ts, server-only). */
const DRILL_DOWN_MAX_MS = 14 * 86_400_000;

export function OverviewClient({ search, initialData, initialStuck }: { search: string; initialData: OverviewView; initialStuck: LeasesView | null }) {
  const query = useOverviewQuery(search, initialData);
  const view = query.data ?? initialData;
  // Drill-down links carry the same window (custom from/to included) and prefix.
  const windowQuery = buildQuery({ prefix: view.prefix, ...drillDownWindow(view, DRILL_DOWN_MAX_MS) }).slice(1);
  const isDrillDownShorter = Date.parse(view.to) - Date.parse(view.from) > DRILL_DOWN_MAX_MS;
  // One time scale for every time chart, so their ticks line up.
  const scale = useMemo(() => buildTimeScale(view.points.map((p) => p.t), view.bucketMs), [view.points, view.bucketMs]);
  // `at=` (the time scrubber): the instant every chart marks.
  const at = new URLSearchParams(search).get("at");
  const markAt = at ? Date.parse(at) : null;
  // Every selected store refused or failed: zeros would read as "nothing happened".
  const isNothingCounted = view.stores.length > 0 && view.stores.every((s) => !s.ok);

  return (
    <div className="space-y-5">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-lg font-semibold tracking-tight">
            Overview
            {view.prefix !== null ? (
              <>
                {" "}
                <span className="font-normal text-zinc-600 dark:text-zinc-400">of</span> <span className="font-mono">{view.prefix}</span>
                <span className="sr-only"> (resources under this prefix)</span>
              </>
            ) : null}
          </h1>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            {view.selectedStore ? <span className="font-mono">{view.selectedStore}</span> : "All stores"},{" "}
            {view.endsAt ? `${WINDOW_SPANS[view.window]} ending at ${formatUtc(view.endsAt)}` : WINDOW_TITLES[view.window]}{" "}
            <span title={`${formatUtc(view.from)} → ${formatUtc(view.to)}`} className="underline decoration-dotted underline-offset-2">
              ({BUCKET_WORDS[bucketUnit(view.bucketMs)]} buckets)
            </span>
            {/* Day buckets count whole days: say so, and what was asked, rather than count past it unseen. */}
            {view.requested !== null ? (
              <span data-testid="whole-days">
                {" "}
                · widened to whole UTC days (asked for{" "}
                <span className="font-mono">
                  {formatUtc(view.requested.from)} → {formatUtc(view.requested.to)}
                </span>
                )
              </span>
            ) : null}
            {isDrillDownShorter ? <> · links to events cover the last 14 days</> : null}
            {isNothingCounted ? null : view.prefixSource === "events" ? (
              <span
                className="underline decoration-dotted underline-offset-2"
                title="Windows up to 24 hours with minute buckets (or a prefix deeper than two segments) count the stores' events under the prefix."
              >
                {" "}
                · counted from events
              </span>
            ) : view.prefixSource === "rollups" ? (
              <span
                className="underline decoration-dotted underline-offset-2"
                title="Each store keeps hourly counts per two-segment prefix group; a prefix of at most two segments is the sum of the groups under it."
              >
                {" "}
                · counted from hourly rollups per prefix
              </span>
            ) : null}
            {query.isError ? <span className="ml-2 text-amber-700 dark:text-amber-300">· live update failed: {query.error.message}</span> : null}
          </p>
          {view.scope !== null ? (
            <p className="mt-1 text-sm text-zinc-700 dark:text-zinc-300">
              Your access covers <span className="font-mono">{view.scope}</span> only: every number here counts those resources alone.
            </p>
          ) : null}
        </div>
        <OverviewControls view={view} search={search} />
      </div>
      {view.endsAt ? <WindowStatement what="Counts and charts" from={view.from} endsAt={view.endsAt} window={view.window} nowHref={`/${withParams(search, { at: null })}`} /> : null}
      <UtcRange from={view.from} to={view.to} />
      {/* With nothing counted, the panel below names each store's reason instead. */}
      {isNothingCounted ? null : <StoreReadProblems stores={view.stores} />}
      {view.coverage.length > 0 ? (
        <ul role="status" data-testid="prefix-coverage" className="space-y-1 rounded-lg border border-amber-300 bg-amber-50 px-4 py-2 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100">
          {view.coverage.map((c) => (
            <li key={c.store}>
              <strong className="font-semibold">Counted from {formatUtc(c.from)}:</strong> <span className="font-mono">{c.store}</span> began counting per
              prefix then; what happened under the prefix before it is not in these numbers.
            </li>
          ))}
        </ul>
      ) : null}
      {isNothingCounted ? (
        <NothingCounted stores={view.stores} />
      ) : (
        <OverviewTiles
          tiles={view.total}
          windowQuery={windowQuery}
          store={view.selectedStore}
          prefix={view.prefix}
          scope={view.scope}
          endsAt={view.endsAt}
          lead={<StuckLeasesTile store={view.selectedStore} prefix={view.prefix} initialData={initialStuck} />}
        />
      )}
      {/* The tiles per store, full width: ten columns do not fit beside a chart at 1280 px. */}
      <section aria-labelledby="by-store" className="min-w-0">
        <h2 id="by-store" className="mb-2 text-sm font-semibold">
          By store
        </h2>
        <StoreBreakdown stores={view.stores} />
      </section>
      {view.observed ? <ObservedOverviewSection observed={view.observed} /> : null}
      {/* Beside the charts it moves along, and after the tiles: their drill-down links stay within a few Tabs. */}
      <div className="flex flex-wrap items-center justify-between gap-3">
        <TimeScrubber path="/" search={search} from={view.from} to={view.to} at={at} store={view.selectedStore} pinsRange />
        <ShareLink path="/" search={search} from={view.from} to={view.to} />
      </div>
      {isNothingCounted ? null : (
        <div className="grid grid-cols-1 gap-4 lg:grid-cols-2">
          <ContentionChart prefix={view.prefix} points={view.points} stackKeys={view.stackKeys} scale={scale} depth={view.depth} store={view.selectedStore} markAt={markAt} />
          <HoldQuantilesChart prefix={view.prefix} points={view.points} scale={scale} store={view.selectedStore} markAt={markAt} />
          <ExpiryRatioChart prefix={view.prefix} points={view.points} scale={scale} store={view.selectedStore} markAt={markAt} />
          <ActiveLeasesChart prefix={view.prefix} points={view.points} scale={scale} store={view.selectedStore} markAt={markAt} />
          <HoldHistogramChart bars={view.histogram} className="lg:col-span-2" />
          <RenewalSlackPanel search={search} className="rounded-lg border border-zinc-200 p-4 lg:col-span-2 dark:border-zinc-800" />
        </div>
      )}
      {isNothingCounted ? null : (
        <TopContention
          prefixes={view.topPrefixes}
          resources={view.topResources}
          resourceDepth={view.resourceDepth}
          selectedStore={view.selectedStore}
          depth={view.depth}
          windowQuery={windowQuery}
        />
      )}
    </div>
  );
}

/**
 * No store could count this view: instead of tiles and charts of zeros, what was not counted
 * and why (each store's reason is in the breakdown below too).
 */
function NothingCounted({ stores }: { stores: OverviewView["stores"] }) {
  const reasons = stores.flatMap((s) => (s.ok ? [] : [s]));
  return (
    <section
      aria-labelledby="not-counted-heading"
      data-testid="not-counted"
      className="rounded-lg border border-amber-300 bg-amber-50 p-4 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
    >
      <h2 id="not-counted-heading" className="font-semibold">
        Not counted
      </h2>
      <p className="mt-1">No store could count this view, so there are no numbers or charts to show; this is not a count of zero.</p>
      <ul className="mt-2 list-disc space-y-1 pl-5">
        {reasons.map((s) => (
          <li key={s.store}>
            <span className="font-mono">{s.store}</span>: {s.error}
          </li>
        ))}
      </ul>
    </section>
  );
}
