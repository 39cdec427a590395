"use client";
import { useQuery } from "@tanstack/react-query";
import type { ObservedView } from "@/lib/console/shared/observed";
import { fetchView, liveOptions } from "@/lib/console/shared/fetch-view";

export const observedKeys = { all: ["observed"] as const };

export function useObservedQuery(initialData: ObservedView) {
  return useQuery({
    queryKey: observedKeys.all,
    queryFn: ({ signal }) => fetchView<ObservedView>("/api/observed", signal, "observed locks"),
    // No faster than the observer samples.
    ...liveOptions(initialData, Math.max(initialData.intervalMs, 2_000)),
  });
}
