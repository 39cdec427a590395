import Link from "next/link";
import { RelativeTime } from "@/components/ui/relative-time";

/** "the hour", "the 6 hours": a named window's length as the statement reads it. */
const WINDOW_SPANS: Record<string, string> = {
  "15m": "the 15 minutes",
  "1h": "the hour",
  "6h": "the 6 hours",
  "24h": "the 24 hours",
  "7d": "the 7 days",
  "30d": "the 30 days",
  custom: "the range",
};

/** "2026-11-27 13:05:00", or only "13:05:00" when `sameDayAs` is on the same UTC day. */
function formatMoment(iso: string, sameDayAs?: string): string {
  const text = new Date(iso).toISOString().replace("T", " ").replace(/\.000Z$|Z$/, "");
  return sameDayAs !== undefined && sameDayAs.slice(0, 10) === iso.slice(0, 10) ? text.slice(11) : text;
}

/**
 * Says in place what a page shows when `at=` moves its window off now: "Expired leases between
 * 13:05:00 and 14:05:00 UTC — the hour ending at the moment in the link", with **Back to now**
 * (every filter kept, the window too). A page read as of a past moment must never pass for live.
 */
export function WindowStatement({
  what,
  from,
  endsAt,
  window,
  nowHref,
  testId = "window-statement",
}: {
  /** What is listed or counted, capitalised: "Expired leases", "Events". */
  what: string;
  from: string;
  /** The window's end (`at`). */
  endsAt: string;
  window: string;
  nowHref: string;
  testId?: string;
}) {
  return (
    <div
      role="note"
      aria-label="Window shown"
      data-testid={testId}
      className="flex flex-wrap items-center justify-between gap-3 rounded-lg border border-violet-300 bg-violet-50 px-4 py-3 text-sm text-violet-950 dark:border-violet-700 dark:bg-violet-950 dark:text-violet-100"
    >
      <p>
        <strong className="font-semibold">
          {what} between{" "}
          <time dateTime={from} className="font-mono">
            {formatMoment(from)}
          </time>{" "}
          and{" "}
          <time dateTime={endsAt} className="font-mono">
            {formatMoment(endsAt, from)}
          </time>{" "}
          UTC
        </strong>{" "}
        — {WINDOW_SPANS[window] ?? "the window"} ending at the moment in the link (<code className="font-mono">at=</code>,{" "}
        <RelativeTime value={endsAt} />
        ), not now.
      </p>
      <Link href={nowHref} className="rounded font-medium underline underline-offset-2">
        Back to now
      </Link>
    </div>
  );
}
