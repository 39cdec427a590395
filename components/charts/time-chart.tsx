import { CartesianGrid, ReferenceLine, XAxis } from "recharts";
import { formatCompact } from "@/lib/console/shared/format";
import type { ListLinkFilters } from "@/lib/console/shared/links";
import type { OverviewPoint } from "@/lib/console/shared/views";
import type { ChartBodyProps, ChartNavigation } from "./chart-frame";
import { AXIS_TICK, CHART_SYNC_ID, GRID_STROKE, TOOLTIP_STYLE, activeLineProps } from "./chart-theme";
import { renderInstantLine } from "./instant-line";
import { bucketEventsHref, formatBucketLabel, timeAxisProps, type TimeScale } from "./time-axis";

/** What every overview time chart is given. */
export interface TimeChartProps {
  points: OverviewPoint[];
  scale: TimeScale;
  store: string | null;
  /** The past view's instant, marked on the chart. */
  markAt?: number | null;
  prefix?: string | null;
}

/**
 * The frame's keyboard way through the buckets: `describe` says one in words, and Enter opens
 * its events (of `kind`, when given) in the chart's store and prefix.
 */
export function bucketNavigation({ points, scale, store, prefix }: TimeChartProps, describe: (point: OverviewPoint) => string, kind?: ListLinkFilters["kind"]): ChartNavigation {
  return {
    keys: points.map((p) => p.t),
    describe: (i) => describe(points[i]!),
    hrefAt: (i) => bucketEventsHref(points[i]!.t, scale.bucketMs, { store: store ?? undefined, prefix: prefix ?? undefined, ...(kind ? { kind } : {}) }),
  };
}

/**
 * The first children of every time chart: the grid, the bucket-time x axis and the past view's
 * instant. Called as a function so the chart gets the recharts elements themselves.
 */
export function renderTimeAxes(scale: TimeScale, markAt: number | null | undefined) {
  return [
    <CartesianGrid key="grid" stroke={GRID_STROKE} vertical={false} />,
    <XAxis key="time" {...timeAxisProps(scale)} tick={AXIS_TICK} stroke={GRID_STROKE} />,
    renderInstantLine(markAt, scale.bucketMs),
  ];
}

/** The line at the bucket the keyboard or pointer is on (`yAxisId`: the axis it belongs to, in a chart of two). */
export function renderActiveLine(points: OverviewPoint[], activeIndex: number | null, yAxisId?: string) {
  return activeIndex !== null ? <ReferenceLine x={points[activeIndex]!.t} {...(yAxisId ? { yAxisId } : {})} {...activeLineProps} /> : null;
}

/**
 * The recharts chart element's props every time chart shares: full size, the view's
 * synced crosshair, and the frame's pointer handlers. Only the side margins differ
 * (room for a second axis on the right, or wide log-scale labels on the left).
 */
export function timeChartProps(pointerHandlers: ChartBodyProps["pointerHandlers"], margin: { left: number; right: number } = { left: -8, right: 16 }) {
  return {
    responsive: true,
    accessibilityLayer: false,
    syncId: CHART_SYNC_ID,
    syncMethod: "value" as const,
    ...pointerHandlers,
    style: { width: "100%", height: "100%" },
    margin: { top: 12, right: margin.right, bottom: 0, left: margin.left },
  };
}

/** The tooltip of every time chart: themed, titled with the bucket's time. */
export function timeTooltipProps(scale: TimeScale) {
  return { ...TOOLTIP_STYLE, labelFormatter: (label: unknown) => formatBucketLabel(label, scale.bucketMs) };
}

/** A y axis of whole counts, compact labels (1.2k). */
export const COUNT_AXIS_PROPS = {
  allowDecimals: false,
  tick: AXIS_TICK,
  stroke: GRID_STROKE,
  width: 44,
  tickFormatter: (v: number) => formatCompact(v),
} as const;
