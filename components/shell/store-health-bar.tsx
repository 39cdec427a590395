"use client";
import { StatusPill } from "@/components/ui/status-pill";
import { useStoresHealthQuery, type HealthResponse } from "./health-query";

/** "● pg-main up 2 ms" for every store, refreshed every 5 s. */
export function StoreHealthBar({ initialHealth }: { initialHealth: HealthResponse }) {
  const { data, isError, error } = useStoresHealthQuery(initialHealth);
  const stores = data?.stores ?? [];
  return (
    <ul aria-label="Store health" className="flex flex-wrap items-center gap-1.5">
      {stores.map((s) => (
        <li key={s.store}>
          <StatusPill
            tone={s.ok ? "green" : "red"}
            label={`${s.store} ${s.ok ? "up" : "down"}`}
            detail={s.ok && s.latencyMs !== undefined ? `${Math.round(s.latencyMs)} ms` : undefined}
            title={s.ok ? `${s.kind} store reachable` : `${s.kind} store down: ${s.error ?? "unreachable"}`}
            className="font-mono"
          />
        </li>
      ))}
      {isError ? (
        <li>
          <StatusPill tone="amber" label="health unknown" title={error.message} />
        </li>
      ) : null}
    </ul>
  );
}
