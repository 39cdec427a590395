"use client";
import { useQuery } from "@tanstack/react-query";
import type { LeasesView } from "@/lib/console/shared/views";
import { fetchView, liveOptions, withSearch } from "@/lib/console/shared/fetch-view";
import { leaseKeys } from "./keys";

export function fetchLeases(search: string, signal?: AbortSignal): Promise<LeasesView> {
  return fetchView<LeasesView>(withSearch("/api/leases", search), signal);
}

/** `paused`: no polling while the bulk release dialog is open. `intervalMs`: the viewer's refresh choice (null: no polling). */
export function useLeasesQuery(search: string, initialData?: LeasesView, options: { paused?: boolean; intervalMs?: number | null } = {}) {
  const isPaused = options.paused === true;
  return useQuery({
    queryKey: leaseKeys.list(search),
    queryFn: ({ signal }) => fetchLeases(search, signal),
    ...liveOptions(initialData, options.intervalMs),
    enabled: !isPaused,
    ...(isPaused ? { refetchInterval: false as const } : {}),
  });
}
