"use client";
import { useStoresHealthQuery, type HealthResponse } from "./health-query";

/**
 * Names every store that is down, on every page, while the rest of the page
 * renders from the stores that are up.
 */
export function StoreDownBanner({ initialHealth }: { initialHealth: HealthResponse }) {
  const { data } = useStoresHealthQuery(initialHealth);
  const down = (data?.stores ?? []).filter((s) => !s.ok);
  return (
    <div role="status" aria-live="polite">
      {down.length > 0 ? (
        <div className="border-b border-red-300 bg-red-50 px-4 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
          <p className="mx-auto max-w-screen-2xl">
            <strong className="font-semibold">
              {down.length === 1 ? "Store down:" : `${down.length} stores down:`}
            </strong>{" "}
            {down.map((s, i) => (
              <span key={s.store}>
                {i > 0 ? "; " : null}
                <span className="font-mono">{s.store}</span>
                <span> ({s.kind}{s.error ? ` — ${s.error}` : ""})</span>
              </span>
            ))}
            . {down.length === 1 ? "Its" : "Their"} data is missing below; the other stores are shown as usual.
          </p>
        </div>
      ) : null}
    </div>
  );
}
