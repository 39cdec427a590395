/**
 * The TTL advice page's windows, apart from advice-params.ts so the page's client
 * component does not bring zod into the browser (its `new Function` probe breaks
 * the console's CSP).
 */
export const ADVICE_WINDOWS = ["15m", "1h", "6h", "24h", "7d", "custom"] as const;
export type AdviceWindow = (typeof ADVICE_WINDOWS)[number];

/** Renewal slack and TTL advice cover at most this much: the stores refuse more. */
export const MAX_ADVICE_SPAN_MS = 7 * 24 * 3_600_000;

/**
 * The advice window for a page's own window (the overview offers 30 days and long
 * custom ranges): as it is when advice covers it, else its last 7 days, flagged so the
 * panel can say so rather than show an error.
 */
export function adviceWindowWithin(page: { window?: string; from?: string; to?: string }, nowMs = Date.now()): { window?: string; from?: string; to?: string; isClamped: boolean } {
  const { window, from, to } = page;
  if (window !== undefined && window !== "custom" && !(ADVICE_WINDOWS as readonly string[]).includes(window)) return { window: "7d", isClamped: true };
  if ((window === "custom" || window === undefined) && from) {
    const fromMs = Date.parse(from);
    const toMs = to ? Date.parse(to) : nowMs;
    if (Number.isFinite(fromMs) && Number.isFinite(toMs) && toMs - fromMs > MAX_ADVICE_SPAN_MS) {
      return { window: "custom", from: new Date(toMs - MAX_ADVICE_SPAN_MS).toISOString(), ...(to ? { to } : {}), isClamped: true };
    }
  }
  return { window, from, to, isClamped: false };
}
