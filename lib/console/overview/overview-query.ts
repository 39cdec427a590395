"use client";
import { useQuery } from "@tanstack/react-query";
import type { OverviewView } from "@/lib/console/shared/views";
import { fetchView, liveOptions, withSearch } from "@/lib/console/shared/fetch-view";
import { overviewKeys } from "./keys";

export function fetchOverview(search: string, signal?: AbortSignal): Promise<OverviewView> {
  return fetchView<OverviewView>(withSearch("/api/overview", search), signal);
}

export function useOverviewQuery(search: string, initialData?: OverviewView) {
  return useQuery({
    queryKey: overviewKeys.view(search),
    queryFn: ({ signal }) => fetchOverview(search, signal),
    ...liveOptions(initialData),
  });
}
