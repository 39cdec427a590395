"use client";
import { useQuery } from "@tanstack/react-query";
import type { StoreHealth } from "@/lib/lease/types";

/** What /api/health returns. */
export interface HealthResponse {
  checkedAt: string;
  stores: StoreHealth[];
}

export const HEALTH_POLL_MS = 5_000;

export const healthKeys = {
  all: ["health"] as const,
};

export class HealthFetchError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = "HealthFetchError";
    this.status = status;
  }
}

export async function fetchStoresHealth(): Promise<HealthResponse> {
  const response = await fetch("/api/health", { headers: { accept: "application/json" }, cache: "no-store" });
  if (!response.ok) {
    const body = (await response.json().catch(() => null)) as { error?: string } | null;
    throw new HealthFetchError(response.status, body?.error ?? `health check failed (HTTP ${response.status})`);
  }
  return (await response.json()) as HealthResponse;
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
