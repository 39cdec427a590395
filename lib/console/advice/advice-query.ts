"use client";
import { useQuery } from "@tanstack/react-query";
import type { RenewalSlackView, TtlAdviceView } from "@/lib/console/advice/get-ttl-advice";
import { fetchView, liveOptions, withSearch } from "@/lib/console/shared/fetch-view";
import { adviceKeys } from "./keys";

/** Advice moves slowly (hourly slack rollups): refreshed every half minute, not every few seconds. */
const ADVICE_POLL_MS = 30_000;

export function fetchTtlAdvice(search: string, signal?: AbortSignal): Promise<TtlAdviceView> {
  return fetchView<TtlAdviceView>(withSearch("/api/advice", search), signal, "TTL advice");
}

export function useTtlAdviceQuery(search: string, initialData?: TtlAdviceView) {
  return useQuery({
    queryKey: adviceKeys.view(search),
    queryFn: ({ signal }) => fetchTtlAdvice(search, signal),
    ...liveOptions(initialData),
    refetchInterval: ADVICE_POLL_MS,
  });
}

export function fetchRenewalSlack(search: string, signal?: AbortSignal): Promise<RenewalSlackView> {
  return fetchView<RenewalSlackView>(withSearch("/api/slack", search), signal, "renewal slack");
}

export function useRenewalSlackQuery(search: string) {
  return useQuery({
    queryKey: adviceKeys.slack(search),
    queryFn: ({ signal }) => fetchRenewalSlack(search, signal),
    ...liveOptions<RenewalSlackView>(undefined),
    refetchInterval: ADVICE_POLL_MS,
  });
}
