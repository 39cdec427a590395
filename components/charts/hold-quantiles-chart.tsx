"use client";
import { Line, LineChart, Tooltip, YAxis } from "recharts";
import { formatDuration } from "@/components/ui/format";
import { formatAxisDuration } from "@/lib/console/shared/format";
import { ChartFrame } from "./chart-frame";
import { bucketNavigation, renderActiveLine, renderTimeAxes, timeChartProps, timeTooltipProps, type TimeChartProps } from "./time-chart";
import { AXIS_TICK, GRID_STROKE, SERIES_COLORS } from "./chart-theme";
import { SeriesLegend, seriesProps, useHiddenSeries } from "./series-legend";
import { formatBucketLabel } from "./time-axis";

const QUANTILES = [
  { key: "p50", name: "p50", color: SERIES_COLORS[0] },
  { key: "p95", name: "p95", color: SERIES_COLORS[1] },
  { key: "p99", name: "p99", color: SERIES_COLORS[4] },
] as const;

/** Log ticks on the histogram's own bounds, so p50 and p99 stay readable when they are minutes apart. */
const LOG_TICKS = [1, 10, 100, 1_000, 10_000, 60_000, 600_000, 3_600_000];
/** Quantiles below 1 ms are drawn at 1 ms (a log axis has no zero). */
const FLOOR_MS = 1;

/** Hold duration quantiles per bucket, estimated from each bucket's histogram. */
export function HoldQuantilesChart(props: TimeChartProps) {
  const { points, scale, markAt } = props;
  const { hidden, toggle } = useHiddenSeries();
  const floor = (v: number | null) => (v === null ? null : Math.max(FLOOR_MS, v));
  const data = points.map((p) => ({ t: p.t, p50: floor(p.p50), p95: floor(p.p95), p99: floor(p.p99) }));
  const highest = points.reduce((m, p) => Math.max(m, p.p99 ?? 0), FLOOR_MS);
  // The axis ends on the first tick at or above the highest value, so no tick (and no label) lies past its end.
  const top = LOG_TICKS.find((t) => t >= highest) ?? highest;
  const ticks = LOG_TICKS.filter((t) => t <= top);
  const withData = points.filter((p) => p.p50 !== null);
  const last = withData.at(-1);
  return (
    <ChartFrame
      title="Hold duration"
      subtitle="p50 / p95 / p99 of leases that ended (log scale)"
      summary={last ? `Latest p50 ${formatDuration(last.p50 ?? 0)}, p99 ${formatDuration(last.p99 ?? 0)}.` : "No lease ended in this window."}
      isEmpty={withData.length === 0}
      emptyText="No lease ended in this window"
      legend={<SeriesLegend chart="Hold duration" series={QUANTILES} hidden={hidden} onToggle={toggle} />}
      navigation={bucketNavigation(
        props,
        (p) => {
          const label = formatBucketLabel(p.t, scale.bucketMs);
          if (p.p50 === null) return `${label}: no lease ended`;
          return `${label}: ${QUANTILES.filter((q) => !hidden.has(q.key)).map((q) => `${q.name} ${formatDuration(p[q.key] ?? 0)}`).join(", ")}`;
        },
        ["released", "expired", "force_released"],
      )}
    >
      {({ activeIndex, pointerHandlers }) => (
        <LineChart data={data} {...timeChartProps(pointerHandlers, { left: 0, right: 16 })}>
          {renderTimeAxes(scale, markAt)}
          <YAxis
            scale="log"
            domain={[FLOOR_MS, top]}
            ticks={ticks}
            allowDataOverflow
            interval={0}
            tick={AXIS_TICK}
            stroke={GRID_STROKE}
            width={52}
            tickFormatter={(v: number) => formatAxisDuration(v)}
          />
          <Tooltip
            {...timeTooltipProps(scale)}
            formatter={(value) => (typeof value === "number" ? formatDuration(value) : "—")}
          />
          {QUANTILES.map((q) => (
            <Line key={q.key} {...seriesProps(q, hidden)} type="monotone" stroke={q.color} strokeWidth={1.75} dot={withData.length < 3} connectNulls />
          ))}
          {renderActiveLine(points, activeIndex)}
        </LineChart>
      )}
    </ChartFrame>
  );
}
