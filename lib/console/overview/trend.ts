/**
 * A count against the same count over the previous window, in words as well as
 * a sign (pure, client-safe): the tables show "+140 %", screen readers hear
 * "up 140 % on the previous window (12 → 29)".
 */
import { formatNumber } from "@/lib/console/shared/format";

export type ChangeDirection = "up" | "down" | "same" | "new";

export interface Change {
  direction: ChangeDirection;
  /** Short, shown: "+140 %", "−30 %", "±0 %", "new". */
  text: string;
  /** Whole, for assistive technology and the tooltip. */
  label: string;
}

export function describeChange(current: number, previous: number): Change {
  const counts = `(${formatNumber(previous)} → ${formatNumber(current)})`;
  if (previous === 0) {
    return current === 0
      ? { direction: "same", text: "±0 %", label: "none in either window" }
      : { direction: "new", text: "new", label: `new: none in the previous window ${counts}` };
  }
  const pct = Math.round(((current - previous) / previous) * 100);
  if (pct === 0) return { direction: "same", text: "±0 %", label: `about the same as the previous window ${counts}` };
  const direction = pct > 0 ? "up" : "down";
  return {
    direction,
    // U+2212 minus: the same width as "+", and read as "minus".
    text: `${pct > 0 ? "+" : "\u2212"}${formatNumber(Math.abs(pct))} %`,
    label: `${direction} ${formatNumber(Math.abs(pct))} % on the previous window ${counts}`,
  };
}
