/**
 * Runs once when the console server starts: validate the configuration up front so
 * a bad LEASEWATCH_STORES, sign-in or METRICS_TOKEN setting is reported in the
 * server log at boot, in plain words, and production refuses to start with an
 * unsafe one (lib/startup-checks.ts).
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { runStartupChecks } = await import("@/lib/startup-checks");
  runStartupChecks();
}
