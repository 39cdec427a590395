"use client";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useId, useRef, useState } from "react";
import { formatUtc } from "@/components/ui/format";
import { locksHref, withParams } from "@/lib/console/shared/links";

/** URL updates wait for the slider to rest this long, so dragging does not flood the history. */
const COMMIT_DELAY_MS = 350;

/**
 * Moves `at` along the window: a range input (arrow keys step, Page Up/Down jump), the
 * chosen instant in UTC, and a link to what was held then. The charts read `at` from the
 * URL and mark it.
 */
export function TimeScrubber({
  path,
  search,
  from,
  to,
  at,
  store,
  resource,
  pinsRange = false,
}: {
  path: string;
  search: string;
  from: string;
  to: string;
  at: string | null;
  store?: string | null;
  resource?: string;
  /**
   * The overview: `at` with a named window is where that window ends, so moving the instant
   * first pins the window shown as its absolute range and marks the instant inside it.
   */
  pinsRange?: boolean;
}) {
  const router = useRouter();
  const id = useId();
  const fromMs = Date.parse(from);
  const toMs = Math.max(fromMs + 1_000, Date.parse(to) - 1);
  const step = Math.max(1_000, Math.round((toMs - fromMs) / 1_000 / 1_000) * 1_000);
  const clamp = (ms: number) => Math.min(toMs, Math.max(fromMs, ms));
  const [value, setValue] = useState(() => clamp(at ? Date.parse(at) : toMs));
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);

  const commit = (ms: number) => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      const range = pinsRange ? { window: "custom", from, to } : {};
      router.replace(`${path}${withParams(search, { ...range, at: new Date(ms).toISOString() }, true)}`, { scroll: false });
    }, COMMIT_DELAY_MS);
  };
  const chosen = new Date(value).toISOString();
  const heldThen = resource ? `${path}?at=${encodeURIComponent(chosen)}` : locksHref({ ...(store ? { store } : {}), at: chosen });

  return (
    <div className="flex flex-wrap items-center gap-3 rounded-lg border border-zinc-200 px-3 py-2 text-sm dark:border-zinc-800">
      <label htmlFor={id} className="font-medium">
        Instant
      </label>
      <input
        id={id}
        type="range"
        min={fromMs}
        max={toMs}
        step={step}
        value={value}
        aria-valuetext={formatUtc(value)}
        onChange={(e) => {
          const ms = clamp(Number(e.currentTarget.value));
          setValue(ms);
          commit(ms);
        }}
        className="min-w-[16rem] flex-1 accent-violet-600"
      />
      <time dateTime={chosen} className="font-mono text-xs" data-testid="scrubber-instant">
        {formatUtc(value)}
      </time>
      <Link href={heldThen} className="font-medium underline underline-offset-2">
        {resource ? "Holder at this instant" : "Leases held at this instant"}
      </Link>
      {at ? (
        <Link href={`${path}${withParams(search, { at: null }, true)}`} className="text-zinc-600 underline underline-offset-2 dark:text-zinc-400">
          Clear
        </Link>
      ) : null}
    </div>
  );
}
