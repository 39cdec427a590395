"use client";
import { useState, useSyncExternalStore } from "react";

/**
 * The current time, re-rendering once a second. All subscribers share one timer
 * so a table of 200 countdowns ticks together on a single interval.
 */
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;
let lastTick = Date.now();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (!timer) {
    lastTick = Date.now();
    timer = setInterval(() => {
      lastTick = Date.now();
      for (const l of listeners) l();
    }, 1_000);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

const getSnapshot = () => lastTick;
/** Wall clock read for one-off measurements (not a render dependency). */
const readClock = () => Date.now();

/**
 * Ticks once a second. `serverNow` (the server's render time) is used for the server render and hydration.
 * Without it the server reads the clock: `lastTick` only advances while a browser subscribes, so on the
 * server it would be the time the module was loaded.
 */
export function useNow(serverNow?: number): number {
  return useSyncExternalStore(subscribe, getSnapshot, () => serverNow ?? (typeof window === "undefined" ? Date.now() : lastTick));
}

/**
 * Difference between the store's clock and this browser's clock, from a store
 * timestamp read just now (e.g. `LeasePage.now`). Countdowns add it so "expires in"
 * is measured on the store's clock — the clock that actually enforces the TTL.
 */
export function useStoreClockOffset(storeNow: string | Date | undefined): number {
  const ms = storeNow === undefined ? NaN : storeNow instanceof Date ? storeNow.getTime() : Date.parse(storeNow);
  // Re-measured only when a new store timestamp arrives (each poll), not on every tick.
  const [state, setState] = useState<{ ms: number; offset: number }>({ ms: NaN, offset: 0 });
  if (Number.isFinite(ms) && ms !== state.ms) {
    setState({ ms, offset: ms - readClock() });
  }
  return state.offset;
}
