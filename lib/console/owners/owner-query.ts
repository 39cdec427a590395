"use client";
import { useQuery } from "@tanstack/react-query";
import type { OwnerView } from "@/lib/console/owners/owner-types";
import { fetchView, liveOptions, withSearch } from "@/lib/console/shared/fetch-view";
import { ownerKeys } from "./keys";

export function fetchOwner(owner: string, search: string, signal?: AbortSignal): Promise<OwnerView> {
  return fetchView<OwnerView>(withSearch(`/api/owners/${encodeURIComponent(owner)}`, search), signal, "owner");
}

export function useOwnerQuery(owner: string, search: string, initialData?: OwnerView) {
  return useQuery({
    queryKey: ownerKeys.detail(owner, search),
    queryFn: ({ signal }) => fetchOwner(owner, search, signal),
    ...liveOptions(initialData),
  });
}
