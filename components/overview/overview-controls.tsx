"use client";
import { usePathname, useRouter } from "next/navigation";
import { useId, useState, useTransition } from "react";
import { cx } from "@/components/ui/cx";
import { withParams } from "@/lib/console/shared/links";
import type { OverviewView, WindowName } from "@/lib/console/shared/views";

const WINDOWS: { value: WindowName; label: string }[] = [
  { value: "15m", label: "15m" },
  { value: "1h", label: "1h" },
  { value: "6h", label: "6h" },
  { value: "24h", label: "24h" },
  { value: "7d", label: "7d" },
  { value: "30d", label: "30d" },
  { value: "custom", label: "Custom" },
];

/** "2026-04-01T10:00:00.000Z" → "2026-04-01T10:00" for a datetime-local input (shown and read as UTC). */
function toInputValue(iso: string): string {
  return iso.slice(0, 16);
}

/** A required datetime-local field, labelled; its value is read as UTC. */
function UtcInput({ label, value, onChange }: { label: string; value: string; onChange: (value: string) => void }) {
  return (
    <label className="text-xs font-medium text-zinc-600 dark:text-zinc-400">
      {label}
      <input
        type="datetime-local"
        required
        value={value}
        onChange={(e) => onChange(e.target.value)}
        className="mt-1 block rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm text-zinc-900 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100"
      />
    </label>
  );
}

/**
 * The prefix the whole overview is narrowed to: Enter applies it, "×" removes it.
 * No Apply button: Enter is how a search field submits, and every tab stop here
 * delays the overview's first drill-down link.
 * The window stays as it is: a store that cannot count the prefix over it says so in place.
 */
function PrefixFilter({ prefix, onApply }: { prefix: string | null; onApply: (changes: Record<string, string | null>) => void }) {
  const id = useId();
  const [value, setValue] = useState(prefix ?? "");
  const apply = (next: string) => onApply({ prefix: next === "" ? null : next });
  return (
    <form
      role="search"
      aria-label="Narrow the overview to a prefix"
      className="flex items-end gap-1"
      onSubmit={(e) => {
        e.preventDefault();
        apply(value.trim());
      }}
    >
      <div>
        {/* The label names the field alone; "×" is a sibling with its own name. */}
        <label htmlFor={id} className="mb-1 block text-xs font-medium text-zinc-600 dark:text-zinc-400">
          Prefix
        </label>
        <span className="relative flex">
          <input
            id={id}
            type="search"
            name="prefix"
            value={value}
            onChange={(e) => setValue(e.target.value)}
            placeholder="tenant_1:billing ⏎"
            spellCheck={false}
            autoComplete="off"
            className={cx(
              "block w-48 rounded-md border border-zinc-300 bg-white py-1 pl-2 font-mono text-sm text-zinc-900 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100 [&::-webkit-search-cancel-button]:hidden",
              prefix !== null ? "pr-7" : "pr-2",
            )}
          />
          {prefix !== null ? (
            <button
              type="button"
              aria-label={`Remove the prefix filter ${prefix}`}
              title="Remove the prefix filter"
              onClick={() => {
                setValue("");
                apply("");
              }}
              className="absolute inset-y-0 right-0 px-2 text-base leading-none text-zinc-600 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-zinc-100"
            >
              ×
            </button>
          ) : null}
        </span>
      </div>
    </form>
  );
}

/**
 * Window, prefix, prefix depth and store: all in the URL (router.replace, so the back
 * button isn't flooded), which re-renders the server page and re-keys the query.
 */
