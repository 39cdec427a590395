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
import { formatUtc } from "@/components/ui/format";
import { buildQuery } from "@/lib/console/links";
import { bucketUnit, drillDownWindow } from "@/lib/console/time-scale";
import { useOverviewQuery } from "@/lib/console/queries/overview/overview-query";
import type { OverviewView } from "@/lib/console/views";
import { OverviewControls } from "./overview-controls";
import { OverviewTiles } from "./overview-tiles";
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

const BUCKET_WORDS = { minute: "per-minute", hour: "hourly", day: "daily" } as const;
/** The event lists' longest custom range (MAX_CUSTOM_RANGE_MS in lib/console/params.ts, server-only). */
const DRILL_DOWN_MAX_MS = 14 * 86_400_000;

export function OverviewClient({ search, initialData }: { search: string; initialData: OverviewView }) {
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
            {view.selectedStore ? <span className="font-mono">{view.selectedStore}</span> : "All stores"}, {WINDOW_TITLES[view.window]}{" "}
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
            {view.prefix !== null || view.scope !== null ? (
              <span
                className="underline decoration-dotted underline-offset-2"
                title="The rollups count per store, so a prefix view counts the stores' events; Redis keeps them in capped streams."
              >
                {" "}
                · counted from events
              </span>
            ) : null}
            {query.isError ? <span className="ml-2 text-amber-700 dark:text-amber-300">· live update failed: {query.error.message}</span> : null}
          </p>
          {view.scope !== null ? (
            <p className="mt-1 text-sm text-zinc-700 dark:text-zinc-300">
              Your access covers <span className="font-mono">{view.scope}</span> only: every number here counts those resources alone (from the
              stores&apos; events, so windows up to 24 hours).
            </p>
          ) : null}
        </div>
        <OverviewControls view={view} search={search} />
      </div>
      <UtcRange from={view.from} to={view.to} />
      <StoreReadProblems stores={view.stores} />
      <OverviewTiles tiles={view.total} windowQuery={windowQuery} store={view.selectedStore} prefix={view.prefix} scope={view.scope} />
      {/* The tiles per store, full width: ten columns do not fit beside a chart at 1280 px. */}
      <section aria-labelledby="by-store" className="min-w-0">
        <h2 id="by-store" className="mb-2 text-sm font-semibold">
          By store
        </h2>
        <StoreBreakdown stores={view.stores} />
      </section>
      {/* Beside the charts it moves along, and after the tiles: their drill-down links stay within a few Tabs. */}
      <div className="flex flex-wrap items-center justify-between gap-3">
        <TimeScrubber path="/" search={search} from={view.from} to={view.to} at={at} store={view.selectedStore} />
        <ShareLink path="/" search={search} from={view.from} to={view.to} />
      </div>
      <div className="grid gap-4 lg:grid-cols-2">
        <ContentionChart prefix={view.prefix} points={view.points} stackKeys={view.stackKeys} scale={scale} depth={view.depth} store={view.selectedStore} markAt={markAt} />
        <HoldQuantilesChart prefix={view.prefix} points={view.points} scale={scale} store={view.selectedStore} markAt={markAt} />
        <ExpiryRatioChart prefix={view.prefix} points={view.points} scale={scale} store={view.selectedStore} markAt={markAt} />
        <ActiveLeasesChart prefix={view.prefix} points={view.points} scale={scale} store={view.selectedStore} markAt={markAt} />
        <HoldHistogramChart bars={view.histogram} className="lg:col-span-2" />
        <RenewalSlackPanel search={search} className="rounded-lg border border-zinc-200 p-4 lg:col-span-2 dark:border-zinc-800" />
      </div>
      <TopContention
        prefixes={view.topPrefixes}
        resources={view.topResources}
        resourceDepth={view.resourceDepth}
        selectedStore={view.selectedStore}
        depth={view.depth}
        windowQuery={windowQuery}
      />
    </div>
  );
}
