import Link from "next/link";
import { DataTable, MONO, TBody, Td, Tr, TableHeader } from "@/components/ui/data-table";
import { formatDuration, formatUtc } from "@/components/ui/format";
import type { Tone } from "@/components/ui/badge";
import { StatusPill } from "@/components/ui/status-pill";
import { leaseHref } from "@/lib/console/shared/links";
import type { PastLeaseView } from "@/lib/console/past/past-views";
import type { PastHoldEnding } from "@leasewatch/lease/model";

const ENDINGS: Record<PastHoldEnding, { label: string; tone: Tone }> = {
  released: { label: "released", tone: "green" },
  expired: { label: "expired", tone: "red" },
  force_released: { label: "force-released", tone: "amber" },
  held: { label: "still held", tone: "blue" },
};

/**
 * A time on the instant's own UTC day as its bare time of day (the page names the day and the
 * column says UTC), else in full: the table then fits 1280 px beside 16-digit Redis tokens.
 */
function formatNearInstant(iso: string, at: string): string {
  const full = formatUtc(iso);
  return full.slice(0, 10) === formatUtc(at).slice(0, 10) ? full.slice(11).replace(/ UTC$/, "") : full;
}

/** The holders at the instant: who, since when, and how each hold ended later. */
export function PastLeasesTable({ items, at }: { items: readonly PastLeaseView[]; at: string }) {
  return (
    <DataTable caption={`Leases held at ${formatUtc(at)}`}>
      <TableHeader columns={["Store", "Resource", "Owner", "Task", { label: "Token", align: "right" }, "Lease id", { label: "Held then", align: "right" }, "Acquired (UTC)", "Ended later (UTC)"]} />
      <TBody>
        {items.map((h) => {
          const ending = ENDINGS[h.ending];
          return (
            <Tr key={`${h.store}/${h.leaseId}`} rowKey={`${h.store}/${h.leaseId}`}>
              <Td mono>{h.store}</Td>
              <Td mono>
                <Link href={`${leaseHref(h.store, h.resource)}?at=${encodeURIComponent(at)}`} className="underline underline-offset-4">
                  {h.resource}
                </Link>
              </Td>
              <Td mono>{h.owner}</Td>
              <Td mono>{h.task}</Td>
              <Td mono align="right">
                {h.fencingToken}
              </Td>
              <Td mono>
                <span title={h.leaseId}>{h.leaseId.slice(0, 8)}…</span>
              </Td>
              <Td align="right" className="tabular-nums" title={`${h.heldForMs} ms`}>
                {formatDuration(h.heldForMs)}
              </Td>
              <Td mono>
                <time dateTime={h.acquiredAt} title={formatUtc(h.acquiredAt)}>
                  {formatNearInstant(h.acquiredAt, at)}
                </time>
              </Td>
              <Td>
                <StatusPill tone={ending.tone} label={ending.label} />
                {h.endedAt ? (
                  <time dateTime={h.endedAt} className={`ml-2 ${MONO}`} title={formatUtc(h.endedAt)}>
                    {formatNearInstant(h.endedAt, at)}
                  </time>
                ) : null}
              </Td>
            </Tr>
          );
        })}
      </TBody>
    </DataTable>
  );
}
