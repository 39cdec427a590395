"use client";
import Link from "next/link";
import { useMemo, useState } from "react";
import { Countdown } from "@/components/ui/countdown";
import { DataTable, TBody, Td, Tr, TableHeader } from "@/components/ui/data-table";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDuration, formatUtc } from "@/components/ui/format";
import { RelativeTime } from "@/components/ui/relative-time";
import { StatusPill } from "@/components/ui/status-pill";
import { useRefreshChoice } from "@/components/ui/live-refresh";
import { useNow } from "@/components/ui/use-now";
import { buildQuery, eventsHref, leaseHref } from "@/lib/console/shared/links";
import { useLeaseDetailQuery, type LeaseDetailResponse } from "@/lib/console/leases/lease-detail-query";
import type { LeaseDetailView, LeaseView, ResourceElsewhere } from "@/lib/console/shared/views";
import { EXPIRING_FRACTION, OVERDUE_FRACTION, resourcePrefix, SLACK_PREFIX_DEPTH } from "@leasewatch/lease/model";
import { RenewalSlackPanel } from "@/components/advice/renewal-slack-panel";
import type { ForceReleaseAccess } from "@/components/release/access";
import { ForceReleaseDialog } from "@/components/release/force-release-dialog";
import { ReleaseHistory } from "@/components/release/release-history";
import { ReleaseOutcome } from "@/components/release/release-outcome";
import type { ForceReleaseResult } from "@/lib/console/release/force-release-types";
import { LiveEventHistory } from "./live-event-history";
import { HolderTimeline } from "./holder-timeline";
import { LeaseStatePill } from "./lease-state-pill";
import { RENEWAL_DUE_LABEL } from "./labels";

const SECTION = "min-w-0 rounded-lg border border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900/40";
const H2 = "mb-3 text-sm font-semibold";

export function LeaseDetailClient({
  store,
  resource,
  initialData,
  access,
  markAt,
}: {
  store: string;
  resource: string;
  initialData: LeaseDetailResponse;
  access: ForceReleaseAccess;
  /** `?at=`: the instant the timeline marks. */
  markAt?: string | null;
}) {
  // The lease the dialog shows, frozen when it opened; polling stops while it is open.
  const [releasing, setReleasing] = useState<{ lease: LeaseView; offsetMs: number } | null>(null);
  const [lastResult, setLastResult] = useState<ForceReleaseResult | null>(null);
  const { intervalMs } = useRefreshChoice();
  const query = useLeaseDetailQuery(store, resource, initialData, { paused: releasing !== null, intervalMs });
  const outcome = query.data ?? initialData;
  const parent = resource.includes(":") ? resource.slice(0, resource.lastIndexOf(":")) : null;

  return (
    <div className="space-y-4">
      <div>
        <nav aria-label="Breadcrumb" className="text-sm text-zinc-600 dark:text-zinc-400">
          <Link href="/locks" className="hover:underline">
            Leases
          </Link>
          {" / "}
          <Link href={`/locks${buildQuery({ store })}`} className="font-mono hover:underline">
            {store}
          </Link>
          {parent ? (
            <>
              {" / "}
              <Link href={`/locks${buildQuery({ store, prefix: parent })}`} className="font-mono hover:underline">
                {parent}
              </Link>
            </>
          ) : null}
        </nav>
        <h1 className="mt-1 break-all font-mono text-lg font-semibold">{resource}</h1>
        {query.isError ? <p className="text-sm text-amber-700 dark:text-amber-300">Live update failed: {query.error.message}</p> : null}
      </div>
      {lastResult ? <ReleaseOutcome result={lastResult} takeFocus /> : null}
      {outcome.ok ? (
        <LeaseDetailBody
          view={outcome.data}
          updatedAt={query.dataUpdatedAt}
          access={access}
          markAt={markAt}
          onForceRelease={(lease, offsetMs) => {
            setLastResult(null);
            setReleasing({ lease, offsetMs });
          }}
        />
      ) : (
        <div role="alert" className="rounded-lg border border-red-300 bg-red-50 p-4 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
          <p className="font-semibold">
            Store <span className="font-mono">{outcome.store}</span> ({outcome.kind}) could not be read.
          </p>
          <p className="mt-1">{outcome.error}</p>
          <p className="mt-1">This page refreshes by itself and shows the lease again once the store answers.</p>
        </div>
      )}
      <ReleaseHistory store={store} resource={resource} isPaused={releasing !== null} />
      {releasing ? (
        <ForceReleaseDialog
          open
          lease={releasing.lease}
          clockOffsetMs={releasing.offsetMs}
          onClose={() => setReleasing(null)}
          onDone={(result) => {
            setLastResult(result);
            setReleasing(null);
          }}
        />
      ) : null}
    </div>
  );
}

