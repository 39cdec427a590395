"use client";
import { useQuery } from "@tanstack/react-query";
import { leaseApiHref } from "@/lib/console/shared/links";
import type { LeaseDetailView, StoreOutcome } from "@/lib/console/shared/views";
import { fetchView, LIVE_POLL_MS } from "@/lib/console/shared/fetch-view";
import { leaseKeys } from "./keys";

export type LeaseDetailResponse = StoreOutcome<LeaseDetailView>;

export function fetchLeaseDetail(store: string, resource: string, signal?: AbortSignal): Promise<LeaseDetailResponse> {
  return fetchView<LeaseDetailResponse>(leaseApiHref(store, resource), signal);
}

/**
 * `paused`: no polling (the force-release dialog is open and must keep showing what it showed).
 * `intervalMs`: the viewer's refresh choice (null: no polling).
 */
export function useLeaseDetailQuery(store: string, resource: string, initialData?: LeaseDetailResponse, options: { paused?: boolean; intervalMs?: number | null } = {}) {
  const isPaused = options.paused === true;
  const intervalMs = options.intervalMs === undefined ? LIVE_POLL_MS : options.intervalMs;
  return useQuery({
    queryKey: leaseKeys.detail(store, resource),
    queryFn: ({ signal }) => fetchLeaseDetail(store, resource, signal),
    initialData,
    initialDataUpdatedAt: initialData?.ok ? Date.parse(initialData.data.readAt) : undefined,
    enabled: !isPaused,
    refetchInterval: isPaused || intervalMs === null ? false : intervalMs,
    refetchOnWindowFocus: intervalMs !== null,
    refetchIntervalInBackground: false,
  });
}
