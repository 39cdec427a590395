import Link from "next/link";
import { DataTable, MONO, TBody, Td, TableHeader, Tr } from "@/components/ui/data-table";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDuration, formatUtc } from "@/components/ui/format";
import { StatusPill } from "@/components/ui/status-pill";
import type { ObservedAtView } from "@/lib/console/shared/observed-history";
import { OBSERVED_KIND_LABEL } from "./kind-label";

/** `/observed?at=`: the observed locks held at an instant, rebuilt from the observer's recorded changes. */
export function ObservedAt({ view }: { view: ObservedAtView }) {
  const at = Date.parse(view.at);
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-lg font-semibold tracking-tight">Observed locks at {formatUtc(view.at)}</h1>
        <p className="max-w-prose text-sm text-zinc-600 dark:text-zinc-400">
          Rebuilt from the changes the observer recorded, sampling every {formatDuration(view.intervalMs)}: a hold shorter than that may be missing, and “since” is when the observer first saw the holder.{" "}
          <Link className="underline" href="/observed">Back to now</Link>
        </p>
      </div>
      {view.stores.length === 0 ? (
        <EmptyState title="No observed stores configured">Set LEASEWATCH_OBSERVED and run the observer (docs/observed-locks.md).</EmptyState>
      ) : (
        view.stores.map((store) => (
          <section key={store.name} aria-labelledby={`observed-at-${store.name}`} className="space-y-2">
            <div className="flex flex-wrap items-center gap-2">
              <h2 id={`observed-at-${store.name}`} className="text-sm font-semibold">
                {store.name} <span className="font-normal text-zinc-500 dark:text-zinc-400">· {OBSERVED_KIND_LABEL[store.kind]}</span>
              </h2>
              {store.error ? <StatusPill tone="red" label="not read" detail={store.error} /> : null}
              {store.gap ? <StatusPill tone="neutral" label="no record" detail={store.gap} /> : null}
              {store.hasMore ? <StatusPill tone="amber" label="partial" title={`More were held: the first ${store.locks.length} by name are listed`} /> : null}
            </div>
            {store.error || store.gap ? null : store.locks.length === 0 ? (
              <p className="text-sm text-zinc-600 dark:text-zinc-400">Nothing held at this instant, as far as the observer saw.</p>
            ) : (
              <div className="overflow-x-auto">
                <DataTable caption={`Locks held in ${store.name} at ${formatUtc(view.at)}`}>
                  <TableHeader columns={["Lock", "Holder", { label: "Waiters", align: "right" }, "Held since (first seen)"]} />
                  <TBody>
                    {store.locks.map((lock) => (
                      <Tr key={lock.resource}>
                        <Td className={MONO}>
                          <Link className="underline" href={lock.href}>{lock.resource}</Link>
                        </Td>
                        <Td className={MONO}>{lock.holder}</Td>
                        <Td align="right" className="tabular-nums">{lock.waiters}</Td>
                        <Td>{lock.since ? `${formatUtc(lock.since)} · ${formatDuration(Math.max(0, at - Date.parse(lock.since)))} by then` : "before the recorded history"}</Td>
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
