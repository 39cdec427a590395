"use client";
import Link from "next/link";
import { Fragment, useState } from "react";
import { CopyButton } from "@/components/ui/copy-button";
import { CELL_LINK, DataTable, TBody, THead, Td, Th, Tr } from "@/components/ui/data-table";
import { ResourceCell } from "./resource-cell";
import { formatDuration, formatUtc } from "@/components/ui/format";
import { RelativeTime } from "@/components/ui/relative-time";
import { eventsHref, leaseHref, locksHref, ownerHref } from "@/lib/console/shared/links";
import type { EventView } from "@/lib/console/shared/views";
import { EVENT_KIND_STYLE, EventKindBadge } from "./event-kind-badge";

/** Stable across polls: the row a viewer expanded stays expanded. */
export function eventRowKey(e: Pick<EventView, "store" | "id">): string {
  return `${e.store}/${e.id}`;
}

/**
 * Events, newest first. `showResource` off on a lease's own page. Every name is a
 * link to its filtered view; each row expands (button, keyboard too) to the full
 * event with absolute UTC times and copyable ids.
 */
export function EventTable({ events, showResource = true, clockOffsetMs = 0, caption }: { events: EventView[]; showResource?: boolean; clockOffsetMs?: number; caption: string }) {
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(() => new Set());
  const toggle = (key: string) =>
    setExpanded((prev) => {
      const next = new Set(prev);
      if (!next.delete(key)) next.add(key);
      return next;
    });
  const columns = showResource ? 9 : 8;

  return (
    <DataTable caption={caption}>
      <THead>
        <tr>
          {/* The expand button sits in this first cell, so the columns are the same with or without it. */}
          <Th>When</Th>
          <Th>Kind</Th>
          {showResource ? <Th>Resource</Th> : null}
          <Th>Store</Th>
          <Th>Owner</Th>
          <Th>Task</Th>
          <Th align="right">Token</Th>
          <Th align="right">Held</Th>
          {/* Takes what the other columns leave, truncated; the expanded row has all of it. */}
          <Th className="w-full">Details</Th>
        </tr>
      </THead>
      <TBody>
        {events.map((e, index) => {
          const key = eventRowKey(e);
          const isOpen = expanded.has(key);
          const detailId = `event-detail-${index}-${e.id.replace(/[^A-Za-z0-9_-]/g, "_")}`;
          return (
            <Fragment key={key}>
              <Tr className={isOpen ? "bg-zinc-50 dark:bg-zinc-900/60" : undefined} rowKey={key}>
                <Td className="pl-1">
                  <button
                    type="button"
                    aria-expanded={isOpen}
                    aria-controls={isOpen ? detailId : undefined}
                    aria-label={`Details of the ${EVENT_KIND_STYLE[e.kind].label} event ${e.id}`}
                    onClick={() => toggle(key)}
                    className="inline-flex size-6 items-center justify-center rounded align-middle text-zinc-600 hover:bg-zinc-200 dark:text-zinc-300 dark:hover:bg-zinc-800"
                  >
                    <span aria-hidden="true" className={isOpen ? "rotate-90 transition-transform" : "transition-transform"}>
                      ▸
                    </span>
                  </button>{" "}
                  <RelativeTime value={e.at} clockOffsetMs={clockOffsetMs} />
                </Td>
                <Td>
                  <EventKindBadge kind={e.kind} />
                </Td>
                {showResource ? (
                  <ResourceCell store={e.store} resource={e.resource} className="max-w-64" />
                ) : null}
                <Td mono>
                  <Link href={locksHref({ store: e.store })} className={CELL_LINK} title={`Leases in ${e.store}`}>
                    {e.store}
                  </Link>
                </Td>
                <Td mono className="max-w-44 truncate" title={e.owner ?? undefined}>
                  {e.owner ? (
                    <Link href={ownerHref(e.owner)} className={CELL_LINK}>
                      {e.owner}
                    </Link>
                  ) : (
                    "—"
                  )}
                </Td>
                <Td mono className="max-w-32 truncate" title={e.task ?? undefined}>
                  {e.task ? (
                    <Link href={eventsHref({ task: e.task })} className={CELL_LINK}>
                      {e.task}
                    </Link>
                  ) : (
                    "—"
                  )}
                </Td>
                <Td mono align="right" title={e.leaseId ? `lease id ${e.leaseId}` : undefined}>
                  {e.fencingToken ? (
                    <Link href={eventsHref({ store: e.store, token: e.fencingToken })} className={CELL_LINK}>
                      {e.fencingToken}
                    </Link>
                  ) : (
                    "—"
                  )}
                </Td>
                <Td align="right" className="tabular-nums">{e.holdMs === null ? "" : formatDuration(e.holdMs)}</Td>
                <Td className="w-full max-w-0 min-w-32 truncate text-zinc-600 dark:text-zinc-400">{summary(e)}</Td>
              </Tr>
              {isOpen ? (
                <tr id={detailId} className="bg-zinc-50 dark:bg-zinc-900/60">
                  <td colSpan={columns} className="px-3 pb-3 pt-1">
                    <EventDetail event={e} clockOffsetMs={clockOffsetMs} />
                  </td>
                </tr>
              ) : null}
            </Fragment>
          );
        })}
      </TBody>
    </DataTable>
  );
}

