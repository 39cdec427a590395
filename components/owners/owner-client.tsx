"use client";
import Link from "next/link";
import { EventTable } from "@/components/locks/event-table";
import { LeaseStatePill } from "@/components/locks/lease-state-pill";
import { StoreReadProblems } from "@/components/locks/read-notices";
import { DataTable, TBody, Td, Tr, TableHeader } from "@/components/ui/data-table";
import { ResourceCell } from "@/components/locks/resource-cell";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDuration, formatUtc } from "@/components/ui/format";
import { StatusPill } from "@/components/ui/status-pill";
import type { Tone } from "@/components/ui/badge";
import { eventsHref, locksHref, ownerHref } from "@/lib/console/shared/links";
import type { OwnerVerdict, OwnerView } from "@/lib/console/owners/owner-types";
import { useOwnerQuery } from "@/lib/console/owners/owner-query";

const VERDICT_STYLE: Record<OwnerVerdict, { tone: Tone; label: string }> = {
  alive: { tone: "green", label: "Alive" },
  stalled: { tone: "red", label: "Not renewing" },
  idle: { tone: "blue", label: "Active, holds nothing now" },
  gone: { tone: "neutral", label: "Not alive" },
  unseen: { tone: "neutral", label: "Not seen" },
};

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

/** The plain answer to "is it alive?", from what it holds and when it was last seen. */
function verdictSentence(view: OwnerView): string {
  const seen = view.lastSeenAgoMs === null ? null : `last seen ${formatDuration(view.lastSeenAgoMs)} ago`;
  const renewing = view.held.filter((l) => l.state === "held" || l.state === "expiring").length;
  switch (view.verdict) {
    case "alive":
      return `Alive: holds ${plural(view.held.length, "lease")}, ${renewing} with current renewals; ${seen}.`;
    case "stalled":
      return `Probably not alive: holds ${plural(view.held.length, "lease")} but has missed their renewals; ${seen}.`;
    case "idle":
      return `Alive a moment ago: holds nothing right now; ${seen}.`;
    case "gone":
      return `Not alive as far as the stores can tell: holds nothing; ${seen}.`;
    case "unseen":
      return "Not seen in this window: no lease held and no event recorded.";
  }
}

