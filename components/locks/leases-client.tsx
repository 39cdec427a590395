"use client";
import Link from "next/link";
import { useMemo, useState } from "react";
import { Countdown } from "@/components/ui/countdown";
import { CELL_LINK, DataTable, SortableTh, TBody, THead, Td, Th, Tr, TableHeader } from "@/components/ui/data-table";
import { ResourceCell } from "./resource-cell";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDuration, formatUtc } from "@/components/ui/format";
import { useRefreshChoice } from "@/components/ui/live-refresh";
import { LiveTableBar, useHeldView } from "@/components/ui/live-table";
import { RelativeTime } from "@/components/ui/relative-time";
import { useNow } from "@/components/ui/use-now";
import { eventsHref, locksHref, ownerHref, withParams } from "@/lib/console/shared/links";
import { useLeasesQuery } from "@/lib/console/leases/leases-query";
import type { EndedLeaseView, LeaseView, LeasesView } from "@/lib/console/shared/views";
import { EXPIRING_FRACTION, OVERDUE_FRACTION } from "@leasewatch/lease/model";
import { WindowStatement } from "@/components/past/window-statement";
import { BulkReleaseDialog } from "@/components/release/bulk-release-dialog";
import { RENEWAL_DUE_LABEL } from "./labels";
import type { ForceReleaseAccess } from "@/components/release/access";
import { bulkReleaseScopeNote, type ViewerScope } from "@/lib/auth/scope";
import { LeaseFilters } from "./lease-filters";
import { LeaseStatePill } from "./lease-state-pill";
import { Pager } from "./pager";
import { PartialReadNotice, StoreReadProblems } from "./read-notices";

const FILTER_KEYS = ["store", "prefix", "owner", "task", "state"] as const;
/** Where "Skip to the leases table" lands. */
const RESULTS_ID = "lease-results";
/** Current states in which "overdue by" means something to the reader. */
const OVERDUE_STATES = new Set(["stuck", "overdue", "lapsed"]);

/** Row names, to count what is new: a lease (by its id) or an expiry (by its event). */
function leaseKeysOf(view: LeasesView): string[] {
  return view.mode === "current" ? view.items.map((l) => `${l.store}/${l.resource}/${l.leaseId}`) : view.expired.map((e) => `${e.store}/${e.eventId}`);
}