function LeaseDetailBody({
  view,
  updatedAt,
  access,
  onForceRelease,
  markAt,
}: {
  view: LeaseDetailView;
  updatedAt: number;
  access: ForceReleaseAccess;
  onForceRelease: (lease: LeaseView, offsetMs: number) => void;
  markAt?: string | null;
}) {
  // Store clock minus browser clock, measured when this data arrived: countdowns run on the store's clock.
  const offset = useMemo(() => Date.parse(view.storeNow) - (updatedAt || Date.parse(view.readAt)), [view.storeNow, view.readAt, updatedAt]);
  return (
    <>
      {view.elsewhere.length > 0 ? <ElsewhereNote resource={view.resource} elsewhere={view.elsewhere} /> : null}
      <section aria-labelledby="current" className={SECTION}>
        <div className="mb-3 flex items-start justify-between gap-4">
          <h2 id="current" className="text-sm font-semibold">
            Current lease
          </h2>
          {/* A lapsed lease holds nothing: force-release would only answer "the lease changed". */}
          {view.lease && view.lease.state !== "lapsed" ? <ForceReleaseButton access={access} onClick={() => onForceRelease(view.lease!, offset)} /> : null}
        </div>
        {view.lease?.state === "lapsed" ? <LapsedNote /> : null}
        {view.lease ? (
          <CurrentLease lease={view.lease} offsetMs={offset} readAt={view.readAt} />
        ) : view.hasHistory ? (
          <p className="flex flex-wrap items-center gap-2 text-sm">
            <StatusPill tone="neutral" label="free" /> Nobody holds this resource now; the next acquire gets it at once.{" "}
            <Link href={eventsHref({ store: view.store, resource: view.resource })} className="text-sky-700 hover:underline dark:text-sky-300">
              See its history →
            </Link>
          </p>
        ) : (
          // Not "free": nothing here says this name is the one the workers use (a typo, or another store).
          <p className="flex flex-wrap items-center gap-2 text-sm">
            <StatusPill tone="neutral" label="never seen" /> Never seen in this store: no lease and no recorded event for this resource in{" "}
            <span className="font-mono">{view.store}</span>. Check the name, or the store.
          </p>
        )}
      </section>
      <section aria-labelledby="timeline" className={SECTION}>
        <h2 id="timeline" className={H2}>
          Holders over time
        </h2>
        <HolderTimeline bars={view.timeline} storeNow={view.storeNow} markAt={markAt} />
      </section>
      <RenewalSlackPanel search={buildQuery({ store: view.store })} prefix={resourcePrefix(view.resource, SLACK_PREFIX_DEPTH)} className={SECTION} />
      <div className="grid grid-cols-1 items-start gap-4 lg:grid-cols-2">
        <section aria-labelledby="waiting" className={SECTION}>
          <h2 id="waiting" className={H2}>
            Waiting <span className="font-normal text-zinc-500 dark:text-zinc-400">(refused acquires, last minute)</span>
          </h2>
          {view.waiting.length === 0 ? (
            <p className="text-sm text-zinc-600 dark:text-zinc-400">Nobody was refused this resource in the last minute.</p>
          ) : (
            <DataTable caption="Owners refused in the last minute">
              <TableHeader columns={["Owner", "Task", { label: "Attempts", align: "right" }, "Last attempt"]} />
              <TBody>
                {view.waiting.map((w) => (
                  <Tr key={w.owner}>
                    <Td mono>{w.owner}</Td>
                    <Td mono>{w.task ?? "—"}</Td>
                    <Td align="right" className="tabular-nums">{w.attempts}</Td>
                    <Td>
                      <RelativeTime value={w.lastAt} clockOffsetMs={offset} />
                    </Td>
                  </Tr>
                ))}
              </TBody>
            </DataTable>
          )}
        </section>
        <section aria-labelledby="tokens" className={SECTION}>
          <h2 id="tokens" className={H2}>
            Fencing tokens <span className="font-normal text-zinc-500 dark:text-zinc-400">(newest first; each hold gets a higher one)</span>
          </h2>
          {view.tokens.length === 0 ? (
            <p className="text-sm text-zinc-600 dark:text-zinc-400">No token handed out in the recorded history.</p>
          ) : (
            <div className="max-h-72 overflow-y-auto">
              <DataTable caption="Fencing tokens handed out">
                <TableHeader columns={[{ label: "Token", align: "right" }, "Owner", "Lease id", "Acquired"]} />
                <TBody>
                  {view.tokens.map((t) => (
                    <Tr key={`${t.fencingToken}-${t.leaseId}`}>
                      <Td mono align="right">{t.fencingToken}</Td>
                      <Td mono>{t.owner ?? "—"}</Td>
                      <Td mono className="max-w-32 truncate" title={t.leaseId ?? undefined}>{t.leaseId ?? "—"}</Td>
                      <Td>
                        <RelativeTime value={t.at} clockOffsetMs={offset} />
                      </Td>
                    </Tr>
                  ))}
                </TBody>
              </DataTable>
            </div>
          )}
        </section>
      </div>
      <section aria-labelledby="events">
        <div className="mb-2 flex items-baseline justify-between">
          <h2 id="events" className="text-sm font-semibold">
            Events <span className="font-normal text-zinc-500 dark:text-zinc-400">(latest {view.events.length})</span>
          </h2>
          <Link href={`/events${buildQuery({ store: view.store, resource: view.resource })}`} className="text-sm text-sky-700 hover:underline dark:text-sky-300">
            {view.hasMoreEvents ? "Older events →" : "Open in events →"}
          </Link>
        </div>
        {view.events.length === 0 ? (
          <EmptyState title="No events for this resource">Nothing has acquired it yet, or its history was trimmed by retention.</EmptyState>
        ) : (
          <LiveEventHistory store={view.store} resource={view.resource} events={view.events} updatedAt={updatedAt} clockOffsetMs={offset} />
        )}
      </section>
    </>
  );
}

