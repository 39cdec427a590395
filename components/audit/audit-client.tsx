"use client";
import Link from "next/link";
import { useMemo } from "react";
import { DataTable, TBody, Td, Tr, TableHeader } from "@/components/ui/data-table";
import { cx } from "@/components/ui/cx";
import { EmptyState } from "@/components/ui/empty-state";
import { useRefreshChoice } from "@/components/ui/live-refresh";
import { LiveTableBar, useHeldView } from "@/components/ui/live-table";
import { RelativeTime } from "@/components/ui/relative-time";
import { Pager } from "@/components/locks/pager";
import { buildQuery, leaseHref } from "@/lib/console/shared/links";
import { useAuditQuery } from "@/lib/console/audit/audit-query";
import type { AuditEntryView, AuditView } from "@/lib/console/shared/views";
import { AuditFilters } from "./audit-filters";
import { AUDIT_ACTION_LABELS, AuditOutcomeBadge } from "./audit-outcome-badge";
import { ActorName } from "./actor-name";

const FILTER_KEYS = ["actor", "prefix", "resource", "store", "action", "outcome", "window", "from", "to"] as const;
const EXPORT_LINK = "rounded-md border border-zinc-300 px-2.5 py-1 text-sm font-medium hover:bg-zinc-100 dark:border-zinc-700 dark:hover:bg-zinc-800";

const isTokenAction = (action: string) => action === "token_create" || action === "token_revoke";

const auditKeysOf = (view: AuditView) => view.items.map((entry) => entry.id);

export function AuditClient({ search, initialData }: { search: string; initialData: AuditView }) {
  const refresh = useRefreshChoice();
  const query = useAuditQuery(search, initialData, { intervalMs: refresh.intervalMs });
  // While the viewer reads the log, it holds still; newer entries wait behind "N new entries — show".
  const held = useHeldView(query.data ?? initialData, query.dataUpdatedAt, search, auditKeysOf);
  const view = held.view;
  const params = useMemo(() => new URLSearchParams(search), [search]);
  const hasFilters = FILTER_KEYS.some((k) => params.get(k));
  const marked = params.get("entry");
  // Exports take the filters, never the page: they stream every matching entry.
  const exportQuery = buildQuery(Object.fromEntries(FILTER_KEYS.map((k) => [k, params.get(k)])));

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <div>
          <h1 className="text-lg font-semibold tracking-tight">Audit log</h1>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            Every force-release and API token change, allowed or refused. Append-only and hash-chained; <code className="font-mono">npm run audit:verify</code> checks it.
          </p>
        </div>
        <div className="flex items-center gap-2">
          <span className="text-sm text-zinc-600 dark:text-zinc-400">Export all matching:</span>
          <a className={EXPORT_LINK} href={`/api/audit/export${exportQuery ? `${exportQuery}&` : "?"}format=csv`} download>
            CSV
          </a>
          <a className={EXPORT_LINK} href={`/api/audit/export${exportQuery ? `${exportQuery}&` : "?"}format=json`} download>
            JSON
          </a>
        </div>
      </div>
      <AuditFilters values={params} />
      {query.isError ? (
        <p role="alert" className="text-sm text-amber-800 dark:text-amber-300">
          Live update failed: {query.error.message}
        </p>
      ) : null}
      <div {...held.pointerProps} className="space-y-1">
        <LiveTableBar
          held={held}
          noun={["entry", "entries"]}
          choice={refresh.choice}
          onChoice={refresh.setChoice}
          onRefreshNow={() => void query.refetch()}
          isFetching={query.isFetching}
        />
        {view.items.length === 0 ? (
          hasFilters ? (
            <EmptyState title="No audit entry matches these filters" action={<Link className="underline" href="/audit">Clear the filters</Link>}>
              Actor matches a verified email or the stable id (issuer#subject) exactly; prefix matches the start of the resource name.
            </EmptyState>
          ) : (
            <EmptyState title="Nothing has been audited yet">
              Entries appear here when an operator uses <strong>Force release</strong> on a lease page, bulk release on the{" "}
              <Link className="underline" href="/locks">
                leases
              </Link>{" "}
              page, or creates or revokes an{" "}
              <Link className="underline" href="/tokens">
                API token
              </Link>{" "}
              — refused attempts included.
            </EmptyState>
          )
        ) : (
          <div {...held.focusProps}>
            <AuditTable items={view.items} marked={marked} />
          </div>
        )}
      </div>
      <div className="flex justify-end">
        <Pager basePath="/audit" search={search} nextCursor={view.nextCursor} label="Audit log" />
      </div>
    </div>
  );
}

