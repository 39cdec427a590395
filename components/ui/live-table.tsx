"use client";
import { useCallback, useEffect, useReducer, useRef, useSyncExternalStore } from "react";
import { cx } from "./cx";
import { formatRelative, formatUtc } from "./format";
import { REFRESH_CHOICES, type RefreshChoice } from "./live-refresh";
import { useNow } from "./use-now";

/**
 * Live tables that hold still. Polling goes on, but while the viewer is reading —
 * pointer over the table, focus inside it, or the page scrolled down — the rows on
 * screen stay as they were, and what arrived since is offered as "12 new events —
 * show" instead of pushing the row under the cursor away.
 */

export type HoldReason = "pointer" | "focus" | "scroll";

/** Scrolled further than this, the viewer is reading down the list. */
const SCROLL_HOLD_PX = 24;

const HOLD_WORDS: Record<HoldReason, string> = {
  pointer: "while the pointer is over the table",
  focus: "while the table has focus",
  scroll: "while scrolled down",
};

interface Snapshot<V> {
  view: V;
  at: number;
  /** The query (filters, page) the view answers; a frozen view of another query is never shown. */
  scope: string;
}

interface HoldState<V> {
  reasons: readonly HoldReason[];
  /** What stays on screen while held; null shows the latest data. */
  frozen: Snapshot<V> | null;
}

type HoldAction<V> =
  | { type: "hold"; reason: HoldReason; onScreen: Snapshot<V> }
  | { type: "release"; reason: HoldReason }
  | { type: "show"; latest: Snapshot<V> };

function reduceHold<V>(state: HoldState<V>, action: HoldAction<V>): HoldState<V> {
  switch (action.type) {
    case "hold":
      if (state.reasons.includes(action.reason)) return state;
      // The first hold freezes exactly what is on screen at that moment.
      return { reasons: [...state.reasons, action.reason], frozen: state.frozen?.scope === action.onScreen.scope ? state.frozen : action.onScreen };
    case "release": {
      if (!state.reasons.includes(action.reason)) return state;
      const reasons = state.reasons.filter((r) => r !== action.reason);
      return { reasons, frozen: reasons.length > 0 ? state.frozen : null };
    }
    case "show":
      return { ...state, frozen: state.reasons.length > 0 ? action.latest : null };
  }
}

export interface HeldView<V> {
  /** What to render. */
  view: V;
  /** When `view` was read (browser clock). */
  updatedAt: number;
  reasons: readonly HoldReason[];
  /** Newer data with other rows than `view` has arrived (rows changing in place do not count). */
  hasPending: boolean;
  /** Rows in the newer data that `view` does not have. */
  pendingNew: number;
  /** Rows in `view` that the newer data no longer has. */
  pendingGone: number;
  showLatest: () => void;
  /** Spread on the element around the table and its bar, so reaching for "show" keeps the rows still. */
  pointerProps: { onPointerMove: () => void; onPointerLeave: () => void };
  /** Spread on the element around the table only: focus on the refresh picker must not pause the table. */
  focusProps: { onFocus: () => void; onBlur: (event: React.FocusEvent<HTMLElement>) => void };
}

/**
 * `scope` names the query the view answers (its search string): following a link
 * from the table changes it, and the new page must not show the old rows.
 * `keysOf` names each row of a view, to count the new ones.
 */
export function useHeldView<V>(latest: V, latestAt: number, scope: string, keysOf: (view: V) => readonly string[]): HeldView<V> {
  const [state, dispatch] = useReducer(reduceHold<V>, { reasons: [], frozen: null });
  const frozen = state.frozen?.scope === scope ? state.frozen : null;
  // Followed a link while holding: hold the new page's rows from here on.
  if (state.frozen && !frozen && state.reasons.length > 0) dispatch({ type: "show", latest: { view: latest, at: latestAt, scope } });
  const shown: Snapshot<V> = frozen ?? { view: latest, at: latestAt, scope };
  // Read by the scroll listener, which lives across renders.
  const shownRef = useRef(shown);
  useEffect(() => {
    shownRef.current = shown;
  });

  useEffect(() => {
    const onScroll = () => {
      if (window.scrollY > SCROLL_HOLD_PX) dispatch({ type: "hold", reason: "scroll", onScreen: shownRef.current });
      else dispatch({ type: "release", reason: "scroll" });
    };
    onScroll();
    window.addEventListener("scroll", onScroll, { passive: true });
    return () => window.removeEventListener("scroll", onScroll);
  }, []);

  let pendingNew = 0;
  let pendingGone = 0;
  if (frozen !== null && frozen.view !== latest) {
    const onScreen = new Set(keysOf(frozen.view));
    const newer = keysOf(latest);
    for (const key of newer) if (!onScreen.has(key)) pendingNew++;
    pendingGone = onScreen.size - (newer.length - pendingNew);
  }
  const hasPending = pendingNew + pendingGone > 0;

  const hold = (reason: HoldReason) => dispatch({ type: "hold", reason, onScreen: shown });
  const showLatest = useCallback(() => dispatch({ type: "show", latest: { view: latest, at: latestAt, scope } }), [latest, latestAt, scope]);

  return {
    view: shown.view,
    updatedAt: shown.at,
    reasons: state.reasons,
    hasPending,
    pendingNew,
    pendingGone,
    showLatest,
    pointerProps: {
      // On a move, not on enter: content that shifts under a resting pointer (a dialog closing, a
      // page reflowing) makes the browser send an enter, but nobody is reading there yet. A move
      // also catches a pointer that entered before the page was interactive. Holding again while
      // held changes nothing (the reducer returns the same state, no render).
      onPointerMove: () => hold("pointer"),
      onPointerLeave: () => dispatch({ type: "release", reason: "pointer" }),
    },
    focusProps: {
      onFocus: () => hold("focus"),
      onBlur: (event) => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) dispatch({ type: "release", reason: "focus" });
      },
    },
  };
}