/** `summary`: the counts above the list (components/facets), rendered by the page. */
export function LeasesClient({
  search,
  initialData,
  access,
  releaseScope,
  summary,
}: {
  search: string;
  initialData: LeasesView;
  access: ForceReleaseAccess;
  /** Where the viewer's operator role applies: bulk release is offered only inside it. */
  releaseScope: ViewerScope;
  summary?: React.ReactNode;
}) {
  const [isBulkOpen, setBulkOpen] = useState(false);
  const refresh = useRefreshChoice();
  const query = useLeasesQuery(search, initialData, { paused: isBulkOpen, intervalMs: refresh.intervalMs });
  // While the viewer reads the table, it holds still; newer rows wait behind "N new leases — show".
  const held = useHeldView(query.data ?? initialData, query.dataUpdatedAt, search, leaseKeysOf);
  const view = held.view;
  const params = useMemo(() => new URLSearchParams(search), [search]);
  const prefix = params.get("prefix") ?? "";
  const hasFilters = FILTER_KEYS.some((k) => params.get(k));
  const count = view.mode === "current" ? view.items.length : view.expired.length;
  const isStuck = params.get("state") === "stuck";
  const cappedStores = isStuck ? view.stores.filter((s) => s.ok && s.data.hasMore).map((s) => s.store) : [];

  return (
    <div className="space-y-4">
      {/* The filters and counts come first and are dozens of Tab stops: this is the way past them. */}
      <a
        href={`#${RESULTS_ID}`}
        className="sr-only rounded-md bg-zinc-900 px-3 py-2 text-sm font-medium text-white focus:not-sr-only focus:inline-block dark:bg-zinc-100 dark:text-zinc-900"
      >
        Skip to the leases table
      </a>
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h1 className="text-lg font-semibold tracking-tight">{view.mode === "expired" ? "Expired leases" : isStuck ? "Overdue and lapsed leases" : "Leases"}</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400" aria-live="polite">
          {count} {count === 1 ? "lease" : "leases"} on this page
        </p>
      </div>
      {view.mode === "expired" && view.endsAt && view.from ? (
        <WindowStatement what="Expired leases" from={view.from} endsAt={view.endsAt} window={params.get("window") ?? (params.get("from") ? "custom" : "1h")} nowHref={`/locks${withParams(search, { at: null })}`} />
      ) : null}
      <LeaseFilters values={params} storeNames={view.storeNames} />
      {/* The counts above the table keep the hold too: they refresh on their own and can grow, so a
          pointer on its way from the table to "N new leases — show" may find itself over them. */}
      <div {...held.pointerProps} className="space-y-4">
        {summary}
        {view.mode === "current" ? <BulkReleaseBar access={access} scope={releaseScope} prefix={prefix} onOpen={() => setBulkOpen(true)} /> : null}
        <StoreReadProblems stores={view.stores} />
        <PartialReadNotice stores={view.stores} noun={view.mode === "expired" ? "expiries" : "leases"} />
        <div className="space-y-1">
          <LiveTableBar
            held={held}
            noun={view.mode === "expired" ? ["expiry", "expiries"] : ["lease", "leases"]}
            choice={refresh.choice}
            onChoice={refresh.setChoice}
            onRefreshNow={() => void query.refetch()}
            isFetching={query.isFetching}
            problem={query.isError ? query.error.message : null}
          />
          {cappedStores.length > 0 ? (
            <p className="text-xs text-zinc-600 dark:text-zinc-400" data-testid="stuck-capped">
              More are overdue or lapsed in {cappedStores.join(", ")} than one read lists: these are the first {params.get("limit") ?? "50"} of each state per store
              (oldest expiry first). Narrow by store or prefix to see the rest.
            </p>
          ) : null}
          {count === 0 ? (
            <div id={RESULTS_ID} tabIndex={-1} className="outline-none">
              <NoLeases mode={view.mode} hasFilters={hasFilters} isLaterPage={params.has("cursor")} isStuck={isStuck} />
            </div>
          ) : (
            <div {...held.focusProps}>
              {view.mode === "current" ? (
                <CurrentLeasesTable view={view} params={params} updatedAt={held.updatedAt} isStuck={isStuck} />
              ) : (
                <ExpiredLeasesTable items={view.expired} />
              )}
            </div>
          )}
        </div>
      </div>
      <div className="flex justify-end">
        <Pager basePath="/locks" search={search} nextCursor={view.nextCursor} label="Leases" />
      </div>
      {isBulkOpen ? <BulkReleaseDialog open prefix={prefix} store={params.get("store")} onClose={() => setBulkOpen(false)} /> : null}
    </div>
  );
}

/**
 * Bulk release of lapsed and overdue leases: only under a prefix, only for operators (others see why not).
 * Under a prefix outside the operator's scope there is no button at all, only a note saying so: the
 * candidates are read within the scope, so the dialog would report "nothing to release".
 */
function BulkReleaseBar({ access, scope, prefix, onOpen }: { access: ForceReleaseAccess; scope: ViewerScope; prefix: string; onOpen: () => void }) {
  const scopeNote = access.canForceRelease && prefix ? bulkReleaseScopeNote(scope, prefix) : null;
  if (scopeNote) {
    return (
      <p className="text-right text-xs text-zinc-600 dark:text-zinc-400" data-testid="bulk-release-scope-note">
        {scopeNote}
      </p>
    );
  }
  const whyNot = !access.canForceRelease ? access.reason : !prefix ? "Filter by a prefix first: bulk release applies to one prefix at a time." : null;
  return (
    <div className="flex items-center justify-end gap-3">
      {whyNot ? (
        <span id="bulk-release-why-not" className="text-xs text-zinc-600 dark:text-zinc-400">
          {whyNot}
        </span>
      ) : null}
      <button
        type="button"
        onClick={onOpen}
        disabled={whyNot !== null}
        aria-describedby={whyNot ? "bulk-release-why-not" : undefined}
        className="rounded-md border border-red-300 px-3 py-1.5 text-sm font-semibold text-red-800 hover:bg-red-50 disabled:cursor-not-allowed disabled:border-zinc-300 disabled:text-zinc-500 disabled:hover:bg-transparent dark:border-red-800 dark:text-red-200 dark:hover:bg-red-950 dark:disabled:border-zinc-700 dark:disabled:text-zinc-400"
      >
        Release lapsed &amp; overdue{prefix ? <> under <span className="font-mono">{prefix}</span></> : null}…
      </button>
    </div>
  );
}

