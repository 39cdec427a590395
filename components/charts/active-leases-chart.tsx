"use client";
import { Area, AreaChart, CartesianGrid, ReferenceLine, Tooltip, XAxis, YAxis } from "recharts";
import { formatCompact, formatNumber } from "@/lib/console/format";
import type { OverviewPoint } from "@/lib/console/views";
import { ChartFrame } from "./chart-frame";
import { renderInstantLine } from "./instant-line";
import { AXIS_TICK, CHART_SYNC_ID, GRID_STROKE, SERIES_COLORS, TOOLTIP_STYLE, activeLineProps } from "./chart-theme";
import { bucketEventsHref, formatBucketLabel, timeAxisProps, type TimeScale } from "./time-axis";

/** Leases held at the end of each bucket, derived back from the live count and the counters. */
export function ActiveLeasesChart({ points, scale, store, markAt, prefix = null }: { points: OverviewPoint[]; scale: TimeScale; store: string | null; /** The past view's instant, marked on the chart. */ markAt?: number | null; prefix?: string | null }) {
  const data = points.map((p) => ({ t: p.t, active: p.active }));
  const peak = points.reduce((n, p) => Math.max(n, p.active), 0);
  return (
    <ChartFrame
      title="Active leases"
      subtitle="held at the end of each bucket"
      summary={`Now ${formatNumber(points.at(-1)?.active ?? 0)} active; peak ${formatNumber(peak)} in the window.`}
      navigation={{
        keys: points.map((p) => p.t),
        describe: (i) => `${formatBucketLabel(points[i]!.t, scale.bucketMs)}: ${formatNumber(points[i]!.active)} leases held at the end`,
        hrefAt: (i) => bucketEventsHref(points[i]!.t, scale.bucketMs, { store: store ?? undefined, prefix: prefix ?? undefined }),
      }}
    >
      {({ activeIndex, pointerHandlers }) => (
        <AreaChart
          data={data}
          responsive
          accessibilityLayer={false}
          syncId={CHART_SYNC_ID}
          syncMethod="value"
          {...pointerHandlers}
          style={{ width: "100%", height: "100%" }}
          margin={{ top: 12, right: 16, bottom: 0, left: -8 }}
        >
          <CartesianGrid stroke={GRID_STROKE} vertical={false} />
          <XAxis {...timeAxisProps(scale)} tick={AXIS_TICK} stroke={GRID_STROKE} />
          {renderInstantLine(markAt, scale.bucketMs)}
          <YAxis allowDecimals={false} tick={AXIS_TICK} stroke={GRID_STROKE} width={44} tickFormatter={(v: number) => formatCompact(v)} />
          <Tooltip {...TOOLTIP_STYLE} labelFormatter={(label) => formatBucketLabel(label, scale.bucketMs)} />
          <Area dataKey="active" name="active leases" type="stepAfter" stroke={SERIES_COLORS[3]} fill={SERIES_COLORS[3]} fillOpacity={0.25} isAnimationActive={false} />
          {activeIndex !== null ? <ReferenceLine x={points[activeIndex]!.t} {...activeLineProps} /> : null}
        </AreaChart>
      )}
    </ChartFrame>
  );
}
