import { DataTable, TBody, THead, Td, Th, Tr } from "@/components/ui/data-table";
import { StatusPill } from "@/components/ui/status-pill";
import { formatNumber, formatPercent, formatRate, formatRatio } from "@/lib/console/format";
import type { StoreOutcome, StoreOverview } from "@/lib/console/views";

/** The same numbers per store; a store that could not be read says so in its row. */
export function StoreBreakdown({ stores }: { stores: StoreOutcome<StoreOverview>[] }) {
  return (
    <DataTable caption="Per store, over the window">
      <THead>
        <tr>
          <Th>Store</Th>
          <Th>Status</Th>
          <Th align="right">Active</Th>
          <Th align="right">Acquired / min</Th>
          <Th align="right">Contention</Th>
          <Th align="right">Expired : released</Th>
          <Th align="right">Force-released</Th>
          <Th align="right">Renew failures</Th>
          <Th align="right">Lost</Th>
          <Th align="right">Fencing rejections</Th>
        </tr>
      </THead>
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
                <StatusPill tone="red" label="down" detail={s.kind} />
              </Td>
              <td colSpan={8} className="px-2 py-1.5 pr-3 text-sm text-red-800 dark:text-red-200">
                Not counted: {s.error}
              </td>
            </Tr>
          ),
        )}
      </TBody>
    </DataTable>
  );
}
