import type { PastGap } from "@/lib/console/past/past-views";

/** Stores that could not answer for the instant, and why (never an empty list that looks like "nothing was held"). */
export function PastGaps({ gaps }: { gaps: readonly PastGap[] }) {
  if (gaps.length === 0) return null;
  return (
    <ul role="status" className="space-y-1 rounded-lg border border-amber-300 bg-amber-50 px-4 py-2 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100">
      {gaps.map((g) => (
        <li key={g.store}>
          <strong className="font-semibold">Not shown for <span className="font-mono">{g.store}</span>:</strong> {g.message}.
        </li>
      ))}
    </ul>
  );
}
