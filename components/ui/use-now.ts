"use client";
import { useSyncExternalStore } from "react";

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

/**
 * Ticks once a second. `serverNow` (the server's render time) is used for the server render and hydration.
 * Without it the server reads the clock: `lastTick` only advances while a browser subscribes, so on the
 * server it would be the time the module was loaded.
 */
export function useNow(serverNow?: number): number {
  return useSyncExternalStore(subscribe, getSnapshot, () => serverNow ?? (typeof window === "undefined" ? Date.now() : lastTick));
}
