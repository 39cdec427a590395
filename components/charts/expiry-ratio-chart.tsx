"use client";
import { Bar, ComposedChart, Line, Tooltip, YAxis } from "recharts";
import { formatNumber, formatRatio } from "@/lib/console/shared/format";
import { ChartFrame } from "./chart-frame";
import { bucketNavigation, renderActiveLine, renderTimeAxes, timeChartProps, timeTooltipProps, type TimeChartProps } from "./time-chart";
import { AXIS_TICK, ENDING_COLORS, GRID_STROKE } from "./chart-theme";
import { SeriesLegend, seriesProps, useHiddenSeries } from "./series-legend";
import { formatBucketLabel } from "./time-axis";

const RATIO = { key: "ratio", name: "expired ÷ released", color: ENDING_COLORS.expired };
const FORCE_RELEASED = { key: "forceReleased", name: "force-released", color: ENDING_COLORS.force_released };
const SERIES = [RATIO, FORCE_RELEASED];

/**
 * Expired ÷ released per bucket (a clean system releases; expiries are crash
 * reports), with force-releases as separate bars on their own axis.
 */
export function ExpiryRatioChart(props: TimeChartProps) {
  const { points, scale, markAt } = props;
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
      navigation={bucketNavigation(
        props,
        (p) =>
          `${formatBucketLabel(p.t, scale.bucketMs)}: ${formatNumber(p.expired)} expired, ${formatNumber(p.released)} released (ratio ${formatRatio(p.expiredToReleased)}), ${formatNumber(p.forceReleased)} force-released`,
        ["expired", "released", "force_released"],
      )}
    >
      {({ activeIndex, pointerHandlers }) => (
        <ComposedChart data={data} {...timeChartProps(pointerHandlers, { left: -8, right: 0 })}>
          {renderTimeAxes(scale, markAt)}
          <YAxis yAxisId="ratio" tick={AXIS_TICK} stroke={GRID_STROKE} width={44} tickFormatter={(v: number) => formatRatio(v)} />
          <YAxis yAxisId="count" orientation="right" allowDecimals={false} tick={AXIS_TICK} stroke={GRID_STROKE} width={32} />
          <Tooltip
            {...timeTooltipProps(scale)}
            formatter={(value, name) => [name === "expired ÷ released" ? formatRatio(typeof value === "number" ? value : null) : value, name]}
          />
          <Bar yAxisId="count" {...seriesProps(FORCE_RELEASED, hidden)} fill={FORCE_RELEASED.color} fillOpacity={0.6} />
          <Line yAxisId="ratio" {...seriesProps(RATIO, hidden)} type="monotone" stroke={RATIO.color} strokeWidth={1.75} dot={false} connectNulls />
          {renderActiveLine(points, activeIndex, "ratio")}
        </ComposedChart>
      )}
    </ChartFrame>
  );
}
