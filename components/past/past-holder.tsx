import { StoreReadProblems } from "@/components/locks/read-notices";
import type { PastLeasesView } from "@/lib/console/past/past-views";
import { PastGaps } from "./past-gaps";
import { PastLeasesTable } from "./past-leases-table";
import { PastViewBanner } from "./past-view-banner";

/** The lease page's `?at=`: who held this resource at the instant (above its live page). */
export function PastHolder({ view, nowHref }: { view: PastLeasesView; nowHref: string }) {
  const isAnswered = view.gaps.length === 0 && view.stores.every((s) => s.ok);
  return (
    <section aria-labelledby="past-holder" className="space-y-3">
      <h2 id="past-holder" className="sr-only">
        Holder at the instant
      </h2>
      <PastViewBanner at={view.at} nowHref={nowHref} what="the holder of this resource" />
      <PastGaps gaps={view.gaps} />
      <StoreReadProblems stores={view.stores} />
      {view.items.length > 0 ? (
        <PastLeasesTable items={view.items} at={view.at} />
      ) : isAnswered ? (
        <p className="rounded-lg border border-dashed border-zinc-300 px-4 py-3 text-sm dark:border-zinc-700" data-testid="past-nobody">
          Nobody held this resource at that instant.
        </p>
      ) : null}
      <p className="text-xs text-zinc-600 dark:text-zinc-400">Below: the lease as it is now, and its history.</p>
    </section>
  );
}
