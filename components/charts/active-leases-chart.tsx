"use client";
import { Area, AreaChart, Tooltip, YAxis } from "recharts";
import { formatNumber } from "@/lib/console/shared/format";
import { ChartFrame } from "./chart-frame";
import { COUNT_AXIS_PROPS, bucketNavigation, renderActiveLine, renderTimeAxes, timeChartProps, timeTooltipProps, type TimeChartProps } from "./time-chart";
import { SERIES_COLORS } from "./chart-theme";
import { formatBucketLabel } from "./time-axis";

/** Leases held at the end of each bucket, derived back from the live count and the counters. */
export function ActiveLeasesChart(props: TimeChartProps) {
  const { points, scale, markAt } = props;
  const data = points.map((p) => ({ t: p.t, active: p.active }));
  const peak = points.reduce((n, p) => Math.max(n, p.active), 0);
  return (
    <ChartFrame
      title="Active leases"
      subtitle="held at the end of each bucket"
      summary={`Now ${formatNumber(points.at(-1)?.active ?? 0)} active; peak ${formatNumber(peak)} in the window.`}
      navigation={bucketNavigation(props, (p) => `${formatBucketLabel(p.t, scale.bucketMs)}: ${formatNumber(p.active)} leases held at the end`)}
    >
      {({ activeIndex, pointerHandlers }) => (
        <AreaChart data={data} {...timeChartProps(pointerHandlers)}>
          {renderTimeAxes(scale, markAt)}
          <YAxis {...COUNT_AXIS_PROPS} />
          <Tooltip {...timeTooltipProps(scale)} />
          <Area dataKey="active" name="active leases" type="stepAfter" stroke={SERIES_COLORS[3]} fill={SERIES_COLORS[3]} fillOpacity={0.25} isAnimationActive={false} />
          {renderActiveLine(points, activeIndex)}
        </AreaChart>
      )}
    </ChartFrame>
  );
}
