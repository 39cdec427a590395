"use client";
import Link from "next/link";
import { useState } from "react";
import { DataTable, MONO, TBody, Td, Th, THead, Tr } from "@/components/ui/data-table";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDuration, formatUtc } from "@/components/ui/format";
import { StatusPill } from "@/components/ui/status-pill";
import type { ObservedStoreView, ObservedView } from "@/lib/console/shared/observed";
import { observedLockHref } from "@/lib/console/shared/links";
import { useObservedQuery } from "@/lib/console/observed/observed-query";
import type { ObservedReleaseResult } from "@/lib/console/observed/observed-release-types";
import { shownOf } from "@/lib/observed/release-form";
import { OBSERVED_KIND_LABEL } from "./kind-label";
import { ObservedReleaseDialog, ObservedReleaseOutcome, type ObservedReleaseTarget } from "./observed-release-dialog";

/** What this user may do here (display only: the route checks again). */
export interface ObservedAccess {
  canRelease: boolean;
  canTerminate: boolean;
}

const ROW_BUTTON =
  "rounded-md border border-red-300 px-2 py-0.5 text-xs font-medium text-red-800 hover:bg-red-50 dark:border-red-800 dark:text-red-200 dark:hover:bg-red-950";

function since(iso: string | null, now: number): string {
  if (iso === null) return "before history";
  return `${formatDuration(Math.max(0, now - Date.parse(iso)))} (${formatUtc(iso)})`;
}

function StoreStatus({ store }: { store: ObservedStoreView }) {
  if (store.error) return <StatusPill tone="red" label="not read" detail={store.error} />;
  if (store.sampledAt === null) return <StatusPill tone="neutral" label="no sample yet" title="The observer has not recorded this store yet: is `npm run observer` running?" />;
  if (store.stale) return <StatusPill tone="amber" label="stale" detail={`last sample ${formatUtc(store.sampledAt)}`} title="No sample for three intervals: the observer is down or cannot read this store" />;
  return <StatusPill tone="green" label="sampled" detail={formatUtc(store.sampledAt)} />;
}

export function ObservedClient({ initialData, access }: { initialData: ObservedView; access: ObservedAccess }) {
  const query = useObservedQuery(initialData);
  const [target, setTarget] = useState<ObservedReleaseTarget | null>(null);
  const [done, setDone] = useState<{ result: ObservedReleaseResult; target: ObservedReleaseTarget } | null>(null);
  const mayAct = (store: ObservedStoreView) => store.releasable && (store.kind === "pg-advisory" ? access.canTerminate : access.canRelease);
  const view = query.data ?? initialData;
  // "Held for" counts to when the view was read, so server and browser render the same text.
  const now = Date.parse(view.readAt);
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-lg font-semibold tracking-tight">Observed locks</h1>
        <p className="max-w-prose text-sm text-zinc-600 dark:text-zinc-400">
          Locks Leasewatch does not own — Postgres advisory locks, ShedLock rows, Redis lock keys — as the observer sampled them every{" "}
          {formatDuration(view.intervalMs)}; holds shorter than that may be missed.
          {access.canRelease || access.canTerminate ? " Where a store allows it, a lock can be force-released (audited)." : null}
          {query.isError ? <span className="ml-2 text-amber-700 dark:text-amber-300">· live update failed: {query.error.message}</span> : null}
        </p>
      </div>
      {done ? <ObservedReleaseOutcome result={done.result} target={done.target} takeFocus /> : null}
      <ObservedReleaseDialog
        target={target}
        onClose={() => setTarget(null)}
        onDone={(result, t) => {
          setTarget(null);
          setDone({ result, target: t });
        }}
      />
      {view.stores.length === 0 ? (
        <EmptyState title="No observed stores configured">
          Set <code className={MONO}>LEASEWATCH_OBSERVED</code> to watch advisory locks, a ShedLock table or Redis lock keys, and run{" "}
          <code className={MONO}>npm run observer</code> (docs/observed-locks.md).
        </EmptyState>
      ) : (
        view.stores.map((store) => (
          <section key={store.name} aria-labelledby={`observed-${store.name}`} className="space-y-2">
            <div className="flex flex-wrap items-center gap-2">
              <h2 id={`observed-${store.name}`} className="text-sm font-semibold">
                {store.name} <span className="font-normal text-zinc-500 dark:text-zinc-400">· {OBSERVED_KIND_LABEL[store.kind]}</span>
              </h2>
              <StoreStatus store={store} />
              {store.partial ? (
                <StatusPill tone="amber" label="partial" title="The last sample reached its read bound: locks it did not reach keep their earlier state" />
              ) : null}
              {store.hidden > 0 ? <span className="text-xs text-zinc-500 dark:text-zinc-400">{store.hidden} outside your scope not shown</span> : null}
            </div>
            {store.locks.length === 0 ? (
              <p className="text-sm text-zinc-600 dark:text-zinc-400">{store.sampledAt === null ? "Nothing recorded yet." : "Nothing held at the last sample."}</p>
            ) : (
              <div className="overflow-x-auto">
                <DataTable caption={`Locks held in ${store.name} at the last sample`}>
                  <THead>
                    <tr>
                      <Th>Lock</Th>
                      <Th>Holder</Th>
                      <Th align="right">Waiters</Th>
                      <Th>Held since (first seen)</Th>
                      {mayAct(store) ? <Th><span className="sr-only">Actions</span></Th> : null}
                    </tr>
                  </THead>
                  <TBody>
                    {store.locks.map((lock) => (
                      <Tr key={lock.resource} rowKey={`${store.name}/${lock.resource}`}>
                        <Td className={MONO}>
                          <Link className="underline" href={observedLockHref(store.name, lock.resource)}>
                            {lock.resource}
                          </Link>
                        </Td>
                        <Td className={MONO}>{lock.holder}</Td>
                        <Td align="right">{lock.waiters > 0 ? <StatusPill tone="amber" label={`${lock.waiters} waiting`} /> : "0"}</Td>
                        <Td>{since(lock.since, now)}</Td>
                        {mayAct(store) ? (
                          <Td>
                            <ReleaseButton store={store} lock={lock} onOpen={(t) => { setDone(null); setTarget(t); }} />
                          </Td>
                        ) : null}
                      </Tr>
                    ))}
                  </TBody>
                </DataTable>
              </div>
            )}
          </section>
        ))
      )}
    </div>
  );
}

function ReleaseButton({ store, lock, onOpen }: { store: ObservedStoreView; lock: ObservedStoreView["locks"][number]; onOpen: (target: ObservedReleaseTarget) => void }) {
  const shown = shownOf(store.kind, lock);
  const label = store.kind === "pg-advisory" ? "Terminate holder" : "Force release";
  if (!shown) {
    const why = store.kind === "pg-advisory" ? "Held shared by several sessions: terminate them with psql if needed" : "Several holders: release them one at a time with redis-cli if needed";
    return <span className="text-xs text-zinc-500 dark:text-zinc-400" title={why}>—</span>;
  }
  return (
    <button type="button" className={ROW_BUTTON} aria-label={`${label}: ${lock.resource}`} onClick={() => onOpen({ store: store.name, resource: lock.resource, holder: lock.holder, shown })}>
      {label}
    </button>
  );
}
