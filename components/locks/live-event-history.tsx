"use client";
import { useIsFetching, useQueryClient } from "@tanstack/react-query";
import { useRefreshChoice } from "@/components/ui/live-refresh";
import { LiveTableBar, useHeldView } from "@/components/ui/live-table";
import { leaseKeys } from "@/lib/console/leases/keys";
import type { EventView } from "@/lib/console/shared/views";
import { EventTable, eventRowKey } from "./event-table";

const keysOf = (events: EventView[]) => events.map(eventRowKey);

/**
 * A lease page's event history, live but holding still while read (see
 * components/ui/live-table). The page's own detail query polls; this refreshes
 * it on demand and follows the viewer's refresh choice through it.
 */
export function LiveEventHistory({
  store,
  resource,
  events,
  updatedAt,
  clockOffsetMs,
}: {
  store: string;
  resource: string;
  events: EventView[];
  updatedAt: number;
  clockOffsetMs: number;
}) {
  const refresh = useRefreshChoice();
  const queryClient = useQueryClient();
  const queryKey = leaseKeys.detail(store, resource);
  const isFetching = useIsFetching({ queryKey }) > 0;
  const held = useHeldView(events, updatedAt, `${store}\u0000${resource}`, keysOf);
  return (
    <div {...held.pointerProps} className="space-y-1">
      <LiveTableBar
        held={held}
        noun={["event", "events"]}
        choice={refresh.choice}
        onChoice={refresh.setChoice}
        onRefreshNow={() => void queryClient.refetchQueries({ queryKey })}
        isFetching={isFetching}
      />
      <div {...held.focusProps}>
        <EventTable events={held.view} showResource={false} clockOffsetMs={clockOffsetMs} caption="Events of this resource" />
      </div>
    </div>
  );
}
