"use client";
import { useQuery } from "@tanstack/react-query";
import { buildQuery } from "@/lib/console/shared/links";
import type { AuditView } from "@/lib/console/shared/views";
import { fetchView, liveOptions, withSearch } from "@/lib/console/shared/fetch-view";
import { auditKeys } from "./keys";

export function fetchAudit(search: string, signal?: AbortSignal): Promise<AuditView> {
  return fetchView<AuditView>(withSearch("/api/audit", search), signal, "audit read");
}

/** `intervalMs`: the viewer's refresh choice (null: no polling). */
export function useAuditQuery(search: string, initialData?: AuditView, options: { intervalMs?: number | null } = {}) {
  return useQuery({
    queryKey: auditKeys.list(search),
    queryFn: ({ signal }) => fetchAudit(search, signal),
    ...liveOptions(initialData, options.intervalMs),
  });
}

/** Force-release history of one lease: its audit entries, newest first. */
export function useLeaseAuditQuery(store: string, resource: string, options: { enabled: boolean }) {
  const search = buildQuery({ store, resource, limit: 20 });
  return useQuery({
    queryKey: auditKeys.lease(store, resource),
    queryFn: ({ signal }) => fetchAudit(search, signal),
    enabled: options.enabled,
    refetchInterval: options.enabled ? 15_000 : false,
    refetchIntervalInBackground: false,
  });
}
