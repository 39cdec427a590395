/**
 * Sleep for `ms`, waking early (without throwing) when any signal aborts.
 * Returns true if the full time passed, false if woken by an abort.
 */
export function sleepFor(ms: number, ...signals: Array<AbortSignal | undefined>): Promise<boolean> {
  const active = signals.filter((s): s is AbortSignal => s !== undefined);
  if (active.some((s) => s.aborted)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      for (const s of active) s.removeEventListener("abort", onAbort);
      resolve(false);
    };
    const timer = setTimeout(() => {
      for (const s of active) s.removeEventListener("abort", onAbort);
      resolve(true);
    }, Math.max(0, ms));
    for (const s of active) s.addEventListener("abort", onAbort, { once: true });
  });
}
