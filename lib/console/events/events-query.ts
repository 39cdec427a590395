"use client";
import { useQuery } from "@tanstack/react-query";
import type { EventsView } from "@/lib/console/shared/views";
import { fetchView, liveOptions, withSearch } from "@/lib/console/shared/fetch-view";
import { eventKeys } from "./keys";

export function fetchEvents(search: string, signal?: AbortSignal): Promise<EventsView> {
  return fetchView<EventsView>(withSearch("/api/events", search), signal);
}

/** `intervalMs`: the viewer's refresh choice (null: no polling). */
export function useEventsQuery(search: string, initialData?: EventsView, options: { intervalMs?: number | null } = {}) {
  return useQuery({
    queryKey: eventKeys.list(search),
    queryFn: ({ signal }) => fetchEvents(search, signal),
    ...liveOptions(initialData, options.intervalMs),
  });
}