/** The same resource name in other stores: separate leases, separate tokens, one link each. */
function ElsewhereNote({ resource, elsewhere }: { resource: string; elsewhere: readonly ResourceElsewhere[] }) {
  return (
    <p className="rounded-lg border border-sky-200 bg-sky-50 px-4 py-2 text-sm text-sky-950 dark:border-sky-800 dark:bg-sky-950 dark:text-sky-100">
      Also in {elsewhere.length === 1 ? "another store" : "other stores"}:{" "}
      {elsewhere.map((e, i) => (
        <span key={e.store}>
          {i > 0 ? ", " : null}
          <Link href={leaseHref(e.store, resource)} className="font-mono font-medium underline underline-offset-4">
            {e.store}
          </Link>{" "}
          ({e.isHeld ? "held now" : "has history"})
        </span>
      ))}
      . A separate lease there, with its own fencing tokens.
    </p>
  );
}

function CurrentLease({ lease, offsetMs, readAt }: { lease: LeaseView; offsetMs: number; readAt: string }) {
  const now = useNow(Date.parse(readAt)) + offsetMs;
  const rows: Array<[string, React.ReactNode, boolean?]> = [
    ["State", <LeaseStatePill key="s" state={lease.state} />],
    ["Owner", lease.owner, true],
    ["Task", lease.task, true],
    ["Lease id", lease.leaseId, true],
    ["Fencing token", lease.fencingToken, true],
    ["Held for", <span key="h" title={`acquired ${formatUtc(lease.acquiredAt)}`} suppressHydrationWarning>{formatDuration(Math.max(0, now - Date.parse(lease.acquiredAt)))}</span>],
    ["Last renewed", lease.renewals === 0 ? "never" : <RelativeTime key="r" value={lease.renewedAt} clockOffsetMs={offsetMs} />],
    ["Expires", <Countdown key="c" to={lease.expiresAt} clockOffsetMs={offsetMs} warnBelowMs={lease.ttlMs * EXPIRING_FRACTION} expiredLabel={lease.state === "lapsed" ? "lapsed — the store no longer honours it" : RENEWAL_DUE_LABEL} />],
    ...(lease.state === "overdue" || lease.state === "lapsed"
      ? ([["Overdue by", <span key="o" title={`renewal was due ${formatUtc(Date.parse(lease.renewedAt) + lease.ttlMs * OVERDUE_FRACTION)}`} suppressHydrationWarning>{formatDuration(Math.max(0, now - Date.parse(lease.renewedAt) - lease.ttlMs * OVERDUE_FRACTION))}</span>]] as Array<[string, React.ReactNode]>)
      : []),
    ["TTL", formatDuration(lease.ttlMs)],
    ["Renewals", String(lease.renewals)],
  ];
  return (
    <dl className="grid grid-cols-2 gap-x-6 gap-y-2 text-sm sm:grid-cols-3 xl:grid-cols-5">
      {rows.map(([label, value, isMono]) => (
        <div key={label} className="min-w-0">
          <dt className="text-xs text-zinc-500 dark:text-zinc-400">{label}</dt>
          <dd className={isMono ? "truncate font-mono text-[13px]" : "truncate"} title={typeof value === "string" ? value : undefined}>
            {value}
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** What to do about a lapsed lease instead of force-releasing it. */
function LapsedNote() {
  return (
    <p className="mb-3 rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-50" data-testid="lapsed-note">
      <span className="font-semibold">Nothing to release: this lease has lapsed.</span> Its TTL ran out on the store&apos;s clock, so the store no longer
      honours it and its holder&apos;s renewals and fenced writes already fail. The next acquire of this resource takes it over at once, with a higher
      fencing token, and records the expiry; until then a sweep (the console&apos;s or any worker&apos;s) records it within seconds.
    </p>
  );
}

function ForceReleaseButton({ access, onClick }: { access: ForceReleaseAccess; onClick: () => void }) {
  const base = "rounded-md border px-3 py-1.5 text-sm font-semibold";
  if (!access.canForceRelease) {
    return (
      <div className="flex items-center gap-2">
        <span id="force-release-why-not" className="text-xs text-zinc-600 dark:text-zinc-400">
          {access.reason}
        </span>
        <button type="button" disabled aria-describedby="force-release-why-not" className={`${base} cursor-not-allowed border-zinc-300 text-zinc-500 dark:border-zinc-700 dark:text-zinc-400`}>
          Force release
        </button>
      </div>
    );
  }
  return (
    <button
      type="button"
      onClick={onClick}
      className={`${base} border-red-300 text-red-800 hover:bg-red-50 dark:border-red-800 dark:text-red-200 dark:hover:bg-red-950`}
    >
      Force release
    </button>
  );
}
