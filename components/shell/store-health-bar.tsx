"use client";
import { StatusPill } from "@/components/ui/status-pill";
import { useStoresHealthQuery, type HealthResponse } from "./health-query";

/** " · views 1.2 s behind" when a store's read models lag its events by a second or more. */
function lagText(lagMs: number | undefined): string {
  return lagMs !== undefined && lagMs >= 1_000 ? ` · views ${(lagMs / 1000).toFixed(1)} s behind` : "";
}

/** "● pg-main up 2 ms" for every store, refreshed every 5 s (with the read models' lag when it is a second or more). */
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
            detail={s.ok && s.latencyMs !== undefined ? `${Math.round(s.latencyMs)} ms${lagText(s.projectionLagMs)}` : undefined}
            title={
              s.ok
                ? `${s.kind} store reachable${s.projectionLagMs !== undefined ? `; lists, history and charts ${(s.projectionLagMs / 1000).toFixed(1)} s behind its events` : ""}`
                : `${s.kind} store down: ${s.error ?? "unreachable"}`
            }
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