export function OverviewControls({ view, search }: { view: OverviewView; search: string }) {
  const router = useRouter();
  const pathname = usePathname();
  const [isPending, startTransition] = useTransition();
  const [isCustomOpen, setIsCustomOpen] = useState(view.window === "custom");
  // The range as asked, not the whole UTC days a long one is widened to: applying again changes nothing.
  const [from, setFrom] = useState(toInputValue(view.requested?.from ?? view.from));
  const [to, setTo] = useState(toInputValue(view.requested?.to ?? view.to));
  // The window choice that holds the toolbar's tab stop: the last one moved to, else the chosen one.
  const [focusedWindow, setFocusedWindow] = useState<WindowName | null>(null);
  const chosenWindow: WindowName = isCustomOpen ? "custom" : view.window;

  const replace = (changes: Record<string, string | null>) =>
    startTransition(() => router.replace(`${pathname}${withParams(search, changes)}`, { scroll: false }));

  const chooseWindow = (value: WindowName) => {
    if (value === "custom") {
      setIsCustomOpen(true);
      return;
    }
    setIsCustomOpen(false);
    replace({ window: value, from: null, to: null });
  };

  return (
    <div className="flex flex-wrap items-end gap-x-5 gap-y-2" aria-busy={isPending}>
      <div>
        <span id="window-label" className="mb-1 block text-xs font-medium text-zinc-600 dark:text-zinc-400">
          Window
        </span>
        {/* A toolbar: one tab stop (the chosen window), arrow keys move between the choices. */}
        <div
          role="toolbar"
          aria-labelledby="window-label"
          className="inline-flex rounded-md border border-zinc-300 dark:border-zinc-700"
          onKeyDown={(e) => {
            const moves: Record<string, number> = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
            const buttons = [...e.currentTarget.querySelectorAll("button")];
            const at = buttons.indexOf(e.target as HTMLButtonElement);
            let next: number | undefined;
            if (e.key in moves) next = (at + moves[e.key]! + buttons.length) % buttons.length;
            else if (e.key === "Home") next = 0;
            else if (e.key === "End") next = buttons.length - 1;
            if (next === undefined || at < 0) return;
            e.preventDefault();
            setFocusedWindow(WINDOWS[next]!.value);
            buttons[next]!.focus();
          }}
        >
          {WINDOWS.map((w) => {
            const isActive = w.value === "custom" ? isCustomOpen : !isCustomOpen && view.window === w.value;
            return (
              <button
                key={w.value}
                type="button"
                aria-pressed={isActive}
                tabIndex={w.value === (focusedWindow ?? chosenWindow) ? 0 : -1}
                onClick={() => chooseWindow(w.value)}
                className={cx(
                  "px-2.5 py-1 text-sm font-medium first:rounded-l-md last:rounded-r-md",
                  isActive ? "bg-zinc-900 text-white dark:bg-zinc-100 dark:text-zinc-900" : "hover:bg-zinc-100 dark:hover:bg-zinc-800",
                )}
              >
                {w.label}
              </button>
            );
          })}
        </div>
      </div>
      {isCustomOpen ? (
        <form
          className="flex items-end gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            replace({ window: "custom", from: `${from}:00Z`, to: `${to}:00Z` });
          }}
        >
          <UtcInput label="From (UTC)" value={from} onChange={setFrom} />
          <UtcInput label="To (UTC)" value={to} onChange={setTo} />
          <button type="submit" className="rounded-md bg-zinc-900 px-3 py-1.5 text-sm font-medium text-white dark:bg-zinc-100 dark:text-zinc-900">
            Apply
          </button>
        </form>
      ) : null}
      {/* Keyed by the applied prefix, so the field follows the URL (back button, a cleared filter). */}
      <PrefixFilter key={view.prefix ?? ""} prefix={view.prefix} onApply={replace} />
      <label className="text-xs font-medium text-zinc-600 dark:text-zinc-400">
        Prefix depth
        <select
          value={String(view.depth)}
          onChange={(e) => replace({ depth: e.target.value })}
          className="mt-1 block rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm text-zinc-900 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100"
        >
          <option value="1">1 segment (tenant)</option>
          <option value="2">2 segments</option>
          <option value="3">3 segments</option>
        </select>
      </label>
      <label className="text-xs font-medium text-zinc-600 dark:text-zinc-400">
        Store
        <select
          value={view.selectedStore ?? ""}
          onChange={(e) => replace({ store: e.target.value || null })}
          className="mt-1 block rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm text-zinc-900 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100"
        >
          <option value="">All stores</option>
          {view.storeNames.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      {isPending ? <span className="pb-1.5 text-xs text-zinc-500 dark:text-zinc-400" role="status">Updating…</span> : null}
    </div>
  );
}
