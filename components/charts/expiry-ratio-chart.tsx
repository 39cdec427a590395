"use client";
import { Bar, CartesianGrid, ComposedChart, Line, ReferenceLine, Tooltip, XAxis, YAxis } from "recharts";
import { formatNumber, formatRatio } from "@/lib/console/format";
import type { OverviewPoint } from "@/lib/console/views";
import { ChartFrame } from "./chart-frame";
import { renderInstantLine } from "./instant-line";
import { AXIS_TICK, CHART_SYNC_ID, ENDING_COLORS, GRID_STROKE, TOOLTIP_STYLE, activeLineProps } from "./chart-theme";
import { SeriesLegend, useHiddenSeries } from "./series-legend";
import { bucketEventsHref, formatBucketLabel, timeAxisProps, type TimeScale } from "./time-axis";

const SERIES = [
  { key: "ratio", name: "expired ÷ released", color: ENDING_COLORS.expired },
  { key: "forceReleased", name: "force-released", color: ENDING_COLORS.force_released },
] as const;

/**
 * Expired ÷ released per bucket (a clean system releases; expiries are crash
 * reports), with force-releases as separate bars on their own axis.
 */
export function ExpiryRatioChart({ points, scale, store, markAt, prefix = null }: { points: OverviewPoint[]; scale: TimeScale; store: string | null; /** The past view's instant, marked on the chart. */ markAt?: number | null; prefix?: string | null }) {
  const { hidden, toggle } = useHiddenSeries();
  const data = points.map((p) => ({ t: p.t, ratio: p.expiredToReleased, forceReleased: p.forceReleased, expired: p.expired, released: p.released }));
  const expired = points.reduce((n, p) => n + p.expired, 0);
  const released = points.reduce((n, p) => n + p.released, 0);
  const forced = points.reduce((n, p) => n + p.forceReleased, 0);
  return (
    <ChartFrame
      title="Expired-to-released ratio"
      subtitle="expired ÷ released per bucket; force-releases as bars"
      summary={`${formatNumber(expired)} expired, ${formatNumber(released)} released, ${formatNumber(forced)} force-released in the window.`}
      isEmpty={expired + released + forced === 0}
      emptyText="No lease ended in this window"
      legend={<SeriesLegend chart="Expired-to-released ratio" series={SERIES} hidden={hidden} onToggle={toggle} />}
      navigation={{
        keys: points.map((p) => p.t),
        describe: (i) => {
          const p = points[i]!;
          return `${formatBucketLabel(p.t, scale.bucketMs)}: ${formatNumber(p.expired)} expired, ${formatNumber(p.released)} released (ratio ${formatRatio(p.expiredToReleased)}), ${formatNumber(p.forceReleased)} force-released`;
        },
        hrefAt: (i) => bucketEventsHref(points[i]!.t, scale.bucketMs, { store: store ?? undefined, prefix: prefix ?? undefined, kind: ["expired", "released", "force_released"] }),
      }}
    >
      {({ activeIndex, pointerHandlers }) => (
        <ComposedChart
          data={data}
          responsive
          accessibilityLayer={false}
          syncId={CHART_SYNC_ID}
          syncMethod="value"
          {...pointerHandlers}
          style={{ width: "100%", height: "100%" }}
          margin={{ top: 12, right: 0, bottom: 0, left: -8 }}
        >
          <CartesianGrid stroke={GRID_STROKE} vertical={false} />
          <XAxis {...timeAxisProps(scale)} tick={AXIS_TICK} stroke={GRID_STROKE} />
          {renderInstantLine(markAt, scale.bucketMs)}
          <YAxis yAxisId="ratio" tick={AXIS_TICK} stroke={GRID_STROKE} width={44} tickFormatter={(v: number) => formatRatio(v)} />
          <YAxis yAxisId="count" orientation="right" allowDecimals={false} tick={AXIS_TICK} stroke={GRID_STROKE} width={32} />
          <Tooltip
            {...TOOLTIP_STYLE}
            labelFormatter={(label) => formatBucketLabel(label, scale.bucketMs)}
            formatter={(value, name) => [name === "expired ÷ released" ? formatRatio(typeof value === "number" ? value : null) : value, name]}
          />
          <Bar
            yAxisId="count"
            dataKey="forceReleased"
            name="force-released"
            hide={hidden.has("forceReleased")}
            fill={ENDING_COLORS.force_released}
            fillOpacity={0.6}
            isAnimationActive={false}
          />
          <Line
            yAxisId="ratio"
            dataKey="ratio"
            name="expired ÷ released"
            type="monotone"
            hide={hidden.has("ratio")}
            stroke={ENDING_COLORS.expired}
            strokeWidth={1.75}
            dot={false}
            connectNulls
            isAnimationActive={false}
          />
          {activeIndex !== null ? <ReferenceLine yAxisId="ratio" x={points[activeIndex]!.t} {...activeLineProps} /> : null}
        </ComposedChart>
      )}
    </ChartFrame>
  );
}
