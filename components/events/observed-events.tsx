import Link from "next/link";
import { DataTable, MONO, TBody, Td, TableHeader, Tr } from "@/components/ui/data-table";
import { formatUtc } from "@/components/ui/format";
import { StatusPill } from "@/components/ui/status-pill";
import type { ObservedEventView } from "@/lib/console/shared/observed";
import type { ObservedEventsSection } from "@/lib/console/shared/observed-history";

const OBSERVED_KIND_LABEL: Record<ObservedEventView["kind"], string> = {
  appeared: "appeared",
  holder_changed: "holder changed",
  waiters_changed: "waiters changed",
  gone: "gone",
};

const KIND_TONE: Record<ObservedEventView["kind"], "green" | "amber" | "neutral"> = {
  appeared: "green",
  holder_changed: "amber",
  waiters_changed: "amber",
  gone: "neutral",
};

/** What the holder cell says for one recorded change. */
function observedHolderText(e: Pick<ObservedEventView, "kind" | "holder" | "previousHolder">): string {
  if (e.kind === "gone") return `was ${e.previousHolder ?? "—"}`;
  if (e.kind === "holder_changed") return `${e.holder ?? "—"} (was ${e.previousHolder ?? "—"})`;
  return e.holder ?? "—";
}

/** One recorded change's cells: what changed, the holder, the waiters. */
export function ObservedChangeCells({ change }: { change: ObservedEventView }) {
  return (
    <>
      <Td>
        <StatusPill tone={KIND_TONE[change.kind]} label={OBSERVED_KIND_LABEL[change.kind]} />
      </Td>
      {/* "pid … · app (was pid … · app)" wraps rather than push the table past the page. */}
      <Td className={`${MONO} min-w-48 whitespace-normal!`}>{observedHolderText(change)}</Td>
      <Td align="right" className="tabular-nums">{change.waiters}</Td>
    </>
  );
}

/** `/events`' observed part: changes the observer recorded on locks the library does not own. */
export function ObservedEvents({ section }: { section: ObservedEventsSection }) {
  return (
    <section aria-labelledby="observed-events" className="space-y-2">
      <h2 id="observed-events" className="text-sm font-semibold">
        Observed events <span className="font-normal text-zinc-500 dark:text-zinc-400">· locks Leasewatch does not own, as the observer sampled them</span>
      </h2>
      {section.error ? (
        <p className="text-sm text-amber-800 dark:text-amber-200">Observed history not read: {section.error}</p>
      ) : section.skipped ? (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">Not listed: {section.skipped}. Clear those filters to see them.</p>
      ) : section.items.length === 0 ? (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">No observed change matches these filters in this window.</p>
      ) : (
        <>
          <div className="overflow-x-auto">
            <DataTable caption="Observed events, newest first">
              <TableHeader columns={["Time (UTC)", "Observed store", "Lock", "Change", "Holder", { label: "Waiters", align: "right" }]} />
              <TBody>
                {section.items.map((e) => (
                  <Tr key={`${e.store}/${e.id}`}>
                    <Td className="whitespace-nowrap tabular-nums">{formatUtc(e.at)}</Td>
                    <Td mono>
                      {e.store} <StatusPill tone="neutral" label="observed" />
                    </Td>
                    <Td className={`${MONO} max-w-72 truncate`} title={e.resource}>
                      <Link className="underline" href={e.href}>
                        {e.resource}
                      </Link>
                    </Td>
                    <ObservedChangeCells change={e} />
                  </Tr>
                ))}
              </TBody>
            </DataTable>
          </div>
          {section.hasMore ? (
            <p className="text-xs text-zinc-600 dark:text-zinc-400">The newest {section.limit} shown: choose a shorter window, an observed store or a prefix for older ones.</p>
          ) : null}
        </>
      )}
      <p className="text-xs text-zinc-500 dark:text-zinc-400">Sampled, not recorded by the lock itself: a hold shorter than the sampling interval may be missing.</p>
    </section>
  );
}
