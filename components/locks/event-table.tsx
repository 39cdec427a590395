import Link from "next/link";
import { DataTable, TBody, THead, Td, Th, Tr } from "@/components/ui/data-table";
import { formatDuration } from "@/components/ui/format";
import { RelativeTime } from "@/components/ui/relative-time";
import { leaseHref } from "@/lib/console/links";
import type { EventView } from "@/lib/console/views";
import { EventKindBadge } from "./event-kind-badge";

/** Events, newest first. `showResource` off on a lease's own page. */
export function EventTable({ events, showResource = true, clockOffsetMs = 0, caption }: { events: EventView[]; showResource?: boolean; clockOffsetMs?: number; caption: string }) {
  return (
    <DataTable caption={caption}>
      <THead>
        <tr>
          <Th>When</Th>
          <Th>Kind</Th>
          {showResource ? <Th>Resource</Th> : null}
          <Th>Store</Th>
          <Th>Owner</Th>
          <Th>Task</Th>
          <Th align="right">Token</Th>
          <Th align="right">Held</Th>
          {/* Takes what the other columns leave, truncated (full text on hover). */}
          <Th className="w-full">Details</Th>
        </tr>
      </THead>
      <TBody>
        {events.map((e) => (
          <Tr key={`${e.store}\u0000${e.id}`}>
            <Td>
              <RelativeTime value={e.at} clockOffsetMs={clockOffsetMs} />
            </Td>
            <Td>
              <EventKindBadge kind={e.kind} />
            </Td>
            {showResource ? (
              <Td mono className="max-w-64 truncate" title={e.resource}>
                <Link href={leaseHref(e.store, e.resource)} className="text-sky-700 underline-offset-2 hover:underline dark:text-sky-300">
                  {e.resource}
                </Link>
              </Td>
            ) : null}
            <Td mono>{e.store}</Td>
            <Td mono className="max-w-44 truncate" title={e.owner ?? undefined}>{e.owner ?? "—"}</Td>
            <Td mono className="max-w-32 truncate" title={e.task ?? undefined}>{e.task ?? "—"}</Td>
            <Td mono align="right" title={e.leaseId ? `lease id ${e.leaseId}` : undefined}>{e.fencingToken ?? "—"}</Td>
            <Td align="right" className="tabular-nums">{e.holdMs === null ? "" : formatDuration(e.holdMs)}</Td>
            <Td className="w-full max-w-0 min-w-32 truncate text-zinc-600 dark:text-zinc-400" title={[e.note, e.actor ? `by ${e.actor}` : null, e.reason].filter(Boolean).join(" · ") || undefined}>
              {[e.actor ? `by ${e.actor}` : null, e.kind === "force_released" ? e.reason : null, e.note].filter(Boolean).join(" · ")}
            </Td>
          </Tr>
        ))}
      </TBody>
    </DataTable>
  );
}
