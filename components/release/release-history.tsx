"use client";
import Link from "next/link";
import { DataTable, TBody, Td, Tr, TableHeader } from "@/components/ui/data-table";
import { RelativeTime } from "@/components/ui/relative-time";
import { buildQuery } from "@/lib/console/shared/links";
import { useLeaseAuditQuery } from "@/lib/console/audit/audit-query";
import { AuditOutcomeBadge } from "@/components/audit/audit-outcome-badge";
import { ActorName } from "@/components/audit/actor-name";

/** Force-release attempts on this resource (the audit log's entries for it), newest first. */
export function ReleaseHistory({ store, resource, isPaused }: { store: string; resource: string; isPaused: boolean }) {
  const query = useLeaseAuditQuery(store, resource, { enabled: !isPaused });
  const items = query.data?.items ?? [];
  return (
    <section aria-labelledby="force-release-history" className="rounded-lg border border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900/40">
      <div className="mb-3 flex items-baseline justify-between">
        <h2 id="force-release-history" className="text-sm font-semibold">
          Force-release history
        </h2>
        <Link href={`/audit${buildQuery({ store, resource })}`} className="text-sm text-sky-700 hover:underline dark:text-sky-300">
          Open in audit →
        </Link>
      </div>
      {query.isPending ? (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">Reading the audit log…</p>
      ) : query.isError ? (
        <p className="text-sm text-amber-800 dark:text-amber-300">The audit log could not be read: {query.error.message}</p>
      ) : items.length === 0 ? (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">Nobody has tried to force-release this resource.</p>
      ) : (
        <DataTable caption="Force-release attempts on this resource">
          <TableHeader columns={["When", "Outcome", "Actor", "Lease id", { label: "Token", align: "right" }, "Reason"]} />
          <TBody>
            {items.map((entry) => (
              <Tr key={entry.id}>
                <Td>
                  <Link href={`/audit${buildQuery({ store, resource, entry: entry.id })}#audit-${entry.id}`} className="text-sky-700 hover:underline dark:text-sky-300">
                    <RelativeTime value={entry.at} />
                  </Link>
                </Td>
                <Td>
                  <AuditOutcomeBadge outcome={entry.outcome} />
                </Td>
                <Td mono className="max-w-44">
                  <ActorName id={entry.actorId} email={entry.actorEmail} />
                </Td>
                <Td mono className="max-w-32 truncate" title={entry.leaseId ?? undefined}>
                  {entry.leaseId ?? "—"}
                </Td>
                <Td mono align="right">{entry.fencingToken ?? "—"}</Td>
                <Td className="max-w-80 truncate" title={entry.reason ?? undefined}>
                  {entry.reason ?? "—"}
                </Td>
              </Tr>
            ))}
          </TBody>
        </DataTable>
      )}
    </section>
  );
}
