import Link from "next/link";
import { DataTable, TBody, Td, TableHeader, Tr } from "@/components/ui/data-table";
import { formatDuration, formatUtc } from "@/components/ui/format";
import { StatusPill } from "@/components/ui/status-pill";
import { formatNumber } from "@/lib/console/shared/format";
import type { ObservedOverview } from "@/lib/console/shared/observed-history";

const KIND_LABEL: Record<ObservedOverview["stores"][number]["kind"], string> = {
  "pg-advisory": "advisory locks",
  shedlock: "ShedLock",
  "redis-keys": "Redis keys",
};

const seconds = (value: number | null) => (value === null ? "—" : formatDuration(value * 1000));

/** Locks the library does not own, per observed store: what the observer sampled (now, or at the past view's instant). */
export function ObservedOverviewSection({ observed }: { observed: ObservedOverview }) {
  return (
    <section aria-labelledby="observed-stores" className="min-w-0">
      <h2 id="observed-stores" className="mb-1 text-sm font-semibold">
        Observed locks {observed.at ? <span className="font-normal text-zinc-500 dark:text-zinc-400">at {formatUtc(observed.at)}</span> : null}
      </h2>
      <p className="mb-2 max-w-prose text-xs text-zinc-600 dark:text-zinc-400">
        Locks Leasewatch does not own, as the observer sampled them every {formatDuration(observed.intervalMs)}: holds shorter than that may be missed, and a hold counts from when the observer first saw it.
      </p>
      <DataTable caption="Observed stores">
        <TableHeader columns={["Observed store", "Status", { label: "Held", align: "right" }, { label: "Waiters", align: "right" }, { label: "Oldest hold", align: "right" }, { label: "Oldest hold with waiters", align: "right" }]} />
        <TBody>
          {observed.stores.map((s) => (
            <Tr key={s.name}>
              <Td mono>
                <Link className="underline" href={s.href}>
                  {s.name}
                </Link>
              </Td>
              <Td>
                <StoreStatus store={s} isPast={observed.at !== null} intervalMs={observed.intervalMs} />
              </Td>
              <Td align="right" className="tabular-nums">
                {formatNumber(s.held)}
                {s.partial ? "+" : ""}
              </Td>
              <Td align="right" className="tabular-nums">
                {s.waiters > 0 ? <StatusPill tone="amber" label={`${formatNumber(s.waiters)} waiting`} /> : "0"}
              </Td>
              <Td align="right" className="tabular-nums">{seconds(s.oldestHoldSeconds)}</Td>
              <Td align="right" className="tabular-nums">{seconds(s.oldestBlockingHoldSeconds)}</Td>
            </Tr>
          ))}
        </TBody>
      </DataTable>
    </section>
  );
}

function StoreStatus({ store, isPast, intervalMs }: { store: ObservedOverview["stores"][number]; isPast: boolean; intervalMs: number }) {
  const kind = KIND_LABEL[store.kind];
  if (!store.ok) return <StatusPill tone="amber" label="not read" detail={kind} />;
  if (store.partial) return <StatusPill tone="amber" label="partial" detail={kind} title={isPast ? "More were held than listed" : "The last sample reached its read bound: some locks may be missing"} />;
  if (isPast) return <StatusPill tone="green" label="rebuilt" detail={kind} />;
  if (store.sampleAgeSeconds === null) return <StatusPill tone="neutral" label="no sample yet" detail={kind} />;
  if (store.sampleAgeSeconds * 1000 > intervalMs * 3) return <StatusPill tone="amber" label="stale" detail={kind} title="No sample for three intervals: the observer is down or cannot read this store" />;
  return <StatusPill tone="green" label="sampled" detail={kind} />;
}
