"use client";
import { useQuery } from "@tanstack/react-query";
import type { FacetViewName, FacetsView } from "@/lib/console/facets/facets-types";
import { fetchView, withSearch } from "@/lib/console/shared/fetch-view";
import { facetKeys } from "./keys";

/** Counts read more rows than a list page, so they refresh less often than the list. */
export const FACETS_POLL_MS = 15_000;

export function fetchFacets(view: FacetViewName, search: string, signal?: AbortSignal): Promise<FacetsView> {
  const params = new URLSearchParams(search);
  // Paging is the list's business; the counts are of the whole filter.
  params.delete("cursor");
  params.delete("prev");
  params.set("view", view);
  return fetchView<FacetsView>(withSearch("/api/facets", params.toString()), signal, "counts");
}

export function useFacetsQuery(view: FacetViewName, search: string, initialData?: FacetsView) {
  return useQuery({
    queryKey: facetKeys.counts(view, search),
    queryFn: ({ signal }) => fetchFacets(view, search, signal),
    initialData,
    initialDataUpdatedAt: initialData ? Date.parse(initialData.readAt) : undefined,
    refetchInterval: FACETS_POLL_MS,
    refetchIntervalInBackground: false,
  });
}