/** The Details column: who did it and why, then the event's own detail in words. */
function summary(e: EventView): string {
  return [e.actor ? `by ${e.actor}` : null, e.kind === "force_released" ? e.reason : null, e.note].filter(Boolean).join(" · ");
}

function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div className="min-w-0">
      <dt className="text-[11px] font-medium uppercase tracking-wide text-zinc-500 dark:text-zinc-400">{label}</dt>
      <dd className="mt-0.5 break-all text-[13px]">{children}</dd>
    </div>
  );
}

/** Everything the event says, nothing on hover only. */
function EventDetail({ event: e, clockOffsetMs }: { event: EventView; clockOffsetMs: number }) {
  // A contended event names the requester, but its lease id and token are the holder's.
  const whose = e.kind === "contended" ? "Holder's " : "";
  return (
    <dl className="grid grid-cols-2 gap-x-6 gap-y-2 lg:grid-cols-4">
      <Field label="At (UTC)">
        <time dateTime={e.at} className="font-mono text-[12px]">
          {formatUtc(e.at)}
        </time>{" "}
        <span className="text-zinc-600 dark:text-zinc-400">
          (<RelativeTime value={e.at} clockOffsetMs={clockOffsetMs} />)
        </span>
      </Field>
      <Field label="Event id">
        <span className="font-mono text-[12px]">{e.id}</span> <CopyButton value={e.id} label="event id" />
      </Field>
      <Field label={`${whose}Lease id`}>
        {e.leaseId ? (
          <>
            <span className="font-mono text-[12px]">{e.leaseId}</span> <CopyButton value={e.leaseId} label="lease id" />
          </>
        ) : (
          "—"
        )}
      </Field>
      <Field label={`${whose}Fencing token`}>
        {e.fencingToken ? (
          <>
            <Link href={eventsHref({ store: e.store, token: e.fencingToken })} className={`${CELL_LINK} font-mono text-[12px]`}>
              {e.fencingToken}
            </Link>{" "}
            <CopyButton value={e.fencingToken} label="fencing token" />
          </>
        ) : (
          "—"
        )}
      </Field>
      <Field label="Resource">
        <Link href={leaseHref(e.store, e.resource)} className={`${CELL_LINK} font-mono text-[12px]`}>
          {e.resource}
        </Link>{" "}
        <CopyButton value={e.resource} label="resource" />
      </Field>
      <Field label="Store">
        <Link href={locksHref({ store: e.store })} className={`${CELL_LINK} font-mono text-[12px]`}>
          {e.store}
        </Link>
      </Field>
      <Field label={e.kind === "contended" ? "Requested by" : "Owner"}>
        {e.owner ? (
          <Link href={ownerHref(e.owner)} className={`${CELL_LINK} font-mono text-[12px]`}>
            {e.owner}
          </Link>
        ) : (
          "—"
        )}
      </Field>
      <Field label="Task">
        {e.task ? (
          <Link href={eventsHref({ task: e.task })} className={`${CELL_LINK} font-mono text-[12px]`}>
            {e.task}
          </Link>
        ) : (
          "—"
        )}
      </Field>
      {e.holdMs !== null ? (
        <Field label="Held">
          {formatDuration(e.holdMs)} <span className="text-zinc-600 dark:text-zinc-400">({e.holdMs.toLocaleString("en-US")} ms)</span>
        </Field>
      ) : null}
      {e.actor ? <Field label="By">{e.actor}</Field> : null}
      {e.reason ? <Field label="Reason">{e.reason}</Field> : null}
      {e.details.map((d) => (
        <Field key={d.label} label={d.label}>
          {d.value}
        </Field>
      ))}
    </dl>
  );
}