function AuditTable({ items, marked }: { items: AuditEntryView[]; marked: string | null }) {
  return (
    <DataTable caption="Audit entries, newest first">
      <TableHeader columns={["When", "Outcome", "Actor", "Resource · store", "Holder shown", { label: "Token", align: "right" }, "Reason", { label: "Entry", align: "right" }]} />
      <TBody>
        {items.map((entry) => (
          <Tr key={entry.id} className={cx(marked === entry.id && "bg-sky-50 outline-2 outline-sky-500 dark:bg-sky-950/60")}>
            <Td>
              <span id={`audit-${entry.id}`}>
                <RelativeTime value={entry.at} />
              </span>
            </Td>
            <Td className="max-w-48">
              <span className="flex items-center gap-1.5">
                <AuditOutcomeBadge outcome={entry.outcome} />
                {entry.action !== "force_release" ? <span className="text-xs text-zinc-600 dark:text-zinc-400">{AUDIT_ACTION_LABELS[entry.action] ?? entry.action}</span> : null}
              </span>
              {entry.detail ? (
                <span className="block truncate text-xs text-zinc-600 dark:text-zinc-400" title={entry.detail}>
                  {entry.detail}
                </span>
              ) : null}
              {entry.newHolder ? (
                <span className="block truncate text-xs text-zinc-600 dark:text-zinc-400">
                  now <span className="font-mono">{entry.newHolder.owner ?? "?"}</span> (token <span className="font-mono">{entry.newHolder.fencingToken ?? "?"}</span>)
                </span>
              ) : null}
            </Td>
            <Td mono className="max-w-44">
              <ActorName id={entry.actorId} email={entry.actorEmail} roles={entry.actorRoles} />
            </Td>
            <Td mono className="max-w-48" title={entry.resource ?? undefined}>
              {isTokenAction(entry.action) ? (
                <Link href="/tokens" className="block truncate text-sky-700 underline-offset-2 hover:underline dark:text-sky-300">
                  {entry.resource || "—"}
                </Link>
              ) : entry.store && entry.resource ? (
                <Link href={leaseHref(entry.store, entry.resource)} className="block truncate text-sky-700 underline-offset-4 hover:underline dark:text-sky-300">
                  {entry.resource}
                </Link>
              ) : (
                <span className="block truncate">{entry.resource ?? "—"}</span>
              )}
              <span className="block truncate text-[11px] text-zinc-600 dark:text-zinc-400">{isTokenAction(entry.action) ? "API token" : (entry.store ?? "—")}</span>
            </Td>
            <Td mono className="max-w-32 truncate" title={entry.leaseId ? `lease id ${entry.leaseId} · task ${entry.task ?? "—"}` : undefined}>
              {entry.owner ?? "—"}
            </Td>
            <Td mono align="right">{entry.fencingToken ?? "—"}</Td>
            <Td className="max-w-52 truncate" title={entry.reason ?? undefined}>
              {entry.reason ?? "—"}
            </Td>
            <Td mono align="right" title={entry.requestId ? `request ${entry.requestId}` : undefined}>
              {entry.id}
            </Td>
          </Tr>
        ))}
      </TBody>
    </DataTable>
  );
}
