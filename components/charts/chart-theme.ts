/**
 * Colours and axis styling shared by the charts. Series colours are mid-tones
 * that read on both light and dark backgrounds; the chrome (grid, ticks,
 * tooltip) follows the theme through CSS variables set on ChartFrame.
 */
export const SERIES_COLORS = ["#0ea5e9", "#f59e0b", "#8b5cf6", "#10b981", "#f43f5e"] as const;
export const OTHER_COLOR = "#a1a1aa";

export const ENDING_COLORS = {
  released: "#10b981",
  expired: "#ef4444",
  force_released: "#8b5cf6",
  held: "#0ea5e9",
  unknown: "#a1a1aa",
} as const;

export const AXIS_TICK = { fill: "var(--chart-muted)", fontSize: 11 } as const;
export const GRID_STROKE = "var(--chart-grid)";
export const TOOLTIP_STYLE = {
  contentStyle: {
    background: "var(--chart-bg)",
    border: "1px solid var(--chart-border)",
    borderRadius: 6,
    color: "var(--chart-fg)",
    fontSize: 12,
  },
  labelStyle: { color: "var(--chart-fg)", fontWeight: 600 },
  itemStyle: { padding: 0 },
} as const;

/** Time charts of one view share this: hovering one shows the same bucket's crosshair in all. */
export const CHART_SYNC_ID = "overview-time";

/** The keyboard-chosen point: a line across the plot at its bucket. */
export const activeLineProps = { stroke: "var(--chart-fg)", strokeDasharray: "3 3", strokeWidth: 1.5, ifOverflow: "extendDomain" } as const;
