import Link from "next/link";
import { formatUtc } from "@/components/ui/format";
import { RelativeTime } from "@/components/ui/relative-time";

/**
 * Says plainly that this is not the present: a past view looks like the live list,
 * and mistaking one for the other is how on-call releases the wrong lease.
 */
export function PastViewBanner({ at, nowHref, what }: { at: string; nowHref: string; what: string }) {
  return (
    <div
      role="note"
      aria-label="Past view"
      data-testid="past-view-banner"
      className="flex flex-wrap items-center justify-between gap-3 rounded-lg border border-violet-300 bg-violet-50 px-4 py-3 text-sm text-violet-950 dark:border-violet-700 dark:bg-violet-950 dark:text-violet-100"
    >
      <p>
        <strong className="font-semibold">Past view, not live:</strong> {what} at{" "}
        <time dateTime={at} className="font-mono">
          {formatUtc(at)}
        </time>{" "}
        (<RelativeTime value={at} />), rebuilt from the stores’ event history.
      </p>
      <Link href={nowHref} className="rounded font-medium underline underline-offset-2">
        Back to now
      </Link>
    </div>
  );
}
