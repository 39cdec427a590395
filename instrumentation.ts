/**
 * Runs once when the console server starts: validate the configuration up front so
 * a bad LEASEWATCH_STORES, sign-in, METRICS_TOKEN or audit setting is reported in the
 * server log at boot, in plain words, and production refuses to start with an
 * unsafe one (lib/startup-checks.ts). Every request is stamped with its socket
 * address (lib/console/shared/request-address.ts) and given an id that every log line it
 * makes carries (lib/log/request-id.ts). Then audit entries a crashed process left
 * `requested` get their outcome. The pools are closed at shutdown (lib/console/health/lifecycle.ts).
 * OpenTelemetry starts first when OTEL_* settings ask for it (lib/server/telemetry-sdk.ts);
 * Next.js then reports its own request spans through it.
 */
export async function register(): Promise<void> {
  // The imports sit after the runtime check so the edge bundle never includes them (pg, ioredis).
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { initLogger } = await import("@/lib/log/logger");
  const log = initLogger("console");
  const { describeTelemetry, startTelemetry } = await import("@/lib/server/telemetry-sdk");
  const telemetry = await startTelemetry("leasewatch-console");
  if (telemetry) log.info(describeTelemetry(telemetry));
  // First: limits and the audit log take each request's socket address from this stamp, and
  // every log line of a request its id.
  (await import("@/lib/console/shared/request-address")).installPeerStamp();
  (await import("@/lib/log/request-id")).installRequestIds();
  // The server entry (scripts/console.ts) closes the pools once the last request is answered.
  const [{ onConsoleClose }, { closeConsolePools }] = await Promise.all([import("@/lib/console/health/lifecycle"), import("@/lib/console/close-pools")]);
  onConsoleClose(closeConsolePools);
  const [{ findStartupProblems, runStartupChecks }, { parseAuditConfig }] = await Promise.all([import("@/lib/startup-checks"), import("@/lib/audit/config")]);
  runStartupChecks();
  let auditProblem: string | null = null;
  try {
    parseAuditConfig();
  } catch (error) {
    // Without an audit log force-release is refused (fail closed); reads still work.
    auditProblem = error instanceof Error ? error.message : String(error);
    log.error({ problem: auditProblem }, "configuration problem");
  }
  if (auditProblem === null && findStartupProblems().problems.length === 0) {
    const { startAuditHousekeeping } = await import("@/lib/audit/housekeeping");
    startAuditHousekeeping();
  }
}
