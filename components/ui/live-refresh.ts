"use client";
import { useSyncExternalStore } from "react";
import { LIVE_POLL_MS } from "@/lib/console/shared/fetch-view";

/**
 * How often live tables refresh, chosen once and remembered in this browser
 * (localStorage), so every list and every tab follows the same choice.
 */
export const REFRESH_CHOICES = [
  { value: "off", label: "Off", ms: null },
  { value: "5s", label: "5 s", ms: LIVE_POLL_MS },
  { value: "15s", label: "15 s", ms: 15_000 },
  { value: "1m", label: "1 min", ms: 60_000 },
] as const;

export type RefreshChoice = (typeof REFRESH_CHOICES)[number]["value"];

const STORAGE_KEY = "leasewatch.refresh";
const DEFAULT_CHOICE: RefreshChoice = "5s";
const listeners = new Set<() => void>();
/** Set once chosen on this page: still applies when storage refuses to keep it. */
let chosen: RefreshChoice | null = null;

function isChoice(value: unknown): value is RefreshChoice {
  return REFRESH_CHOICES.some((c) => c.value === value);
}

function read(): RefreshChoice {
  if (chosen) return chosen;
  try {
    const stored = window.localStorage.getItem(STORAGE_KEY);
    return isChoice(stored) ? stored : DEFAULT_CHOICE;
  } catch {
    // Storage refused (private mode, policy): the default, not an error.
    return DEFAULT_CHOICE;
  }
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  // Another tab chose: follow it.
  const onStorage = (event: StorageEvent) => {
    if (event.key !== STORAGE_KEY) return;
    chosen = isChoice(event.newValue) ? event.newValue : null;
    listener();
  };
  window.addEventListener("storage", onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener("storage", onStorage);
  };
}

function choose(next: RefreshChoice): void {
  chosen = next;
  try {
    window.localStorage.setItem(STORAGE_KEY, next);
  } catch {
    // Not remembered past this page, but applied.
  }
  for (const l of listeners) l();
}

/** The refresh choice, its interval (null when off) and a setter that remembers it. */
export function useRefreshChoice(): { choice: RefreshChoice; intervalMs: number | null; setChoice: (choice: RefreshChoice) => void } {
  const choice = useSyncExternalStore(subscribe, read, () => DEFAULT_CHOICE);
  return { choice, intervalMs: REFRESH_CHOICES.find((c) => c.value === choice)?.ms ?? null, setChoice: choose };
}
