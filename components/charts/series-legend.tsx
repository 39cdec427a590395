"use client";
import { useState } from "react";
import { cx } from "@/components/ui/cx";

export interface LegendSeries {
  key: string;
  name: string;
  color: string;
}

/** Which series a chart hides; toggled by its legend. Series that disappear from the data are forgotten. */
export function useHiddenSeries() {
  const [hidden, setHidden] = useState<ReadonlySet<string>>(() => new Set());
  const toggle = (key: string) =>
    setHidden((current) => {
      const next = new Set(current);
      if (!next.delete(key)) next.add(key);
      return next;
    });
  return { hidden, toggle };
}

/** What a series the legend toggles hands its recharts element: its data, its name (tooltip, legend), hidden while toggled off. */
export function seriesProps(series: { key: string; name: string }, hidden: ReadonlySet<string>) {
  return { dataKey: series.key, name: series.name, hide: hidden.has(series.key), isAnimationActive: false };
}

/**
 * A chart legend whose entries are toggle buttons (aria-pressed = shown). The
 * swatch is decoration; the state is in the button's name and pressed state,
 * and a hidden series is also struck through, not only faded.
 */
export function SeriesLegend({
  chart,
  series,
  hidden,
  onToggle,
}: {
  chart: string;
  series: readonly LegendSeries[];
  hidden: ReadonlySet<string>;
  onToggle: (key: string) => void;
}) {
  if (series.length === 0) return null;
  return (
    <ul aria-label={`${chart}: series shown`} className="mb-1 flex flex-wrap gap-1">
      {series.map((s) => {
        const isShown = !hidden.has(s.key);
        return (
          <li key={s.key}>
            <button
              type="button"
              aria-pressed={isShown}
              onClick={() => onToggle(s.key)}
              title={isShown ? `Hide ${s.name}` : `Show ${s.name}`}
              className={cx(
                "inline-flex max-w-64 items-center gap-1.5 rounded border px-1.5 py-0.5 text-xs",
                isShown
                  ? "border-zinc-300 text-zinc-800 dark:border-zinc-700 dark:text-zinc-200"
                  : "border-dashed border-zinc-300 text-zinc-600 line-through dark:border-zinc-700 dark:text-zinc-400",
              )}
            >
              <span aria-hidden="true" className="inline-block h-2.5 w-2.5 shrink-0 rounded-sm" style={{ background: isShown ? s.color : "transparent", border: `1.5px solid ${s.color}` }} />
              <span className="truncate font-mono">{s.name}</span>
            </button>
          </li>
        );
      })}
    </ul>
  );
}
