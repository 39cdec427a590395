"use client";
import { useRouter } from "next/navigation";
import { useEffect, useId, useRef, useState } from "react";
import { cx } from "@/components/ui/cx";

/**
 * Moving through a chart's points by keyboard. `describe(i)` is what point i
 * says (read out through a live region, and shown under the chart while it has
 * focus); `hrefAt(i)` is where Enter, or a click on that point, goes.
 */
export interface ChartNavigation {
  /**
   * One key per point (a bucket's start): the chosen point is remembered by key,
   * so a live update that slides the window keeps announcing and opening the same bucket.
   */
  keys: readonly (string | number)[];
  describe: (index: number) => string;
  hrefAt?: (index: number) => string;
}

type RechartsPointerState = { activeIndex?: unknown; activeTooltipIndex?: unknown };

/** What a chart body gets from its frame: the point under keyboard focus, and pointer handlers to spread on the recharts chart. */
export interface ChartBodyProps {
  activeIndex: number | null;
  /** For the recharts chart: tracks the bucket under the pointer (the one its tooltip shows), which a click opens. */
  pointerHandlers: {
    onMouseMove: (state: RechartsPointerState) => void;
    onMouseLeave: () => void;
  };
}

const PAGE_STEP = 10;

/**
 * Keeps the plot one Tab stop. Recharts renders its z-index layers as React portals into
 * bare SVG <g> elements; React listens for focus events on every portal container, and
 * Chromium makes an SVG element with focus listeners keyboard-focusable, so each layer
 * would be an unnamed Tab stop of its own. They take tabindex=-1, now and as they appear.
 */
