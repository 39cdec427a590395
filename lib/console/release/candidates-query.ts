"use client";
import { useQuery } from "@tanstack/react-query";
import { buildQuery } from "@/lib/console/shared/links";
import type { ReleaseCandidatesView } from "@/lib/console/release/list-release-candidates";
import { fetchView } from "@/lib/console/shared/fetch-view";
import { releaseKeys } from "./keys";

export function fetchReleaseCandidates(prefix: string, store: string | null, signal?: AbortSignal): Promise<ReleaseCandidatesView> {
  return fetchView<ReleaseCandidatesView>(`/api/force-release/bulk${buildQuery({ prefix, store })}`, signal, "candidates read");
}

/**
 * Read once when the bulk dialog opens and never polled: the dialog must keep
 * showing exactly the leases the operator is about to end.
 */
export function useReleaseCandidatesQuery(prefix: string, store: string | null, options: { enabled: boolean }) {
  return useQuery({
    queryKey: releaseKeys.candidates(prefix, store),
    queryFn: ({ signal }) => fetchReleaseCandidates(prefix, store, signal),
    enabled: options.enabled,
    staleTime: Number.POSITIVE_INFINITY,
    refetchOnWindowFocus: false,
    gcTime: 0,
  });
}
