/**
 * Runs once when the console server starts: validate the configuration up front so
 * a bad LEASEWATCH_STORES, sign-in, METRICS_TOKEN or audit setting is reported in the
 * server log at boot, in plain words, and production refuses to start with an
 * unsafe one (lib/startup-checks.ts). Every request is stamped with its socket
 * address (lib/console/request-address.ts). Then audit entries a crashed process left
 * `requested` get their outcome.
 */
export async function register(): Promise<void> {
  // The imports sit after the runtime check so the edge bundle never includes them (pg, ioredis).
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // First: limits and the audit log take each request's socket address from this stamp.
  (await import("@/lib/console/request-address")).installPeerStamp();
  const [{ findStartupProblems, runStartupChecks }, { parseAuditConfig }] = await Promise.all([import("@/lib/startup-checks"), import("@/lib/audit/config")]);
  runStartupChecks();
  let auditProblem: string | null = null;
  try {
    parseAuditConfig();
  } catch (error) {
    // Without an audit log force-release is refused (fail closed); reads still work.
    auditProblem = error instanceof Error ? error.message : String(error);
    console.error(`[leasewatch] configuration problem: ${auditProblem}`);
  }
  if (auditProblem === null && findStartupProblems().problems.length === 0) {
    const { startAuditHousekeeping } = await import("@/lib/audit/context");
    startAuditHousekeeping();
  }
}
