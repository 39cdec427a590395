"use client";
import Link from "next/link";
import { Fragment } from "react";
import { FIELD, FilterActions, LABEL } from "@/components/locks/filter-fields";
import { StoreReadProblems } from "@/components/locks/read-notices";
import { DataTable, TBody, Td, Th, THead, Tr } from "@/components/ui/data-table";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDuration, formatUtc } from "@/components/ui/format";
import { StatusPill } from "@/components/ui/status-pill";
import { ADVICE_WINDOWS } from "@/lib/console/advice/advice-windows";
import { formatNumber, formatRatio } from "@/lib/console/shared/format";
import type { TtlAdviceRowView, TtlAdviceView } from "@/lib/console/advice/get-ttl-advice";
import { locksHref } from "@/lib/console/shared/links";
import { useTtlAdviceQuery } from "@/lib/console/advice/advice-query";
import { SlackHistogram } from "./slack-histogram";

const WINDOW_LABELS: Record<(typeof ADVICE_WINDOWS)[number], string> = {
  "15m": "Last 15 minutes",
  "1h": "Last hour",
  "6h": "Last 6 hours",
  "24h": "Last 24 hours",
  "7d": "Last 7 days",
  custom: "Custom (from/to)",
};

const CHANGE = {
  lengthen: { tone: "amber", label: "lengthen" },
  keep: { tone: "green", label: "keep" },
  unknown: { tone: "neutral", label: "no data" },
} as const;

/** A heading that may break between its words (the cells below it stay on one line). */
const WRAP = "whitespace-normal! align-bottom";

const ms = (v: number | null) => (v === null ? "—" : formatDuration(v));

export function AdviceClient({ search, initialData }: { search: string; initialData: TtlAdviceView }) {
  const query = useTtlAdviceQuery(search, initialData);
  const view = query.data ?? initialData;
  const storeNames = view.stores.map((s) => s.store);
  const isPartial = view.stores.some((s) => s.ok && s.data.isPartial);
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-lg font-semibold tracking-tight">TTL advice</h1>
        <p className="max-w-prose text-sm text-zinc-600 dark:text-zinc-400">
          Per prefix group, from what the stores measured{" "}
          <span title={`${formatUtc(view.from)} → ${formatUtc(view.to)}`} className="underline decoration-dotted underline-offset-2">
            ({WINDOW_LABELS[view.window].toLowerCase()})
          </span>
          : a TTL must outlast the p99 renewal lateness (pause plus latency after the ttl/3 heartbeat) with 20 % of it to spare, and
          holders renew at ttl/3. Advice only — nothing here changes a TTL.
          {query.isError ? <span className="ml-2 text-amber-700 dark:text-amber-300">· live update failed: {query.error.message}</span> : null}
        </p>
      </div>
      <form method="get" action="/advice" className="flex flex-wrap items-end gap-3 rounded-lg border border-zinc-200 p-3 dark:border-zinc-800">
        <div className="w-36">
          <label htmlFor="advice-store" className={LABEL}>Store</label>
          <select id="advice-store" name="store" defaultValue={view.selectedStore ?? ""} className={FIELD}>
            <option value="">All stores</option>
            {storeNames.map((name) => (
              <option key={name} value={name}>{name}</option>
            ))}
          </select>
        </div>
        <div className="w-64">
          <label htmlFor="advice-prefix" className={LABEL}>Prefix</label>
          <input id="advice-prefix" name="prefix" defaultValue={view.prefix ?? ""} placeholder="tenant_123:billing" className={`${FIELD} font-mono`} />
        </div>
        <div className="w-44">
          <label htmlFor="advice-window" className={LABEL}>Window</label>
          <select id="advice-window" name="window" defaultValue={view.window === "custom" ? "1h" : view.window} className={FIELD}>
            {ADVICE_WINDOWS.filter((w) => w !== "custom").map((w) => (
              <option key={w} value={w}>{WINDOW_LABELS[w]}</option>
            ))}
          </select>
        </div>
        <FilterActions clearHref="/advice" />
      </form>
      <StoreReadProblems stores={view.stores} />
      {isPartial ? (
        <p role="status" className="text-sm text-amber-800 dark:text-amber-200">
          A store had more events in this window than one advice read scans; counts and hold durations there come from its newest events. Narrow the prefix or the window.
        </p>
      ) : null}
      {view.totalRows > view.rows.length ? (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Showing the {view.rows.length} groups with the most renewals of {formatNumber(view.totalRows)}; enter a prefix to see the others.
        </p>
      ) : null}
      {view.rows.length === 0 ? (
        <EmptyState title="Nothing to advise on in this window">
          Advice needs leases that were renewed, released or expired under this prefix. Try a longer window, or check that holders renew (the client heartbeats at ttl/3).
        </EmptyState>
      ) : (
        <DataTable caption="TTL advice per prefix group">
          <THead>
            <tr>
              {/* Twelve columns fit 1280 px only if the two-word headings may wrap: their numbers are narrow. */}
              <Th>Store</Th>
              <Th>Prefix group</Th>
              <Th align="right" className={WRAP}>TTL (as used)</Th>
              <Th align="right" className={WRAP}>p99 hold</Th>
              <Th align="right" className={WRAP}>p99 lateness</Th>
              <Th align="right">Renewals</Th>
              <Th align="right" className={WRAP}>Close calls</Th>
              <Th align="right" className={WRAP}>Renewals lost</Th>
              <Th align="right" className={WRAP}>Expired : released</Th>
              <Th align="right" className={WRAP}>Suggested TTL</Th>
              <Th align="right" className={WRAP}>Renew every</Th>
              <Th>Advice</Th>
            </tr>
          </THead>
          <TBody>
            {view.rows.map((row) => (
              <AdviceRow key={`${row.store}|${row.prefix}`} row={row} />
            ))}
          </TBody>
        </DataTable>
      )}
    </div>
  );
}

