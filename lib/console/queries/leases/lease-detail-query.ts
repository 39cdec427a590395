"use client";
import { useQuery } from "@tanstack/react-query";
import { leaseApiHref } from "@/lib/console/links";
import type { LeaseDetailView, StoreOutcome } from "@/lib/console/views";
import { fetchView, LIVE_POLL_MS } from "../fetch-view";
import { leaseKeys } from "./keys";

export type LeaseDetailResponse = StoreOutcome<LeaseDetailView>;

export function fetchLeaseDetail(store: string, resource: string, signal?: AbortSignal): Promise<LeaseDetailResponse> {
  return fetchView<LeaseDetailResponse>(leaseApiHref(store, resource), signal);
}

export function useLeaseDetailQuery(store: string, resource: string, initialData?: LeaseDetailResponse) {
  return useQuery({
    queryKey: leaseKeys.detail(store, resource),
    queryFn: ({ signal }) => fetchLeaseDetail(store, resource, signal),
    initialData,
    initialDataUpdatedAt: initialData?.ok ? Date.parse(initialData.data.readAt) : undefined,
    refetchInterval: LIVE_POLL_MS,
    refetchIntervalInBackground: false,
  });
}
