/**
 * The TTL advice page's windows, apart from advice-params.ts so the page's client
 * component does not bring zod into the browser (its `new Function` probe breaks
 * the console's CSP).
 */
export const ADVICE_WINDOWS = ["15m", "1h", "6h", "24h", "7d", "custom"] as const;
export type AdviceWindow = (typeof ADVICE_WINDOWS)[number];
