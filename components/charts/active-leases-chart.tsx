"use client";
import { Area, AreaChart, CartesianGrid, Tooltip, XAxis, YAxis } from "recharts";
import { formatCompact } from "@/lib/console/format";
import type { OverviewPoint } from "@/lib/console/views";
import { ChartFrame } from "./chart-frame";
import { renderInstantLine } from "./instant-line";
import { AXIS_TICK, GRID_STROKE, SERIES_COLORS, TOOLTIP_STYLE } from "./chart-theme";
import { formatBucketLabel, timeAxisProps } from "./time-axis";

/** Leases held at the end of each bucket, derived back from the live count and the counters. */
export function ActiveLeasesChart({ points, bucketMs, markAt }: { points: OverviewPoint[]; bucketMs: number; markAt?: number | null }) {
  const data = points.map((p) => ({ t: p.t, active: p.active }));
  const peak = points.reduce((n, p) => Math.max(n, p.active), 0);
  return (
    <ChartFrame
      title="Active leases"
      subtitle="held at the end of each bucket"
      summary={`Now ${points.at(-1)?.active ?? 0} active; peak ${peak} in the window.`}
    >
      <AreaChart data={data} responsive style={{ width: "100%", height: "100%" }} margin={{ top: 4, right: 8, bottom: 0, left: -8 }}>
        <CartesianGrid stroke={GRID_STROKE} vertical={false} />
        <XAxis {...timeAxisProps(bucketMs)} tick={AXIS_TICK} stroke={GRID_STROKE} />
        {renderInstantLine(markAt, bucketMs)}
        <YAxis allowDecimals={false} tick={AXIS_TICK} stroke={GRID_STROKE} width={44} tickFormatter={(v: number) => formatCompact(v)} />
        <Tooltip {...TOOLTIP_STYLE} labelFormatter={(label) => formatBucketLabel(label, bucketMs)} />
        <Area dataKey="active" name="active leases" type="stepAfter" stroke={SERIES_COLORS[3]} fill={SERIES_COLORS[3]} fillOpacity={0.25} isAnimationActive={false} />
      </AreaChart>
    </ChartFrame>
  );
}
