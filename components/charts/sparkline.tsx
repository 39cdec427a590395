import { cx } from "@/components/ui/cx";

/**
 * A tiny line of a count over the window (oldest left), drawn as plain SVG: ten
 * of them per table would cost ten recharts instances for nothing. Decorative:
 * the row's change column says the same in text.
 */
export function Sparkline({ values, className }: { values: readonly number[]; className?: string }) {
  const width = 64;
  const height = 16;
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(height - 1 - (v / max) * (height - 2)).toFixed(1)}`).join(" ");
  return (
    <svg aria-hidden="true" width={width} height={height} viewBox={`0 0 ${width} ${height}`} className={cx("inline-block overflow-visible align-middle", className)}>
      {values.length > 1 ? <polyline points={points} fill="none" stroke="currentColor" strokeWidth={1.25} strokeLinejoin="round" /> : null}
    </svg>
  );
}
