import Link from "next/link";
import { FIELD, FilterActions, LABEL, StoreSelect } from "@/components/locks/filter-fields";
import { PartialReadNotice, StoreReadProblems } from "@/components/locks/read-notices";
import { EmptyState } from "@/components/ui/empty-state";
import { locksHref, withParams } from "@/lib/console/shared/links";
import type { PastLeasesView } from "@/lib/console/past/past-views";
import { PastGaps } from "./past-gaps";
import { PastLeasesTable } from "./past-leases-table";
import { PastViewBanner } from "./past-view-banner";
import { ShareLink } from "./share-link";

/**
 * `/locks?at=`: what was held at an instant. Rendered on the server and not polled —
 * the past does not change (only "still held" may have ended since; reload to see).
 */
export function PastLeases({ view, search }: { view: PastLeasesView; search: string }) {
  const params = new URLSearchParams(search);
  const value = (key: string) => params.get(key) ?? "";
  // Now is the same page without `at`: every other filter stays, the window too.
  const nowHref = `/locks${withParams(search, { at: null })}`;
  const state = params.get("state");
  // Filters this form has no field for ride along, so applying it keeps what the link asked for.
  const kept = (["window", "from", "to", "state", "sort"] as const).filter((key) => params.get(key));
  const isPartial = view.stores.some((s) => s.ok && s.data.partial);
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h1 className="text-lg font-semibold tracking-tight">Leases held at an instant</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          {view.items.length} {view.items.length === 1 ? "holder" : "holders"}
          {view.hasMore ? ` shown (the ${view.limit} held longest; narrow with a prefix, owner or task)` : isPartial ? " found before a store stopped reading" : ""}
        </p>
      </div>
      <PastViewBanner at={view.at} nowHref={nowHref} what="leases held" />
      {state && state !== "held" ? <PastStateNote state={state} nowHref={nowHref} /> : null}
      {/* A GET form: the filters and the instant stay in the URL, so the view can be linked. */}
      <form method="get" action="/locks" className="flex flex-wrap items-end gap-3" aria-label="Filter the past view">
        <div className="w-64">
          <label htmlFor="past-at" className={LABEL}>
            Instant (UTC, ISO 8601)
          </label>
          <input id="past-at" name="at" defaultValue={view.at} className={`${FIELD} font-mono`} />
        </div>
        <StoreSelect id="past-store" defaultValue={value("store")} storeNames={view.storeNames} />
        {(["prefix", "owner", "task"] as const).map((key) => (
          <div key={key} className="w-44">
            <label htmlFor={`past-${key}`} className={LABEL}>
              {key[0]!.toUpperCase() + key.slice(1)}
            </label>
            <input id={`past-${key}`} name={key} defaultValue={value(key)} className={FIELD} />
          </div>
        ))}
        {kept.map((key) => (
          <input key={key} type="hidden" name={key} value={value(key)} />
        ))}
        <FilterActions clearHref={locksHref({ at: view.at })} />
      </form>
      <ShareLink path="/locks" search={search} />
      <PastGaps gaps={view.gaps} />
      <StoreReadProblems stores={view.stores} />
      <PartialReadNotice stores={view.stores} noun="holders" narrowing="narrow by a longer prefix" />
      {view.items.length === 0 ? (
        view.gaps.length === view.stores.length || isPartial ? null : (
          <EmptyState title="Nothing was held at this instant">
            No lease matching these filters was held then on the stores that could answer. Try a broader prefix, or another instant.
          </EmptyState>
        )
      ) : (
        <PastLeasesTable items={view.items} at={view.at} />
      )}
    </div>
  );
}

/**
 * Overdue, lapsed and expiring are states of a live lease, judged from its last renewal; the
 * history records acquires and endings, not heartbeats, so at a past moment the list cannot be
 * narrowed by them. Said in place, rather than dropping the filter without a word.
 */
function PastStateNote({ state, nowHref }: { state: string; nowHref: string }) {
  return (
    <p role="note" aria-label="State filter" data-testid="past-state-note" className="text-sm text-zinc-700 dark:text-zinc-300">
      <strong className="font-semibold">Every holder is listed, not only {state} ones:</strong> {state} is judged from a lease&apos;s last renewal, and
      the history keeps no renewals. A hold that ended “expired” below stopped renewing. The leases {state} now are under{" "}
      <Link href={nowHref} className="underline underline-offset-2">
        Back to now
      </Link>
      .
    </p>
  );
}
