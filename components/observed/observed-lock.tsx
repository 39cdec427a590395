import Link from "next/link";
import { ObservedChangeCells } from "@/components/events/observed-events";
import { DataTable, MONO, TBody, Td, TableHeader, Tr } from "@/components/ui/data-table";
import { formatDuration, formatUtc } from "@/components/ui/format";
import { StatusPill } from "@/components/ui/status-pill";
import { eventsHref } from "@/lib/console/shared/links";
import type { ObservedLockPage, WaitLink } from "@/lib/console/shared/observed-history";

const DT = "text-xs font-medium uppercase tracking-wide text-zinc-500 dark:text-zinc-400";

/** One observed lock: its holder as last sampled, who waits, the chain of waits, and its recorded changes. */
export function ObservedLockDetail({ view }: { view: ObservedLockPage }) {
  const now = Date.parse(view.readAt);
  const lock = view.current;
  return (
    <div className="space-y-5">
      <div>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          <Link className="underline" href="/observed">Observed locks</Link> · {view.store}
        </p>
        <h1 className="break-all font-mono text-lg font-semibold tracking-tight">{view.resource}</h1>
        <p className="max-w-prose text-sm text-zinc-600 dark:text-zinc-400">
          A lock Leasewatch does not own, as the observer sampled it every {formatDuration(view.intervalMs)}: holds shorter than that may be missed, and “since” is when the observer first saw the holder.
          {view.sampledAt ? ` Last sample ${formatUtc(view.sampledAt)}.` : " The observer has not sampled this store yet."}
        </p>
        <div className="mt-1 flex flex-wrap gap-2">
          {view.stale && view.sampledAt ? <StatusPill tone="amber" label="stale" title="No sample for three intervals: the observer is down or cannot read this store" /> : null}
          {view.partial ? <StatusPill tone="amber" label="partial" title="The last sample reached its read bound: this lock may have changed unseen" /> : null}
        </div>
      </div>
      <section aria-labelledby="observed-holder" className="space-y-2">
        <h2 id="observed-holder" className="text-sm font-semibold">Holder</h2>
        {lock ? (
          <dl className="grid max-w-3xl grid-cols-[max-content_1fr] gap-x-6 gap-y-1 text-sm">
            <dt className={DT}>Held by</dt>
            <dd className={MONO}>{lock.holder}</dd>
            <dt className={DT}>Since (first seen)</dt>
            <dd>{lock.since ? `${formatUtc(lock.since)} · ${formatDuration(Math.max(0, now - Date.parse(lock.since)))}` : "before the recorded history"}</dd>
            <dt className={DT}>Waiters</dt>
            <dd>{lock.waiters > 0 ? <StatusPill tone="amber" label={`${lock.waiters} waiting`} /> : view.kind === "pg-advisory" ? "none" : "not known (this store does not say)"}</dd>
          </dl>
        ) : (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">Not held at the last sample.</p>
        )}
      </section>
      {view.waitChain ? <WaitChain chain={view.waitChain} /> : null}
      <section aria-labelledby="observed-timeline" className="space-y-2">
        <h2 id="observed-timeline" className="text-sm font-semibold">Holder timeline</h2>
        {view.timeline.length === 0 ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">No change recorded for this lock.</p>
        ) : (
          <div className="overflow-x-auto">
            <DataTable caption="Recorded changes, newest first">
              <TableHeader columns={["Time (UTC)", "Change", "Holder", { label: "Waiters", align: "right" }]} />
              <TBody>
                {view.timeline.map((e) => (
                  <Tr key={e.id}>
                    <Td className="whitespace-nowrap tabular-nums">{formatUtc(e.at)}</Td>
                    <ObservedChangeCells change={e} />
                  </Tr>
                ))}
              </TBody>
            </DataTable>
          </div>
        )}
        {view.hasMoreHistory ? (
          <p className="text-xs text-zinc-600 dark:text-zinc-400">
            The newest {view.timeline.length} changes; older ones are on <Link className="underline" href={eventsHref({ store: view.store, resource: view.resource, window: "7d" })}>the events page</Link>.
          </p>
        ) : null}
      </section>
    </div>
  );
}

function ChainLink({ link }: { link: WaitLink }) {
  return (
    <>
      <Link className={`${MONO} underline`} href={link.href}>{link.resource}</Link> <span className="text-zinc-600 dark:text-zinc-400">held by</span> <span className={MONO}>{link.holder}</span>
    </>
  );
}

function WaitChain({ chain }: { chain: NonNullable<ObservedLockPage["waitChain"]> }) {
  return (
    <section aria-labelledby="observed-wait-chain" className="space-y-2">
      <h2 id="observed-wait-chain" className="text-sm font-semibold">Wait chain <span className="font-normal text-zinc-500 dark:text-zinc-400">· at the last sample</span></h2>
      <div className="space-y-1 text-sm">
        <p>
          <span className="font-medium">Waiting here:</span>{" "}
          {chain.waiterPids.length === 0 ? "no session" : chain.waiterPids.map((pid) => `pid ${pid}`).join(", ")}
        </p>
        {chain.waitersHold.length > 0 ? (
          <ul className="list-disc pl-5">
            {chain.waitersHold.map((w) => (
              <li key={`${w.pid}/${w.resource}`}>
                pid {w.pid} itself holds <ChainLink link={w} />
                {w.waiters > 0 ? ` (${w.waiters} waiting there)` : ""}
              </li>
            ))}
          </ul>
        ) : null}
        <p>
          <span className="font-medium">The holder waits for:</span> {chain.holderWaitsFor.length === 0 ? "nothing (it is not blocked)" : null}
        </p>
        {chain.holderWaitsFor.length > 0 ? (
          <ol className="list-decimal pl-5">
            {chain.holderWaitsFor.map((l) => (
              <li key={l.resource}>
                <ChainLink link={l} />
              </li>
            ))}
          </ol>
        ) : null}
      </div>
    </section>
  );
}
