/**
 * Configuration checks at server start (called from instrumentation.ts, Node.js
 * runtime only). Problems are logged in plain words. In production a sign-in,
 * METRICS_TOKEN or audit key problem stops the server: it must not serve with an
 * http:// URL, the demo IdP or secret, the demo audit key, an unset role map, or a
 * guessable scrape token.
 * Elsewhere the pages show a reference to the logged problem instead.
 */
import { assertNoDemoAuditKeyInProduction } from "@/lib/audit/config";
import { parseStoresConfig } from "@/lib/server/store-config";
import { readMetricsToken } from "@/lib/server/metrics-token";
import { parseTrustedProxy } from "@/lib/auth/client-address";
import { parseAuthEnv } from "@/lib/auth/env";
import { getLogger } from "@/lib/log/logger";

export function findStartupProblems(env: NodeJS.ProcessEnv = process.env): { problems: string[]; isFatal: boolean } {
  const problems: string[] = [];
  let isFatal = false;
  const checks: Array<{ check: () => unknown; isFatalInProduction: boolean }> = [
    { check: () => parseStoresConfig(env), isFatalInProduction: false },
    { check: () => parseAuthEnv(env), isFatalInProduction: true },
    { check: () => readMetricsToken(env), isFatalInProduction: true },
    { check: () => parseTrustedProxy(env), isFatalInProduction: true },
    { check: () => assertNoDemoAuditKeyInProduction(env), isFatalInProduction: true },
  ];
  for (const { check, isFatalInProduction } of checks) {
    try {
      check();
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
      if (isFatalInProduction && env.NODE_ENV === "production") isFatal = true;
    }
  }
  return { problems, isFatal };
}

export function runStartupChecks(): void {
  const { problems, isFatal } = findStartupProblems();
  const log = getLogger("startup");
  for (const problem of problems) log.error({ problem }, "configuration problem");
  if (isFatal) {
    log.fatal("refusing to start in production until this is fixed");
    process.exit(1);
  }
}
