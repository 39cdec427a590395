"use client";
import Link from "next/link";
import { useMemo } from "react";
import { EventTable, eventRowKey } from "@/components/locks/event-table";
import { Pager } from "@/components/locks/pager";
import { PartialReadNotice, StoreReadProblems } from "@/components/locks/read-notices";
import { WindowStatement } from "@/components/past/window-statement";
import { EmptyState } from "@/components/ui/empty-state";
import { withParams } from "@/lib/console/shared/links";
import { formatUtc } from "@/components/ui/format";
import { useRefreshChoice } from "@/components/ui/live-refresh";
import { LiveTableBar, useHeldView } from "@/components/ui/live-table";
import { useEventsQuery } from "@/lib/console/events/events-query";
import type { EventsView } from "@/lib/console/shared/views";
import { EventFilters } from "./event-filters";
import { ObservedEvents } from "./observed-events";
import { RetentionNotice } from "./retention-notice";

const eventKeysOf = (view: EventsView) => view.items.map(eventRowKey);
const observedCount = (n: number) => `${n} observed ${n === 1 ? "event" : "events"}`;

/** `summary`: the counts above the list (components/facets), rendered by the page. */
export function EventsClient({ search, initialData, summary }: { search: string; initialData: EventsView; summary?: React.ReactNode }) {
  const refresh = useRefreshChoice();
  const query = useEventsQuery(search, initialData, { intervalMs: refresh.intervalMs });
  // While the viewer reads the table, it holds still; newer events wait behind "N new events — show".
  const held = useHeldView(query.data ?? initialData, query.dataUpdatedAt, search, eventKeysOf);
  const view = held.view;
  const params = useMemo(() => new URLSearchParams(search), [search]);
  const isDefaultWindow = !params.get("window") && !params.get("from") && !params.get("to");
  const isPartial = view.stores.some((s) => s.ok && s.data.partial !== undefined);
  // `store=` naming an observed store: only its observed events are listed.
  const isObservedStore = view.observed?.storeNames.includes(params.get("store") ?? "") ?? false;
  const hasFilters = ["kind", "store", "prefix", "owner", "task", "token", "lease", "resource", "window", "from", "to"].some((k) => params.get(k));

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h1 className="text-lg font-semibold tracking-tight">Events</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          {isObservedStore ? observedCount(view.observed?.items.length ?? 0) : `${view.items.length} on this page`}, newest first
          {view.from && view.to ? (
            // A window ending at `at` includes it: name `at`, not the exclusive bound a millisecond later.
            <span title={`${formatUtc(view.from)} → ${formatUtc(view.to)}`}> · between {formatUtc(view.from)} and {formatUtc(view.endsAt ?? view.to)}</span>
          ) : null}
          {isDefaultWindow ? (
            <span data-testid="default-window">
              {view.endsAt ? " (the 24 h ending at at=: no window chosen)" : " (the last 24 h: no window chosen; pick one below for older events)"}
            </span>
          ) : null}
        </p>
      </div>
      {view.endsAt && view.from ? (
        <WindowStatement what="Events" from={view.from} endsAt={view.endsAt} window={params.get("window") ?? (params.get("from") ? "custom" : "24h")} nowHref={`/events${withParams(search, { at: null })}`} />
      ) : null}
      <EventFilters values={params} storeNames={view.storeNames} observedNames={view.observed?.storeNames ?? []} />
      {/* Above the summary: its counts come from the same raw events. */}
      <RetentionNotice notes={view.retention ?? []} />
      {/* The counts above the table keep the hold too: they refresh on their own and can grow, so a
          pointer on its way from the table to "N new events — show" may find itself over them. */}
      <div {...held.pointerProps} className="space-y-4">
        {summary}
        <StoreReadProblems stores={view.stores} />
        <PartialReadNotice stores={view.stores} noun="events" />
        <div className="space-y-1">
          <LiveTableBar
            held={held}
            noun={["event", "events"]}
            choice={refresh.choice}
            onChoice={refresh.setChoice}
            onRefreshNow={() => void query.refetch()}
            isFetching={query.isFetching}
            problem={query.isError ? query.error.message : null}
          />
          {isObservedStore ? null : view.items.length === 0 ? (
            hasFilters ? (
              isPartial ? (
                <EmptyState title="No matching event in what the stores read" action={<Link className="underline" href="/events">Clear the filters</Link>}>
                  A store stopped at its read budget before finding one (see above): narrow by prefix, owner or task, or choose a shorter window.
                </EmptyState>
              ) : (
                <EmptyState title="No event matches these filters" action={<Link className="underline" href="/events">Clear the filters</Link>}>
                  Widen the window, tick more kinds, or shorten the prefix.
                </EmptyState>
              )
            ) : (
              <EmptyState title="No events recorded yet">
                Every acquire, release, expiry, failed acquire and fencing rejection is recorded here as workers use the stores.
              </EmptyState>
            )
          ) : (
            <div {...held.focusProps}>
              <EventTable events={view.items} caption="Lease events" />
            </div>
          )}
        </div>
      </div>
      <div className="flex justify-end">
        <Pager basePath="/events" search={search} nextCursor={view.nextCursor} label="Events" />
      </div>
      {view.observed ? <ObservedEvents section={view.observed} /> : null}
    </div>
  );
}
