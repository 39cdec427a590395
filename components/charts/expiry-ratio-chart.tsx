"use client";
import { Bar, CartesianGrid, ComposedChart, Legend, Line, Tooltip, XAxis, YAxis } from "recharts";
import { formatRatio } from "@/lib/console/format";
import type { OverviewPoint } from "@/lib/console/views";
import { ChartFrame } from "./chart-frame";
import { renderInstantLine } from "./instant-line";
import { AXIS_TICK, ENDING_COLORS, GRID_STROKE, TOOLTIP_STYLE } from "./chart-theme";
import { formatBucketLabel, timeAxisProps } from "./time-axis";

/**
 * Expired ÷ released per bucket (a clean system releases; expiries are crash
 * reports), with force-releases as separate bars on their own axis.
 */
export function ExpiryRatioChart({ points, bucketMs, markAt }: { points: OverviewPoint[]; bucketMs: number; markAt?: number | null }) {
  const data = points.map((p) => ({ t: p.t, ratio: p.expiredToReleased, forceReleased: p.forceReleased, expired: p.expired, released: p.released }));
  const expired = points.reduce((n, p) => n + p.expired, 0);
  const released = points.reduce((n, p) => n + p.released, 0);
  const forced = points.reduce((n, p) => n + p.forceReleased, 0);
  return (
    <ChartFrame
      title="Expired-to-released ratio"
      subtitle="expired ÷ released per bucket; force-releases as bars"
      summary={`${expired} expired, ${released} released, ${forced} force-released in the window.`}
      isEmpty={expired + released + forced === 0}
      emptyText="No lease ended in this window"
    >
      <ComposedChart data={data} responsive style={{ width: "100%", height: "100%" }} margin={{ top: 4, right: 0, bottom: 0, left: -8 }}>
        <CartesianGrid stroke={GRID_STROKE} vertical={false} />
        <XAxis {...timeAxisProps(bucketMs)} tick={AXIS_TICK} stroke={GRID_STROKE} />
        {renderInstantLine(markAt, bucketMs)}
        <YAxis yAxisId="ratio" tick={AXIS_TICK} stroke={GRID_STROKE} width={44} tickFormatter={(v: number) => formatRatio(v)} />
        <YAxis yAxisId="count" orientation="right" allowDecimals={false} tick={AXIS_TICK} stroke={GRID_STROKE} width={32} />
        <Tooltip
          {...TOOLTIP_STYLE}
          labelFormatter={(label) => formatBucketLabel(label, bucketMs)}
          formatter={(value, name) => [name === "expired ÷ released" ? formatRatio(typeof value === "number" ? value : null) : value, name]}
        />
        <Legend wrapperStyle={{ fontSize: 11 }} />
        <Bar yAxisId="count" dataKey="forceReleased" name="force-released" fill={ENDING_COLORS.force_released} fillOpacity={0.6} isAnimationActive={false} />
        <Line
          yAxisId="ratio"
          dataKey="ratio"
          name="expired ÷ released"
          type="monotone"
          stroke={ENDING_COLORS.expired}
          strokeWidth={1.75}
          dot={false}
          connectNulls
          isAnimationActive={false}
        />
      </ComposedChart>
    </ChartFrame>
  );
}
