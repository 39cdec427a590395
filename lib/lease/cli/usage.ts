import { parseArgs, type ParseArgsConfig } from "node:util";
import { parseDuration } from "../duration";

/**
 * Exit statuses of `leasewatch`. `exec` otherwise exits with its command's status
 * (128 + the signal number when the command died of a signal), so these sit outside
 * the range a command commonly uses for itself (sysexits.h and the shell's 126/127).
 */
export const EXIT = {
  OK: 0,
  /** A command-specific failure (e.g. `audit verify` found a broken chain). */
  FAILURE: 1,
  /** Bad flags, a bad duration or store URL, a missing required option. */
  USAGE: 2,
  /** The store could not be reached or refused the operation (sysexits EX_UNAVAILABLE). */
  STORE_UNAVAILABLE: 69,
  /** `exec`: the lease was not acquired within --wait (sysexits EX_TEMPFAIL: try again later). */
  NOT_ACQUIRED: 75,
  /** `exec`: the lease was lost while the command ran; the command was stopped. */
  LEASE_LOST: 76,
  /** `exec`: the command was found but could not be run. */
  CANNOT_EXECUTE: 126,
  /** `exec`: the command was not found. */
  NOT_FOUND: 127,
} as const;

/** Wrong use of the command: reported in one line with a pointer to --help, exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** A duration option (`500ms`, `10s`, `2m`, `1h`) in milliseconds; a bad one is a usage error naming the option. */
export function parseDurationOption(text: string, option: string): number {
  try {
    return parseDuration(text);
  } catch (error) {
    throw new UsageError(`${option}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** util.parseArgs, strict, with its errors turned into UsageErrors that say what was wrong. */
export function parseOptions<T extends NonNullable<ParseArgsConfig["options"]>>(args: readonly string[], options: T, allowPositionals: boolean) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Node's messages end with hints about `--` that do not fit every command.
    throw new UsageError(message.replace(/\. To specify a positional argument.*$/s, "").replace(/^Unknown option/, "unknown option"));
  }
}

export function isHelpRequested(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

/** Where the command writes. Tests of the modules pass their own. */
export interface CliOutput {
  out(line: string): void;
  err(line: string): void;
}

export const PROCESS_OUTPUT: CliOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};
