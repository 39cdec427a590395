"use client";
import { Bar, BarChart, CartesianGrid, ReferenceLine, Tooltip, XAxis, YAxis } from "recharts";
import { formatCompact, formatNumber } from "@/lib/console/shared/format";
import type { HistogramBar } from "@/lib/console/shared/views";
import { ChartFrame } from "./chart-frame";
import { AXIS_TICK, GRID_STROKE, SERIES_COLORS, TOOLTIP_STYLE, activeLineProps } from "./chart-theme";

/** How long leases were held before they ended, over the whole window. */
export function HoldHistogramChart({ bars, className }: { bars: HistogramBar[]; className?: string }) {
  const total = bars.reduce((n, b) => n + b.count, 0);
  const top = bars.reduce<HistogramBar | null>((best, b) => (best === null || b.count > best.count ? b : best), null);
  return (
    <ChartFrame
      title="Hold duration histogram"
      subtitle={`${formatNumber(total)} leases ended in the window`}
      summary={top && total > 0 ? `Most leases (${formatNumber(top.count)}) were held ${top.label}.` : "No lease ended in this window."}
      isEmpty={total === 0}
      emptyText="No lease ended in this window"
      className={className}
      navigation={{ keys: bars.map((b) => b.label), describe: (i) => `held ${bars[i]!.label}: ${formatNumber(bars[i]!.count)} leases` }}
    >
      {({ activeIndex }) => (
        <BarChart data={bars} responsive accessibilityLayer={false} style={{ width: "100%", height: "100%" }} margin={{ top: 12, right: 16, bottom: 0, left: -8 }}>
          <CartesianGrid stroke={GRID_STROKE} vertical={false} />
          <XAxis dataKey="label" tick={AXIS_TICK} stroke={GRID_STROKE} interval="preserveStartEnd" minTickGap={8} />
          <YAxis allowDecimals={false} tick={AXIS_TICK} stroke={GRID_STROKE} width={44} tickFormatter={(v: number) => formatCompact(v)} />
          <Tooltip {...TOOLTIP_STYLE} cursor={{ fill: "var(--chart-grid)" }} formatter={(value) => [value, "leases"]} labelFormatter={(label) => `held ${String(label)}`} />
          <Bar dataKey="count" name="leases" fill={SERIES_COLORS[2]} isAnimationActive={false} />
          {activeIndex !== null ? <ReferenceLine x={bars[activeIndex]!.label} {...activeLineProps} /> : null}
        </BarChart>
      )}
    </ChartFrame>
  );
}
