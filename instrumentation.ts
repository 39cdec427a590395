/**
 * Runs once when the console server starts: validate the configuration up front so
 * a bad LEASEWATCH_STORES, sign-in or audit setting is reported in the server log at
 * boot, in plain words, rather than only on the first page view. The pages still show
 * the same message (app/layout.tsx), so a running server never serves a stack trace.
 * Then audit entries a crashed process left `requested` get their outcome.
 */
export async function register(): Promise<void> {
  // The imports sit inside the runtime check so the edge bundle never includes them (pg, ioredis).
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const [{ parseStoresConfig }, { parseAuthEnv }, { parseAuditConfig }] = await Promise.all([
      import("@/lib/console/config"),
      import("@/lib/env"),
      import("@/lib/audit/config"),
    ]);
    const problems: string[] = [];
    for (const check of [() => parseStoresConfig(), () => parseAuthEnv(), () => parseAuditConfig()]) {
      try {
        check();
      } catch (error) {
        problems.push(error instanceof Error ? error.message : String(error));
      }
    }
    for (const problem of problems) console.error(`[leasewatch] configuration problem: ${problem}`);
    if (problems.length === 0) {
      const { startAuditHousekeeping } = await import("@/lib/audit/context");
      startAuditHousekeeping();
    }
  }
}
