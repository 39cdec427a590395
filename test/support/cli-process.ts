import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

/**
 * Runs the real `leasewatch` command as a child process. By default the TypeScript entry
 * through tsx; with LEASEWATCH_BIN set (e.g. packages/lease/dist/cli.js), the built bin.
 */
export const REPO_ROOT = path.resolve(__dirname, "../..");
const TSX_LOADER = pathToFileURL(createRequire(path.join(REPO_ROOT, "package.json")).resolve("tsx")).href;
export const CLI_ARGV: readonly string[] = process.env.LEASEWATCH_BIN
  ? [path.resolve(REPO_ROOT, process.env.LEASEWATCH_BIN)]
  : ["--import", TSX_LOADER, path.join(REPO_ROOT, "lib/lease/cli/main.ts")];

export interface CliResult {
  /** Exit status, or null when it died of a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<CliResult>;
}

export interface CliOptions {
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
}

/** Starts `leasewatch ...args`; the environment is this process's plus `env` (LEASEWATCH_STORE removed unless given). */
export function startCli(args: readonly string[], options: CliOptions = {}): CliProcess {
  const env: Record<string, string | undefined> = {
    ...process.env,
    LEASEWATCH_STORE: undefined,
    LEASEWATCH_CONSOLE: undefined,
    // Through tsx, the console's modules resolve their path aliases with this repo's tsconfig from any
    // working directory, as the built command does when it loads them (see cli/console-module.ts).
    ...(process.env.LEASEWATCH_BIN ? {} : { TSX_TSCONFIG_PATH: path.join(REPO_ROOT, "tsconfig.json") }),
    ...options.env,
  };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  const child = spawn(process.execPath, [...CLI_ARGV, ...args], { cwd: options.cwd ?? REPO_ROOT, env: env as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<CliResult>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(args, options).exited;
}
