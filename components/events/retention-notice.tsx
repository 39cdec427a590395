import Link from "next/link";
import { formatUtc } from "@/components/ui/format";
import type { EventRetentionNote } from "@/lib/console/shared/views";

const days = (n: number) => `${n} ${n === 1 ? "day" : "days"}`;

/**
 * What the stores no longer keep. When the window reaches back past a store's retained events,
 * an empty or short list there is not "nothing happened": say so, and where the counts still are.
 */
export function RetentionNotice({ notes }: { notes: readonly EventRetentionNote[] }) {
  const cut = notes.filter((n) => n.isWindowCut);
  const other = notes.filter((n) => !n.isWindowCut && n.retentionDays !== null);
  if (cut.length === 0 && other.length === 0) return null;
  return (
    <div className="space-y-1" data-testid="retention-notice">
      {cut.length > 0 ? (
        <div role="status" className="rounded-lg border border-amber-300 bg-amber-50 px-4 py-2 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100">
          <p className="font-semibold">Part of this window is older than the events kept.</p>
          <ul className="mt-1 space-y-0.5">
            {cut.map((n) => (
              <li key={n.store}>
                <span className="font-mono">{n.store}</span>
                {n.retentionDays !== null ? ` keeps raw events for ${days(n.retentionDays)}:` : ":"} its events before{" "}
                <time dateTime={n.retainedFrom ?? undefined} className="font-medium">
                  {n.retainedFrom ? formatUtc(n.retainedFrom) : "?"}
                </time>{" "}
                are no longer stored, so none are listed from before then.
              </li>
            ))}
          </ul>
          <p className="mt-1">
            Their counts are kept: the{" "}
            <Link href="/?window=7d" className="font-medium underline underline-offset-2">
              overview charts
            </Link>{" "}
            still show them.
          </p>
        </div>
      ) : null}
      {other.length > 0 ? (
        <p className="text-xs text-zinc-600 dark:text-zinc-400">
          {other.map((n, i) => (
            <span key={n.store}>
              {i > 0 ? "; " : ""}
              <span className="font-mono">{n.store}</span> keeps raw events for {days(n.retentionDays ?? 0)}
            </span>
          ))}
          . Charts keep their counts longer.
        </p>
      ) : null}
    </div>
  );
}