function AdviceRow({ row }: { row: TtlAdviceRowView }) {
  const change = CHANGE[row.change];
  return (
    <Fragment>
      <Tr className="border-t-0">
        <Td mono>{row.store}</Td>
        <Td mono title={row.prefix} className="max-w-56 truncate">
          <Link href={locksHref({ store: row.store, prefix: row.prefix })} className="underline decoration-dotted underline-offset-2 hover:decoration-solid">
            {row.prefix}
          </Link>
        </Td>
        <Td mono align="right">{ms(row.ttlMs)}</Td>
        <Td mono align="right">{ms(row.p99HoldMs)}</Td>
        <Td mono align="right">{ms(row.p99LatenessMs)}</Td>
        <Td mono align="right">{formatNumber(row.renewals)}</Td>
        <Td mono align="right">{formatNumber(row.closeCalls)}</Td>
        <Td mono align="right">{formatNumber(row.renewalsLost)}</Td>
        <Td mono align="right" title={`${row.expired} expired, ${row.released} released`}>{formatRatio(row.expiredToReleased)}</Td>
        <Td mono align="right" className={row.change === "lengthen" ? "font-semibold" : undefined}>{ms(row.suggestedTtlMs)}</Td>
        <Td mono align="right">{ms(row.suggestedRenewMs)}</Td>
        <Td>
          <StatusPill tone={change.tone} label={change.label} />
        </Td>
      </Tr>
      <tr className="border-t-0">
        <td colSpan={8} className="px-3 pb-2 text-xs text-zinc-700 dark:text-zinc-300">
          <span className="sr-only">Why: </span>
          {row.reason}
        </td>
        <td colSpan={4} className="px-3 pb-2">
          {row.renewals > 0 ? <SlackHistogram histogram={row.slackHistogram} closeCalls={row.closeCalls} renewals={row.renewals} isCompact className="max-w-72" /> : null}
        </td>
      </tr>
    </Fragment>
  );
}
