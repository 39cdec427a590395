import { DataTable, TBody, Td, Tr, TableHeader } from "@/components/ui/data-table";
import { StatusPill } from "@/components/ui/status-pill";
import { formatNumber, formatPercent, formatRate, formatRatio } from "@/lib/console/shared/format";
import type { StoreOutcome, StoreOverview } from "@/lib/console/shared/views";

/** The same numbers per store; a store that could not be read says so in its row. */
export function StoreBreakdown({ stores }: { stores: StoreOutcome<StoreOverview>[] }) {
  return (
    <DataTable caption="Per store, over the window">
      <TableHeader columns={["Store", "Status", { label: "Active", align: "right" }, { label: "Acquired / min", align: "right" }, { label: "Contention", align: "right" }, { label: "Expired : released", align: "right" }, { label: "Force-released", align: "right" }, { label: "Renew failures", align: "right" }, { label: "Lost", align: "right" }, { label: "Fencing rejections", align: "right" }]} />
      <TBody>
        {stores.map((s) =>
          s.ok ? (
            <Tr key={s.store}>
              <Td mono>{s.store}</Td>
              <Td>
                <StatusPill tone="green" label="read" detail={s.kind} />
              </Td>
              <Td align="right" className="tabular-nums">{formatNumber(s.data.tiles.activeLeases)}</Td>
              <Td align="right" className="tabular-nums">{formatRate(s.data.tiles.acquisitionsPerMinute)}</Td>
              <Td align="right" className="tabular-nums">{formatPercent(s.data.tiles.contentionRate)}</Td>
              <Td align="right" className="tabular-nums" title={`${s.data.tiles.expired} expired, ${s.data.tiles.released} released`}>
                {formatRatio(s.data.tiles.expiredToReleased)}
              </Td>
              <Td align="right" className="tabular-nums">{formatNumber(s.data.tiles.forceReleased)}</Td>
              <Td align="right" className="tabular-nums">{formatNumber(s.data.tiles.renewFailed)}</Td>
              <Td align="right" className="tabular-nums">{formatNumber(s.data.tiles.lost)}</Td>
              <Td align="right" className="tabular-nums">{formatNumber(s.data.tiles.fencingRejected)}</Td>
            </Tr>
          ) : (
            <Tr key={s.store}>
              <Td mono>{s.store}</Td>
              <Td>
                {/* "down" only for a failed connection: a refused or failed read is not an outage. */}
                {s.cause === "unreachable" ? (
                  <StatusPill tone="red" label="down" detail={s.kind} />
                ) : (
                  <StatusPill tone="amber" label={s.cause === "refused" ? "not counted" : "not read"} detail={s.kind} />
                )}
              </Td>
              <td colSpan={8} className={`px-2 py-1.5 pr-3 text-sm ${s.cause === "unreachable" ? "text-red-800 dark:text-red-200" : "text-amber-900 dark:text-amber-100"}`}>
                Not counted: {s.error}
              </td>
            </Tr>
          ),
        )}
      </TBody>
    </DataTable>
  );
}
