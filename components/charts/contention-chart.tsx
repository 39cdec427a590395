"use client";
import { Area, AreaChart, CartesianGrid, Legend, Tooltip, XAxis, YAxis } from "recharts";
import { formatCompact } from "@/lib/console/format";
import type { OverviewPoint } from "@/lib/console/views";
import { ChartFrame } from "./chart-frame";
import { renderInstantLine } from "./instant-line";
import { AXIS_TICK, GRID_STROKE, OTHER_COLOR, SERIES_COLORS, TOOLTIP_STYLE } from "./chart-theme";
import { formatBucketLabel, timeAxisProps } from "./time-axis";

/** Failed acquires per bucket, stacked by the most contended prefixes (+ "other"). */
export function ContentionChart({
  points,
  stackKeys,
  bucketMs,
  depth,
  markAt,
}: {
  points: OverviewPoint[];
  stackKeys: { key: string; prefix: string }[];
  bucketMs: number;
  depth: number;
  /** The past view's instant, marked on the chart. */
  markAt?: number | null;
}) {
  const data = points.map((p) => ({ t: p.t, ...p.stack }));
  const total = points.reduce((n, p) => n + p.contended, 0);
  const unit = bucketMs >= 3_600_000 ? "hour" : "minute";
  return (
    <ChartFrame
      title="Contention over time"
      subtitle={`failed acquires per ${unit}, by prefix (depth ${depth})`}
      summary={`${total} failed acquires in the window${stackKeys[0] ? `; most on ${stackKeys[0].prefix}` : ""}.`}
      isEmpty={total === 0}
      emptyText="No failed acquires in this window"
    >
      <AreaChart data={data} responsive style={{ width: "100%", height: "100%" }} margin={{ top: 4, right: 8, bottom: 0, left: -8 }}>
        <CartesianGrid stroke={GRID_STROKE} vertical={false} />
        <XAxis {...timeAxisProps(bucketMs)} tick={AXIS_TICK} stroke={GRID_STROKE} />
        {renderInstantLine(markAt, bucketMs)}
        <YAxis allowDecimals={false} tick={AXIS_TICK} stroke={GRID_STROKE} width={44} tickFormatter={(v: number) => formatCompact(v)} />
        <Tooltip {...TOOLTIP_STYLE} labelFormatter={(label) => formatBucketLabel(label, bucketMs)} />
        <Legend wrapperStyle={{ fontSize: 11 }} />
        {(stackKeys.length > 0 ? stackKeys : [{ key: "other", prefix: "failed acquires" }]).map((s, i) => {
          const color = s.key === "other" ? OTHER_COLOR : SERIES_COLORS[i % SERIES_COLORS.length];
          return (
            <Area
              key={s.key}
              dataKey={s.key}
              name={s.prefix}
              stackId="contention"
              type="monotone"
              stroke={color}
              fill={color}
              fillOpacity={0.35}
              isAnimationActive={false}
            />
          );
        })}
      </AreaChart>
    </ChartFrame>
  );
}