function NoLeases({ mode, hasFilters, isLaterPage, isStuck }: { mode: LeasesView["mode"]; hasFilters: boolean; isLaterPage: boolean; isStuck: boolean }) {
  if (isLaterPage) {
    return (
      <EmptyState title="No more leases on this page" action={<Link className="underline" href="/locks">Back to the first page</Link>}>
        The leases that were here have ended since the previous page was read.
      </EmptyState>
    );
  }
  if (isStuck) {
    return (
      <EmptyState title="No lease is overdue or lapsed" action={<Link className="underline" href="/locks">All current leases</Link>}>
        Every holder here renewed within two thirds of its TTL. Crashed holders show up here until their lease is taken over or swept.
      </EmptyState>
    );
  }
  if (mode === "expired") {
    return (
      <EmptyState title="No lease expired in this window">
        Good news: every holder in this window released its lease. Widen the window, or check{" "}
        <Link className="underline" href="/events?kind=expired">
          all expiry events
        </Link>
        .
      </EmptyState>
    );
  }
  if (hasFilters) {
    return (
      <EmptyState title="No lease matches these filters" action={<Link className="underline" href="/locks">Clear the filters</Link>}>
        Prefix matches the start of the resource name (e.g. <code className="font-mono">tenant_123:billing</code>); owner and task match exactly.
      </EmptyState>
    );
  }
  return (
    <EmptyState title="No lease is held right now">
      Leases appear here within seconds of a worker taking one, e.g. with{" "}
      <code className="font-mono">client.withLease(&quot;tenant_123:billing-close&quot;, work, {"{ task, ttlMs }"})</code>. Recent history is on the{" "}
      <Link className="underline" href="/events">
        events
      </Link>{" "}
      page.
    </EmptyState>
  );
}

function CurrentLeasesTable({ view, params, updatedAt, isStuck }: { view: LeasesView; params: URLSearchParams; updatedAt: number; isStuck: boolean }) {
  const now = useNow(Date.parse(view.readAt));
  // Store clock minus this browser's clock per store, measured when the data arrived:
  // countdowns and states then run on the clock that enforces the TTL.
  const offsets = useMemo(() => {
    const receivedAt = updatedAt || Date.parse(view.readAt);
    return Object.fromEntries(Object.entries(view.storeClocks).map(([store, iso]) => [store, Date.parse(iso) - receivedAt]));
  }, [view.storeClocks, view.readAt, updatedAt]);
  const sort = params.get("sort") ?? "expires";
  const sortHref = (value: string) => `/locks${withParams(params, { sort: value })}`;
  const showOverdue = OVERDUE_STATES.has(params.get("state") ?? "");

  return (
    <DataTable caption={isStuck ? "Overdue and lapsed leases, longest overdue first" : "Current leases"} id={RESULTS_ID}>
      <THead>
        <tr>
          <Th>Resource</Th>
          <Th>State</Th>
          {showOverdue ? (
            <Th align="right" sorted={isStuck ? "descending" : undefined}>
              Overdue by
            </Th>
          ) : null}
          <Th>Store</Th>
          <Th>Owner</Th>
          <Th>Task</Th>
          <Th align="right">Token</Th>
          {/* The stuck list has one order (overdue by); its headers are labels, so Tab goes from the skip link straight to the rows. */}
          {isStuck ? (
            <Th align="right">Held for</Th>
          ) : (
            <SortableTh
              label="Held for"
              align="right"
              href={sortHref(sort === "held_longest" ? "newest" : "held_longest")}
              direction={sort === "held_longest" ? "descending" : sort === "newest" ? "ascending" : undefined}
            />
          )}
          <Th>Last renewed</Th>
          {isStuck ? <Th>Expires in</Th> : <SortableTh label="Expires in" href={sortHref("expires")} direction={sort === "expires" ? "ascending" : undefined} />}
          {/* Room for "overdue by" at 1280 px; "last renewed" already says whether it ever renewed. */}
          {showOverdue ? null : <Th align="right">Renewals</Th>}
        </tr>
      </THead>
      <TBody>
        {view.items.map((lease) => (
          <LeaseRow key={`${lease.store}\u0000${lease.resource}`} lease={lease} browserNow={now} offsetMs={offsets[lease.store] ?? 0} showOverdue={showOverdue} />
        ))}
      </TBody>
    </DataTable>
  );
}

