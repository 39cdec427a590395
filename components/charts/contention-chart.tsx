"use client";
import { Area, AreaChart, CartesianGrid, ReferenceLine, Tooltip, XAxis, YAxis } from "recharts";
import { formatCompact, formatNumber } from "@/lib/console/format";
import type { OverviewPoint } from "@/lib/console/views";
import { ChartFrame } from "./chart-frame";
import { renderInstantLine } from "./instant-line";
import { AXIS_TICK, CHART_SYNC_ID, GRID_STROKE, OTHER_COLOR, SERIES_COLORS, TOOLTIP_STYLE, activeLineProps } from "./chart-theme";
import { SeriesLegend, useHiddenSeries } from "./series-legend";
import { bucketEventsHref, bucketUnit, formatBucketLabel, timeAxisProps, type TimeScale } from "./time-axis";

/** Failed acquires per bucket, stacked by the most contended prefixes (+ "other"). */
export function ContentionChart({
  points,
  stackKeys,
  scale,
  depth,
  store,
  markAt,
  prefix = null,
}: {
  points: OverviewPoint[];
  stackKeys: { key: string; prefix: string }[];
  scale: TimeScale;
  depth: number;
  store: string | null;
  /** The past view's instant, marked on the chart. */
  markAt?: number | null;
  prefix?: string | null;
}) {
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
      navigation={{
        keys: points.map((p) => p.t),
        describe: (i) => {
          const p = points[i]!;
          const parts = p.contended > 0 ? shown.map((s) => `${s.name} ${formatNumber(p.stack[s.key] ?? 0)}`) : [];
          return `${formatBucketLabel(p.t, scale.bucketMs)}: ${formatNumber(p.contended)} failed acquires${parts.length > 0 ? ` (${parts.join(", ")})` : ""}`;
        },
        hrefAt: (i) => bucketEventsHref(points[i]!.t, scale.bucketMs, { store: store ?? undefined, prefix: prefix ?? undefined, kind: "contended" }),
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
          {series.map((s) => (
            <Area
              key={s.key}
              dataKey={s.key}
              name={s.name}
              stackId="contention"
              type="monotone"
              hide={hidden.has(s.key)}
              stroke={s.color}
              fill={s.color}
              fillOpacity={0.35}
              isAnimationActive={false}
            />
          ))}
          {activeIndex !== null ? <ReferenceLine x={points[activeIndex]!.t} {...activeLineProps} /> : null}
        </AreaChart>
      )}
    </ChartFrame>
  );
}