/**
 * The line above a live table: "N new events — show" on the left; the refresh
 * picker, "updated 3 s ago" and whether updates are paused on the right. Always
 * the same height, so a notice appearing never moves the table.
 */
export function LiveTableBar({
  held,
  noun,
  choice,
  onChoice,
  onRefreshNow,
  isFetching,
  problem,
}: {
  held: HeldView<unknown>;
  /** Singular and plural row names: ["event", "events"]. */
  noun: readonly [string, string];
  choice: RefreshChoice;
  onChoice: (choice: RefreshChoice) => void;
  onRefreshNow: () => void;
  isFetching: boolean;
  /** Why the last live update failed, if it did. */
  problem?: string | null;
}) {
  const now = useNow();
  const isHydrated = useIsHydrated();
  const isPaused = held.reasons.length > 0 && choice !== "off";
  // The server's HTML says "refresh now". A page hydrated after its data went stale already has
  // its first refetch pending: saying so before hydration ends would not match that HTML, and
  // React would rebuild the page, dropping the reader's focus.
  const isRefreshing = isHydrated && isFetching;
  const rows = (n: number, adjective = "") => `${n.toLocaleString("en-US")} ${adjective}${n === 1 ? noun[0] : noun[1]}`;
  // With a full page, new rows push old ones off the end: only the new ones are news.
  const notice = !held.hasPending ? null : held.pendingNew > 0 ? rows(held.pendingNew, "new ") : `${rows(held.pendingGone)} no longer listed`;
  return (
    <div className="flex min-h-8 flex-wrap items-center justify-between gap-x-4 gap-y-1 text-sm">
      <div aria-live="polite" className="min-w-0">
        {notice ? (
          <button
            type="button"
            onClick={held.showLatest}
            className="rounded-md bg-sky-700 px-2.5 py-1 text-xs font-semibold text-white hover:bg-sky-800 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-sky-600 dark:bg-sky-600 dark:hover:bg-sky-500"
          >
            {notice} — show
          </button>
        ) : null}
      </div>
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1 text-zinc-600 dark:text-zinc-400">
        {problem ? <span className="text-amber-700 dark:text-amber-300">live update failed: {problem}</span> : null}
        {isPaused ? (
          <span className="inline-flex items-center gap-1 font-medium text-amber-800 dark:text-amber-300" title={`Updates are held ${held.reasons.map((r) => HOLD_WORDS[r]).join(" and ")}`}>
            {/* Two bars drawn, not a glyph: not every font has ⏸. */}
            <span aria-hidden="true" className="inline-flex h-3 gap-0.5">
              <span className="w-1 rounded-sm bg-current" />
              <span className="w-1 rounded-sm bg-current" />
            </span>
            paused <span className="font-normal">{HOLD_WORDS[held.reasons[0]!]}</span>
          </span>
        ) : null}
        <span suppressHydrationWarning title={held.updatedAt ? formatUtc(held.updatedAt) : undefined}>
          updated {held.updatedAt ? formatRelative(held.updatedAt, Math.max(now, held.updatedAt)) : "—"}
        </span>
        <button
          type="button"
          onClick={onRefreshNow}
          disabled={isRefreshing}
          // Wide enough for either label, so a poll never nudges the bar.
          className={cx("min-w-[6.5rem] rounded px-1.5 py-0.5 text-right underline underline-offset-2 hover:text-zinc-900 disabled:no-underline disabled:opacity-60 dark:hover:text-zinc-100")}
        >
          {isRefreshing ? "refreshing…" : "refresh now"}
        </button>
        <label className="inline-flex items-center gap-1.5">
          Refresh
          <select
            value={choice}
            // Until the page is interactive a change would not be saved, and would snap back.
            disabled={!isHydrated}
            onChange={(e) => onChoice(e.target.value as RefreshChoice)}
            className="rounded-md border border-zinc-300 bg-white px-1.5 py-0.5 text-sm text-zinc-900 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100"
          >
            {REFRESH_CHOICES.map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ))}
          </select>
        </label>
      </div>
    </div>
  );
}

const subscribeNever = () => () => {};

/** False in the server's HTML, true once React runs in the browser. */
function useIsHydrated(): boolean {
  return useSyncExternalStore(subscribeNever, () => true, () => false);
}
