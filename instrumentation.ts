/**
 * Runs once when the console server starts: validate the configuration up front so
 * a bad LEASEWATCH_STORES, sign-in or audit setting is reported in the server log at
 * boot, in plain words, rather than only on the first page view.
 *
 * In production (NODE_ENV=production) a sign-in or METRICS_TOKEN problem stops the
 * server: it must not serve with an http:// URL, the demo IdP or secret, an unset
 * role map, or a guessable scrape token (lib/env.ts). Elsewhere the pages show the
 * problem instead (app/layout.tsx), so a running server never serves a stack trace.
 * Then audit entries a crashed process left `requested` get their outcome.
 */
export async function register(): Promise<void> {
  // The imports sit after the runtime check so the edge bundle never includes them (pg, ioredis).
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const [{ parseStoresConfig }, { parseAuthEnv }, { readMetricsToken }, { parseAuditConfig }] = await Promise.all([
    import("@/lib/console/config"),
    import("@/lib/env"),
    import("@/lib/console/metrics-token"),
    import("@/lib/audit/config"),
  ]);
  const problems: string[] = [];
  let isFatal = false;
  const checks: Array<{ check: () => unknown; isFatalInProduction: boolean }> = [
    { check: () => parseStoresConfig(), isFatalInProduction: false },
    { check: () => parseAuthEnv(), isFatalInProduction: true },
    { check: () => readMetricsToken(), isFatalInProduction: true },
    // Without an audit log force-release is refused (fail closed); reads still work.
    { check: () => parseAuditConfig(), isFatalInProduction: false },
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
  if (problems.length === 0) {
    const { startAuditHousekeeping } = await import("@/lib/audit/context");
    startAuditHousekeeping();
  }
}