export function OwnerClient({ search, initialData }: { search: string; initialData: OwnerView }) {
  const query = useOwnerQuery(initialData.owner, search, initialData);
  const view = query.data ?? initialData;
  const windowFilter = windowOf(search);
  const style = VERDICT_STYLE[view.verdict];
  const cover = view.troubleCountCover;
  const atLeast = cover !== null ? "at least " : "";
  const troubleTotal = view.troubleCounts.expired + view.troubleCounts.renew_failed + view.troubleCounts.lost;

  return (
    <div className="space-y-5">
      <div className="space-y-1">
        <p className="text-xs font-medium tracking-wide text-zinc-600 uppercase dark:text-zinc-400">Owner</p>
        <h1 className="font-mono text-lg font-semibold break-all">{view.owner}</h1>
      </div>

      <section aria-labelledby="owner-alive-heading" className="rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900/40">
        <h2 id="owner-alive-heading" className="sr-only">
          Alive?
        </h2>
        <p className="flex flex-wrap items-center gap-2 text-sm" data-testid="owner-verdict">
          <StatusPill tone={style.tone} label={style.label} />
          <span>{verdictSentence(view)}</span>
        </p>
        {view.lastSeenAt && view.lastSeenWhat ? (
          <p className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
            Last seen: {view.lastSeenWhat}, at <time dateTime={view.lastSeenAt}>{formatUtc(view.lastSeenAt)}</time>.
          </p>
        ) : null}
        <p className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
          In the window ({formatUtc(view.from)} → {formatUtc(view.to)}): {atLeast}
          {plural(view.troubleCounts.expired, "expiry", "expiries")}, {atLeast}
          {plural(view.troubleCounts.renew_failed, "renewal failure")}, {atLeast}
          {plural(view.troubleCounts.lost, "lost lease")}
          {cover !== null ? <span data-testid="owner-count-cover"> — {coverText(cover)}</span> : null}.
          {query.isError ? <span className="ml-2 text-amber-700 dark:text-amber-300">Live update failed: {query.error.message}</span> : null}
        </p>
        {view.verdict === "unseen" && windowFilter.window !== "24h" && windowFilter.window !== "7d" ? (
          <p className="mt-1 text-sm">
            <Link className="text-sky-800 underline dark:text-sky-300" href={ownerHref(view.owner, { window: "24h" })}>
              Look back 24 hours
            </Link>
          </p>
        ) : null}
        <nav aria-label="This owner elsewhere" className="mt-2 flex flex-wrap gap-x-4 gap-y-1 text-sm">
          <Link className="text-sky-800 underline dark:text-sky-300" href={locksHref({ owner: view.owner })}>
            Its leases
          </Link>
          <Link className="text-sky-800 underline dark:text-sky-300" href={locksHref({ owner: view.owner, state: "expired", ...windowFilter })}>
            Its expired leases
          </Link>
          <Link className="text-sky-800 underline dark:text-sky-300" href={eventsHref({ owner: view.owner, ...windowFilter })}>
            All its events
          </Link>
        </nav>
      </section>

      <StoreReadProblems stores={view.stores} />

      <section aria-labelledby="owner-held-heading" className="space-y-2">
        <h2 id="owner-held-heading" className="text-base font-semibold">
          Holds now
        </h2>
        {view.held.length === 0 ? (
          <EmptyState title="Holds no lease right now">Its history is below and on the events page.</EmptyState>
        ) : (
          <DataTable caption={`Leases held by ${view.owner}`}>
            <TableHeader columns={["Resource", "State", "Store", "Task", { label: "Token", align: "right" }, { label: "Held for", align: "right" }, { label: "Since renewal", align: "right" }]} />
            <TBody>
              {view.held.map((lease) => (
                <Tr key={`${lease.store}\u0000${lease.resource}`}>
                  <ResourceCell store={lease.store} resource={lease.resource} className="max-w-96" />
                  <Td>
                    <LeaseStatePill state={lease.state} />
                  </Td>
                  <Td mono>{lease.store}</Td>
                  <Td mono className="max-w-32 truncate" title={lease.task}>
                    {lease.task}
                  </Td>
                  <Td mono align="right" title={`lease id ${lease.leaseId}`}>
                    {lease.fencingToken}
                  </Td>
                  <Td align="right" className="tabular-nums">
                    {formatDuration(lease.heldForMs)}
                  </Td>
                  <Td align="right" className="tabular-nums" title={`renewed ${formatUtc(lease.renewedAt)}`}>
                    {lease.renewals === 0 ? "never renewed" : formatDuration(lease.sinceRenewalMs)}
                  </Td>
                </Tr>
              ))}
            </TBody>
          </DataTable>
        )}
      </section>

      <section aria-labelledby="owner-troubles-heading" className="space-y-2">
        <h2 id="owner-troubles-heading" className="text-base font-semibold">
          Expiries, renewal failures and lost leases
        </h2>
        {view.troubles.length === 0 ? (
          <EmptyState title="None in this window">Every lease it held in the window was released or is still renewed.</EmptyState>
        ) : (
          <>
            {view.troubles.length < troubleTotal ? (
              <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="owner-troubles-shown">
                The newest {view.troubleListLimit.toLocaleString("en-US")} per store are listed ({view.troubles.length.toLocaleString("en-US")} of{" "}
                {cover !== null ? "at least " : ""}
                {troubleTotal.toLocaleString("en-US")});{" "}
                <Link className="text-sky-800 underline dark:text-sky-300" href={eventsHref({ owner: view.owner, kind: ["expired", "renew_failed", "lost"], ...windowFilter })}>
                  all of them in the events list
                </Link>
                .
              </p>
            ) : null}
            <EventTable events={view.troubles} caption={`Expiries, renewal failures and lost leases of ${view.owner}`} />
          </>
        )}
      </section>

      <section aria-labelledby="owner-events-heading" className="space-y-2">
        <h2 id="owner-events-heading" className="text-base font-semibold">
          Latest events
        </h2>
        {view.events.length === 0 ? (
          <EmptyState title="No event in this window">Widen the window with ?window=24h or ?window=7d in the URL.</EmptyState>
        ) : (
          <EventTable events={view.events} caption={`Latest events of ${view.owner}`} />
        )}
      </section>
    </div>
  );
}

function coverText(cover: NonNullable<OwnerView["troubleCountCover"]>): string {
  return cover.reason === "limit"
    ? `counted over the newest ${cover.limit.toLocaleString("en-US")} of these events per store`
    : `${cover.store} stopped counting at its read budget`;
}

/** The owner page's own window, carried to the lists it links to. */
function windowOf(search: string): { window?: string; from?: string; to?: string } {
  const params = new URLSearchParams(search);
  const pick = (key: string) => params.get(key) ?? undefined;
  const window = pick("window") ?? (params.has("from") ? "custom" : "1h");
  return { window, from: pick("from"), to: pick("to") };
}
