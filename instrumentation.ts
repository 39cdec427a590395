/**
 * Runs once when the console server starts: validate the configuration up front so
 * a bad LEASEWATCH_STORES or sign-in setting is reported in the server log at boot,
 * in plain words, rather than only on the first page view. The pages still show the
 * same message (app/layout.tsx), so a running server never serves a stack trace.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const [{ parseStoresConfig }, { parseAuthEnv }] = await Promise.all([import("@/lib/console/config"), import("@/lib/env")]);
  const problems: string[] = [];
  for (const check of [() => parseStoresConfig(), () => parseAuthEnv()]) {
    try {
      check();
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
    }
  }
  for (const problem of problems) console.error(`[leasewatch] configuration problem: ${problem}`);
}
