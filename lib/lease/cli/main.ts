#!/usr/bin/env node
/**
 * `leasewatch`: the lease library from the command line. `exec`, `status`, `migrate --store`
 * and `sweep --store` need only this package; `audit verify`, `token …` and the console-wide
 * `migrate` / `sweep` run the console's own commands (see console-module.ts).
 */
import { CONSOLE_LOOKUP_HELP, findConsoleModule, type ConsoleCommandName } from "./console-module";
import { EXEC_HELP, runExec } from "./exec";
import { MIGRATE_HELP, runMigrate } from "./migrate";
import { runStatus, STATUS_HELP } from "./status";
import { runSweep, SWEEP_HELP } from "./sweep";
import { EXIT, isHelpRequested, PROCESS_OUTPUT, UsageError, type CliOutput } from "./usage";

const MAIN_HELP = `Usage: leasewatch <command> [options]

Leases on Redis or PostgreSQL, from the shell: each with a TTL, an owner and a task, a
heartbeat, and a fencing token that only ever goes up.

Commands:
  exec           hold a lease while a command runs (like flock, with fencing)
  status         who holds a resource, its fencing token, when it expires
  migrate        create or upgrade a store's schema
  sweep          record the expiry of leases that lapsed, on an interval
  audit verify   check the console's audit log (console)
  token create | revoke | list
                 the lock API's tokens (console)

Run \`leasewatch <command> --help\` for its options. The store is --store URL or
$LEASEWATCH_STORE. Commands marked (console) belong to the console: ${CONSOLE_LOOKUP_HELP}

Example:
  leasewatch exec --store redis://127.0.0.1:6379 --resource demo:cron --ttl 5s -- ./nightly.sh`;

const CONSOLE_HELP: Record<ConsoleCommandName, string> = {
  migrate: MIGRATE_HELP,
  sweep: SWEEP_HELP,
  "audit verify": `Usage: leasewatch audit verify

Checks the console's audit log: its HMAC chain, listing every entry that was changed,
removed or reordered. Exit 0 intact, 1 broken, 2 could not check.`,
  "token create": `Usage: leasewatch token create --name NAME --prefix PREFIX [options]

Creates a lock API token and prints it once.`,
  "token revoke": `Usage: leasewatch token revoke --name NAME

Revokes a lock API token.`,
  "token list": `Usage: leasewatch token list

Lists the lock API tokens (never the tokens themselves).`,
};

const GROUP_HELP = {
  audit: `Usage: leasewatch audit verify\n\nCommands:\n  verify   check the console's audit log's HMAC chain\n\n${CONSOLE_LOOKUP_HELP}`,
  token: `Usage: leasewatch token create|revoke|list [options]\n\nCommands:\n  create   create a lock API token (printed once)\n  revoke   revoke one by name\n  list     list them\n\n${CONSOLE_LOOKUP_HELP}`,
} as const;

type Runner = (args: readonly string[], output: CliOutput) => Promise<number>;
const LIBRARY_COMMANDS: Record<string, { help: string; run: Runner }> = {
  exec: { help: EXEC_HELP, run: runExec },
  status: { help: STATUS_HELP, run: runStatus },
  migrate: { help: MIGRATE_HELP, run: runMigrate },
  sweep: { help: SWEEP_HELP, run: runSweep },
};

function hasStoreFlag(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === "--store" || a.startsWith("--store="));
}

/** Runs a console command, or says why it cannot run here. */
async function runConsoleCommand(name: ConsoleCommandName, args: readonly string[], output: CliOutput): Promise<number> {
  const lookup = await findConsoleModule();
  const command = lookup.kind === "loaded" ? lookup.module.commands[name] : undefined;
  if (isHelpRequested(args)) {
    if (command) output.out(command.usage);
    else output.out(`${CONSOLE_HELP[name]}\n\n${CONSOLE_LOOKUP_HELP}${lookup.kind === "failed" ? `\nNot available here: ${lookup.message}` : ""}`);
    return EXIT.OK;
  }
  if (!command) {
    const why =
      lookup.kind === "failed" ? lookup.message
      : lookup.kind === "loaded" ? `the console in ${lookup.installation} has no "${name}" command`
      : "no console installation found from here";
    output.err(`leasewatch ${name}: this is the console's command and ${why}.\n${CONSOLE_LOOKUP_HELP}`);
    return EXIT.USAGE;
  }
  return command.run(args);
}

async function run(argv: readonly string[], output: CliOutput): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    output.err(MAIN_HELP);
    return EXIT.USAGE;
  }
  if (first === "--help" || first === "-h") {
    output.out(MAIN_HELP);
    return EXIT.OK;
  }
  if (first === "help") return run(rest.length > 0 ? [...rest, "--help"] : ["--help"], output);

  if (first === "audit" || first === "token") {
    const [sub, ...subArgs] = rest;
    const name = `${first} ${sub ?? ""}` as ConsoleCommandName;
    if (sub === undefined || sub.startsWith("-") || !(name in CONSOLE_HELP)) {
      if (sub === undefined || sub === "--help" || sub === "-h") {
        output.out(GROUP_HELP[first]);
        return EXIT.OK;
      }
      throw new UsageError(`unknown command "${first} ${sub}"; see leasewatch ${first} --help`);
    }
    return runConsoleCommand(name, subArgs, output);
  }

  const command = LIBRARY_COMMANDS[first];
  if (!command) throw new UsageError(`unknown command "${first}"; see leasewatch --help`);
  // Without --store, inside the console's installation, migrate and sweep act on everything the console uses.
  if ((first === "migrate" || first === "sweep") && !hasStoreFlag(rest) && !isHelpRequested(rest)) {
    const lookup = await findConsoleModule();
    if (lookup.kind === "loaded" && lookup.module.commands[first]) return runConsoleCommand(first, rest, output);
  }
  if (isHelpRequested(rest)) {
    output.out(command.help);
    return EXIT.OK;
  }
  return command.run(rest, output);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let code: number;
  try {
    code = await run(argv, PROCESS_OUTPUT);
  } catch (error) {
    const where = argv[0] && !argv[0].startsWith("-") ? `leasewatch ${argv[0]}` : "leasewatch";
    if (error instanceof UsageError) {
      PROCESS_OUTPUT.err(`${where}: ${error.message}`);
      code = EXIT.USAGE;
    } else {
      PROCESS_OUTPUT.err(`${where}: ${error instanceof Error ? error.message : String(error)}`);
      code = EXIT.FAILURE;
    }
  }
  process.exit(code);
}

void main();