function useNoTabStopsInside(ref: React.RefObject<HTMLElement | null>): void {
  useEffect(() => {
    const root = ref.current;
    if (!root) return;
    const untab = () => {
      for (const el of root.querySelectorAll<SVGElement>("svg g:not([tabindex])")) el.setAttribute("tabindex", "-1");
    };
    untab();
    const observer = new MutationObserver(untab);
    observer.observe(root, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, [ref]);
}

/** Recharts reports the active index as a number or a numeric string; anything else is no point. */
export function toPointIndex(value: unknown, count: number): number | null {
  const i = typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : NaN;
  return Number.isInteger(i) && i >= 0 && i < count ? i : null;
}

/** The point nearest `clientX` on a plot whose points span its width evenly, or -1 off the plot. */
export function pointIndexAt(clientX: number, plot: Element, count: number): number {
  const rect = plot.getBoundingClientRect();
  if (count === 0 || rect.width <= 0) return -1;
  const fraction = (clientX - rect.left) / rect.width;
  return fraction < 0 || fraction > 1 ? -1 : Math.round(fraction * (count - 1));
}

/** The next point for a key, or undefined when the key is not a move. */
export function nextPointIndex(key: string, current: number | null, count: number): number | undefined {
  if (count === 0) return undefined;
  const at = current ?? count - 1;
  switch (key) {
    case "ArrowRight":
    case "ArrowDown":
      return Math.min(count - 1, current === null ? at : at + 1);
    case "ArrowLeft":
    case "ArrowUp":
      return Math.max(0, current === null ? at : at - 1);
    case "PageDown":
      return Math.min(count - 1, at + PAGE_STEP);
    case "PageUp":
      return Math.max(0, at - PAGE_STEP);
    case "Home":
      return 0;
    case "End":
      return count - 1;
    default:
      return undefined;
  }
}

/**
 * A titled chart panel. The title is a heading; the plot is one tab stop whose
 * arrow keys move between the points (announced, and Enter opens the point's
 * events). Sets the CSS variables the charts' chrome uses, so grid, ticks and
 * tooltips follow light/dark mode. `summary` is a one-line reading of the chart
 * for screen readers and for anyone who wants the number, not the shape.
 */
export function ChartFrame({
  title,
  subtitle,
  summary,
  isEmpty,
  emptyText,
  className,
  legend,
  navigation,
  children,
}: {
  title: string;
  subtitle?: string;
  summary: string;
  isEmpty?: boolean;
  emptyText?: string;
  className?: string;
  legend?: React.ReactNode;
  navigation: ChartNavigation;
  children: (body: ChartBodyProps) => React.ReactNode;
}) {
  const router = useRouter();
  const plotRef = useRef<HTMLDivElement>(null);
  useNoTabStopsInside(plotRef);
  const headingId = useId();
  const helpId = useId();
  const [activeKey, setActiveKey] = useState<string | number | null>(null);
  const { hrefAt, keys } = navigation;
  const count = keys.length;
  // A point chosen earlier may have slid out of the window with a live update: then none is chosen.
  const found = activeKey === null ? -1 : keys.indexOf(activeKey);
  const active = found >= 0 ? found : null;
  const choose = (index: number | null) => setActiveKey(index === null ? null : (keys[index] ?? null));

  const onKeyDown = (e: React.KeyboardEvent<HTMLDivElement>) => {
    if (e.key === "Enter" && active !== null && hrefAt) {
      e.preventDefault();
      router.push(hrefAt(active));
      return;
    }
    if (e.key === "Escape") {
      choose(null);
      return;
    }
    const next = nextPointIndex(e.key, active, count);
    if (next === undefined) return;
    e.preventDefault();
    choose(next);
  };

  // The bucket under the pointer, remembered from the last move rather than read from recharts'
  // click state: a live update or a synced chart can reset that state between the pointer's
  // arrival and the click, and then the click would open nothing.
  // (State, not a ref: setting the same key again is a no-op render.)
  const [hoveredKey, setHoveredKey] = useState<string | number | null>(null);
  const pointerHandlers: ChartBodyProps["pointerHandlers"] = {
    onMouseMove: (state) => {
      const i = toPointIndex(state.activeIndex ?? state.activeTooltipIndex, count);
      // A move that recharts reports without a point (its state just reset) keeps the last one.
      if (i !== null) setHoveredKey(keys[i] ?? null);
    },
    onMouseLeave: () => setHoveredKey(null),
  };
  // A press and release of the primary button on the plot opens the bucket. Not `click`: the
  // browser fires no click when the element pressed (a dot, the tooltip cursor) is re-rendered
  // away before the release — focus moving the active point or a live update can do that.
  const pressedAt = useRef<{ x: number; y: number } | null>(null);
  const onPlotPointerDown = (e: React.PointerEvent<HTMLDivElement>) => {
    pressedAt.current = e.button === 0 && e.isPrimary ? { x: e.clientX, y: e.clientY } : null;
  };
  const onPlotPointerUp = (e: React.PointerEvent<HTMLDivElement>) => {
    const pressed = pressedAt.current;
    pressedAt.current = null;
    // A drag (more than a few pixels) is not a click.
    if (!pressed || e.button !== 0 || Math.hypot(e.clientX - pressed.x, e.clientY - pressed.y) > 6) return;
    let i = hoveredKey === null ? -1 : keys.indexOf(hoveredKey);
    // No move reported yet (a busy browser can run recharts' throttled move after the press): the pointer's place on the plot.
    if (i < 0) i = pointIndexAt(e.clientX, e.currentTarget.querySelector(".recharts-cartesian-grid") ?? e.currentTarget, count);
    if (i >= 0 && hrefAt) router.push(hrefAt(i));
  };

  return (
    <figure
      aria-labelledby={headingId}
      className={cx(
        "relative min-w-0 rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900/40",
        "[--chart-bg:#ffffff] [--chart-border:#d4d4d8] [--chart-fg:#18181b] [--chart-grid:#e4e4e7] [--chart-muted:#52525b]",
        "dark:[--chart-bg:#18181b] dark:[--chart-border:#3f3f46] dark:[--chart-fg:#f4f4f5] dark:[--chart-grid:#27272a] dark:[--chart-muted:#a1a1aa]",
        className,
      )}
    >
      <figcaption className="mb-2 flex flex-wrap items-baseline justify-between gap-x-3">
        <h2 id={headingId} className="text-sm font-semibold">
          {title}
        </h2>
        {subtitle ? <span className="text-xs text-zinc-600 dark:text-zinc-400">{subtitle}</span> : null}
        <span className="sr-only">{summary}</span>
      </figcaption>
      {legend}
      <div
        ref={plotRef}
        className={cx(
          "relative h-52 rounded outline-none focus-visible:ring-2 focus-visible:ring-sky-500",
          hrefAt && count > 0 && "cursor-pointer",
        )}
        data-chart={title}
        tabIndex={count > 0 ? 0 : undefined}
        role="group"
        aria-roledescription="chart"
        aria-label={title}
        aria-describedby={helpId}
        onKeyDown={onKeyDown}
        onPointerDown={onPlotPointerDown}
        onPointerUp={onPlotPointerUp}
        onPointerCancel={() => {
          pressedAt.current = null;
        }}
        onFocus={() => {
          if (active === null) choose(count > 0 ? count - 1 : null);
        }}
        onBlur={() => choose(null)}
      >
        {children({ activeIndex: active, pointerHandlers })}
        {isEmpty ? (
          <p className="pointer-events-none absolute inset-0 flex items-center justify-center text-sm text-zinc-600 dark:text-zinc-400">
            {emptyText ?? "Nothing recorded in this window"}
          </p>
        ) : null}
      </div>
      <p id={helpId} className="sr-only">
        {count > 0 ? `Arrow keys move between the ${count} points${hrefAt ? "; Enter opens that point's events" : ""}.` : "No points."}
      </p>
      {/* Always in the page (and its line kept), so a screen reader hears each change and nothing jumps. */}
      <p aria-live="polite" aria-atomic="true" data-chart-readout className="mt-1 min-h-4 text-xs tabular-nums text-zinc-700 dark:text-zinc-300">
        {active !== null ? navigation.describe(active) : ""}
      </p>
    </figure>
  );
}
