"use client";
import { Area, AreaChart, Tooltip, YAxis } from "recharts";
import { formatNumber } from "@/lib/console/shared/format";
import { ChartFrame } from "./chart-frame";
import { COUNT_AXIS_PROPS, bucketNavigation, renderActiveLine, renderTimeAxes, timeChartProps, timeTooltipProps, type TimeChartProps } from "./time-chart";
import { OTHER_COLOR, SERIES_COLORS } from "./chart-theme";
import { SeriesLegend, seriesProps, useHiddenSeries } from "./series-legend";
import { bucketUnit, formatBucketLabel } from "./time-axis";

/** Failed acquires per bucket, stacked by the most contended prefixes (+ "other"). */
export function ContentionChart(props: TimeChartProps & { stackKeys: { key: string; prefix: string }[]; depth: number }) {
  const { points, stackKeys, scale, depth, markAt } = props;
  const { hidden, toggle } = useHiddenSeries();
  const data = points.map((p) => ({ t: p.t, ...p.stack }));
  const total = points.reduce((n, p) => n + p.contended, 0);
  const unit = bucketUnit(scale.bucketMs);
  const series = (stackKeys.length > 0 ? stackKeys : [{ key: "other", prefix: "failed acquires" }]).map((s, i) => ({
    key: s.key,
    name: s.prefix,
    color: s.key === "other" ? OTHER_COLOR : SERIES_COLORS[i % SERIES_COLORS.length]!,
  }));
  const shown = series.filter((s) => !hidden.has(s.key));
  return (
    <ChartFrame
      title="Contention over time"
      subtitle={`failed acquires per ${unit}, by prefix (depth ${depth})`}
      summary={`${formatNumber(total)} failed acquires in the window${stackKeys[0] ? `; most on ${stackKeys[0].prefix}` : ""}.`}
      isEmpty={total === 0}
      emptyText="No failed acquires in this window"
      legend={<SeriesLegend chart="Contention over time" series={series} hidden={hidden} onToggle={toggle} />}
      navigation={bucketNavigation(
        props,
        (p) => {
          const parts = p.contended > 0 ? shown.map((s) => `${s.name} ${formatNumber(p.stack[s.key] ?? 0)}`) : [];
          return `${formatBucketLabel(p.t, scale.bucketMs)}: ${formatNumber(p.contended)} failed acquires${parts.length > 0 ? ` (${parts.join(", ")})` : ""}`;
        },
        "contended",
      )}
    >
      {({ activeIndex, pointerHandlers }) => (
        <AreaChart data={data} {...timeChartProps(pointerHandlers)}>
          {renderTimeAxes(scale, markAt)}
          <YAxis {...COUNT_AXIS_PROPS} />
          <Tooltip {...timeTooltipProps(scale)} />
          {series.map((s) => (
            <Area key={s.key} {...seriesProps(s, hidden)} stackId="contention" type="monotone" stroke={s.color} fill={s.color} fillOpacity={0.35} />
          ))}
          {renderActiveLine(points, activeIndex)}
        </AreaChart>
      )}
    </ChartFrame>
  );
}
