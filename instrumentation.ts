/**
 * Runs once when the console server starts: validate the configuration up front so
 * a bad LEASEWATCH_STORES or sign-in setting is reported in the server log at boot,
 * in plain words, rather than only on the first page view.
 *
 * In production (NODE_ENV=production) a sign-in or METRICS_TOKEN problem stops the
 * server: it must not serve with an http:// URL, the demo IdP or secret, an unset
 * role map, or a guessable scrape token (lib/env.ts). Elsewhere the pages show the
 * problem instead (app/layout.tsx), so a running server never serves a stack trace.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const [{ parseStoresConfig }, { parseAuthEnv }, { readMetricsToken }] = await Promise.all([
    import("@/lib/console/config"),
    import("@/lib/env"),
    import("@/lib/console/metrics-token"),
  ]);
  const problems: string[] = [];
  let isFatal = false;
  const checks: Array<{ check: () => unknown; isFatalInProduction: boolean }> = [
    { check: () => parseStoresConfig(), isFatalInProduction: false },
    { check: () => parseAuthEnv(), isFatalInProduction: true },
    { check: () => readMetricsToken(), isFatalInProduction: true },
  ];
  for (const { check, isFatalInProduction } of checks) {
    try {
      check();
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
      if (isFatalInProduction) isFatal = true;
    }
  }
  for (const problem of problems) console.error(`[leasewatch] configuration problem: ${problem}`);
  if (isFatal && process.env.NODE_ENV === "production") {
    console.error("[leasewatch] refusing to start in production until this is fixed");
    process.exit(1);
  }
}