function LeaseRow({ lease, browserNow, offsetMs, showOverdue }: { lease: LeaseView; browserNow: number; offsetMs: number; showOverdue: boolean }) {
  const storeNow = browserNow + offsetMs;
  const heldFor = Math.max(0, storeNow - Date.parse(lease.acquiredAt));
  // Ticks on the store's clock from the last read: the holder may renew before the next one says so.
  const overdueBy = storeNow - (Date.parse(lease.renewedAt) + lease.ttlMs * OVERDUE_FRACTION);
  return (
    <Tr rowKey={`${lease.store}/${lease.resource}`}>
      <ResourceCell store={lease.store} resource={lease.resource} className="max-w-80" />
      <Td>
        <LeaseStatePill state={lease.state} />
      </Td>
      {showOverdue ? (
        <Td align="right" className="tabular-nums" title={`renewal was due ${formatUtc(Date.parse(lease.renewedAt) + lease.ttlMs * OVERDUE_FRACTION)}`}>
          <span suppressHydrationWarning>{overdueBy > 0 ? formatDuration(overdueBy) : "—"}</span>
        </Td>
      ) : null}
      <NameCells store={lease.store} owner={lease.owner} task={lease.task} token={lease.fencingToken} leaseId={lease.leaseId} />
      <Td align="right" className="tabular-nums" title={`acquired ${formatUtc(lease.acquiredAt)}`}>
        <span suppressHydrationWarning>{formatDuration(heldFor)}</span>
      </Td>
      <Td>
        {lease.renewals === 0 ? (
          <span className="text-zinc-500 dark:text-zinc-400" title={`acquired ${formatUtc(lease.acquiredAt)}`}>never</span>
        ) : (
          <RelativeTime value={lease.renewedAt} clockOffsetMs={offsetMs} />
        )}
      </Td>
      <Td>
        <Countdown
          to={lease.expiresAt}
          clockOffsetMs={offsetMs}
          warnBelowMs={lease.ttlMs * EXPIRING_FRACTION}
          expiredLabel={lease.state === "lapsed" ? "lapsed" : RENEWAL_DUE_LABEL}
        />
      </Td>
      {showOverdue ? null : <Td align="right" className="tabular-nums">{lease.renewals}</Td>}
    </Tr>
  );
}

function ExpiredLeasesTable({ items }: { items: EndedLeaseView[] }) {
  return (
    <DataTable caption="Leases that expired in the window">
      <TableHeader columns={["Resource", "Store", "Owner", "Task", { label: "Token", align: "right" }, { label: "Held for", align: "right" }, "Expired"]} />
      <TBody>
        {items.map((e) => (
          <Tr key={`${e.store}\u0000${e.eventId}`} rowKey={`${e.store}/${e.eventId}`}>
            <ResourceCell store={e.store} resource={e.resource} className="max-w-[28rem]" />
            <NameCells store={e.store} owner={e.owner} task={e.task} token={e.fencingToken} leaseId={e.leaseId} />
            <Td align="right" className="tabular-nums">{e.holdMs === null ? "—" : formatDuration(e.holdMs)}</Td>
            <Td>
              <RelativeTime value={e.endedAt} />
            </Td>
          </Tr>
        ))}
      </TBody>
    </DataTable>
  );
}

/** Store, owner, task and token, each a link to the view filtered by it. */
function NameCells({ store, owner, task, token, leaseId }: { store: string; owner: string | null; task: string | null; token: string | null; leaseId: string | null }) {
  return (
    <>
      <Td mono>
        <Link href={locksHref({ store })} className={CELL_LINK} title={`Leases in ${store}`}>
          {store}
        </Link>
      </Td>
      <Td mono className="max-w-40 truncate" title={owner ?? undefined}>
        {owner ? (
          <Link href={ownerHref(owner)} className={CELL_LINK}>
            {owner}
          </Link>
        ) : (
          "—"
        )}
      </Td>
      <Td mono className="max-w-28 truncate" title={task ?? undefined}>
        {task ? (
          <Link href={eventsHref({ task })} className={CELL_LINK}>
            {task}
          </Link>
        ) : (
          "—"
        )}
      </Td>
      <Td mono align="right" title={leaseId ? `lease id ${leaseId}` : undefined}>
        {token ? (
          <Link href={eventsHref({ store, token })} className={CELL_LINK}>
            {token}
          </Link>
        ) : (
          "—"
        )}
      </Td>
    </>
  );
}
