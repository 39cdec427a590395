"use client";
import { useQuery } from "@tanstack/react-query";
import { fetchView } from "@/lib/console/shared/fetch-view";
import type { StoreHealth } from "@leasewatch/lease/model";

/** What /api/health returns. */
export interface HealthResponse {
  checkedAt: string;
  stores: StoreHealth[];
}

export const HEALTH_POLL_MS = 5_000;

export const healthKeys = {
  all: ["health"] as const,
};

export function fetchStoresHealth(): Promise<HealthResponse> {
  return fetchView<HealthResponse>("/api/health", undefined, "health check");
}

/** Store health, polled every 5 s while the tab is visible; the header and the banner share it. */
export function useStoresHealthQuery(initialData?: HealthResponse) {
  return useQuery({
    queryKey: healthKeys.all,
    queryFn: fetchStoresHealth,
    initialData,
    initialDataUpdatedAt: initialData ? Date.parse(initialData.checkedAt) : undefined,
    refetchInterval: HEALTH_POLL_MS,
    refetchIntervalInBackground: false,
  });
}
