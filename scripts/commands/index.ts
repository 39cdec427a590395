/**
 * The console's commands for the `leasewatch` command line. The library's CLI finds this
 * module through "leasewatch.consoleCommands" in package.json and runs `leasewatch audit
 * verify`, `leasewatch token …` and the console-wide `migrate` / `sweep` from it; the
 * `npm run` scripts run the same functions.
 */
import { parseArgs } from "node:util";
import { type ConsoleCommandModule, parseDuration } from "@leasewatch/lease";
import { parseStoresConfig } from "../../lib/server/store-config";
import { API_TOKEN_USAGE, runApiToken } from "./api-token";
import { AUDIT_VERIFY_USAGE, verifyAuditLog } from "./audit-verify";
import { migrateConsole, MIGRATE_USAGE } from "./migrate";

const USER_AGENT = "leasewatch token";

const SWEEP_USAGE = `Usage: leasewatch sweep [--every 5s]       (in the console's installation; the same as npm run sweeper)
       leasewatch sweep --store URL …     (one store; see leasewatch sweep --store x --help)

Runs the console's sweeper: sweeps every store in LEASEWATCH_STORES (records the expiry of
leases that lapsed) every --every (default: SWEEP_INTERVAL_MS ms, else 5s) and projects the
Redis stores' read models every second, until SIGINT or SIGTERM.`;

/**
 * The sweeper is a service with its own signal handling and exit: it runs here exactly as
 * `npm run sweeper` runs it, and the promise never settles (the service ends the process).
 */
async function runSweeperService(args: readonly string[]): Promise<number> {
  try {
    const { values } = parseArgs({ args: [...args], options: { every: { type: "string" } }, strict: true, allowPositionals: false });
    if (values.every !== undefined) process.env.SWEEP_INTERVAL_MS = String(parseDuration(values.every));
  } catch (error) {
    console.error(`sweep: ${error instanceof Error ? error.message : String(error)}\n\n${SWEEP_USAGE}`);
    return 2;
  }
  await import("../sweeper");
  return new Promise<number>(() => {});
}

export const commands: ConsoleCommandModule["commands"] = {
  migrate: { usage: MIGRATE_USAGE, run: migrateConsole },
  sweep: { usage: SWEEP_USAGE, run: runSweeperService },
  "audit verify": { usage: AUDIT_VERIFY_USAGE, run: verifyAuditLog },
  "token create": { usage: API_TOKEN_USAGE, run: (args) => runApiToken(["create", ...args], USER_AGENT) },
  "token revoke": { usage: API_TOKEN_USAGE, run: (args) => runApiToken(["revoke", ...args], USER_AGENT) },
  "token list": { usage: API_TOKEN_USAGE, run: (args) => runApiToken(["list", ...args], USER_AGENT) },
};

/** The configured stores, so `leasewatch … --store NAME` can name one. */
export const stores: NonNullable<ConsoleCommandModule["stores"]> = () => parseStoresConfig();
