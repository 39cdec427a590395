import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

/**
 * The console's commands (`audit verify`, `token …`, and the console-wide `migrate` and
 * `sweep`) belong to the console, not to this library, which must not import it. The
 * console's installation names a module that implements them, in its package.json:
 *
 *   "leasewatch": { "consoleCommands": ["./scripts/commands/index.ts", "./dist/console-commands.js"] }
 *
 * (the first that exists and can be loaded is used: a TypeScript file needs tsx in the
 * installation, so a production install without it falls through to the built file). The installation is the directory in
 * LEASEWATCH_CONSOLE, else the nearest package.json above the working directory that
 * has that field.
 */

/** A store the console is configured with (its LEASEWATCH_STORES). */
export type ConsoleStoreConfig =
  | { name: string; kind: "postgres"; url: string; schema?: string }
  | { name: string; kind: "redis"; url: string; namespace?: string };

export interface ConsoleCommand {
  /** Full help text (usage line first), printed by `--help`. */
  usage: string;
  /** Runs with the arguments after the command's name; resolves to the exit status. */
  run(args: readonly string[]): Promise<number>;
}

export const CONSOLE_COMMAND_NAMES = ["migrate", "sweep", "audit verify", "token create", "token revoke", "token list"] as const;
export type ConsoleCommandName = (typeof CONSOLE_COMMAND_NAMES)[number];

/** What a console commands module exports. */
export interface ConsoleCommandModule {
  commands: Partial<Record<ConsoleCommandName, ConsoleCommand>>;
  /** The console's configured stores, so `--store NAME` can name one. */
  stores?(): ConsoleStoreConfig[];
}

export type ConsoleLookup =
  | { kind: "loaded"; module: ConsoleCommandModule; installation: string }
  | { kind: "absent" }
  | { kind: "failed"; installation: string; message: string };

export const CONSOLE_FIELD = "consoleCommands";

/** The environment, as far as these commands read it. */
export type Env = Readonly<Record<string, string | undefined>>;

/** One line for help and errors: where the console's commands are looked for. */
export const CONSOLE_LOOKUP_HELP =
  "They run inside the console's installation: from its directory (the package.json there names " +
  'its commands module under "leasewatch.consoleCommands"), or anywhere with LEASEWATCH_CONSOLE=<that directory>.';

interface Declaration {
  installation: string;
  candidates: string[];
}

function readDeclaration(dir: string): Declaration | "no_field" | "no_package" {
  const file = path.join(dir, "package.json");
  if (!existsSync(file)) return "no_package";
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return "no_field";
  }
  const field = (json as { leasewatch?: Record<string, unknown> } | null)?.leasewatch?.[CONSOLE_FIELD];
  const candidates = typeof field === "string" ? [field] : Array.isArray(field) ? field.filter((f): f is string => typeof f === "string") : [];
  return candidates.length > 0 ? { installation: dir, candidates } : "no_field";
}

function findDeclaration(env: Env, cwd: string): Declaration | { installation: string; message: string } | null {
  const pinned = env.LEASEWATCH_CONSOLE?.trim();
  if (pinned) {
    const dir = path.resolve(cwd, pinned);
    const found = readDeclaration(dir);
    if (typeof found === "object") return found;
    const why = found === "no_package" ? "has no package.json" : `has no "leasewatch.${CONSOLE_FIELD}" in its package.json`;
    return { installation: dir, message: `LEASEWATCH_CONSOLE=${pinned}: ${dir} ${why}` };
  }
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const found = readDeclaration(dir);
    if (typeof found === "object") return found;
    if (path.dirname(dir) === dir) return null;
  }
}

const TYPESCRIPT_FILE = /\.[cm]?tsx?$/;

/** The installation's tsx loader (what `node --import tsx` loads), or null when tsx is not installed there. */
function resolveTsxLoader(installation: string): string | null {
  try {
    const manifest = createRequire(path.join(installation, "package.json")).resolve("tsx/package.json");
    const exported = (JSON.parse(readFileSync(manifest, "utf8")) as { exports?: Record<string, unknown> }).exports?.["."];
    return typeof exported === "string" ? path.join(path.dirname(manifest), exported) : null;
  } catch {
    return null;
  }
}

/**
 * A TypeScript module needs a loader. When this process has none (the built command), the
 * installation's own tsx is registered with the installation's tsconfig (path aliases), as
 * its npm scripts run. A process started with a loader keeps it: aliases then resolve from
 * its working directory's tsconfig.
 */
async function importModule(file: string, installation: string): Promise<unknown> {
  const url = pathToFileURL(file).href;
  try {
    return await import(url);
  } catch (error) {
    if (!TYPESCRIPT_FILE.test(file) || (error as { code?: unknown }).code !== "ERR_UNKNOWN_FILE_EXTENSION") throw error;
  }
  const loader = resolveTsxLoader(installation);
  if (!loader) throw new NoTypeScriptLoader(`${path.relative(installation, file)} is TypeScript and tsx is not installed in ${installation}`);
  const tsconfig = path.join(installation, "tsconfig.json");
  if (existsSync(tsconfig)) process.env.TSX_TSCONFIG_PATH ??= tsconfig;
  await import(pathToFileURL(loader).href);
  // Node remembers the failed import of this URL: ask again under another one.
  return import(`${url}?loader=tsx`);
}

/** A TypeScript candidate that cannot be loaded here (a production install without tsx): the next one is tried. */
class NoTypeScriptLoader extends Error {}

function asCommandModule(namespace: unknown): ConsoleCommandModule | null {
  for (const candidate of [namespace, (namespace as { default?: unknown } | null)?.default]) {
    const commands = (candidate as { commands?: unknown } | null)?.commands;
    if (typeof commands === "object" && commands !== null) return candidate as ConsoleCommandModule;
  }
  return null;
}

const cache = new Map<string, Promise<ConsoleLookup>>();

/** Finds and loads the console's commands module; never throws. */
export function findConsoleModule(env: Env = process.env, cwd: string = process.cwd()): Promise<ConsoleLookup> {
  const key = `${env.LEASEWATCH_CONSOLE ?? ""}\0${cwd}`;
  let lookup = cache.get(key);
  if (!lookup) {
    lookup = loadConsoleModule(env, cwd);
    cache.set(key, lookup);
  }
  return lookup;
}

async function loadConsoleModule(env: Env, cwd: string): Promise<ConsoleLookup> {
  const declaration = findDeclaration(env, cwd);
  if (declaration === null) return { kind: "absent" };
  if ("message" in declaration) return { kind: "failed", installation: declaration.installation, message: declaration.message };
  const { installation, candidates } = declaration;
  const files = candidates.map((c) => path.resolve(installation, c)).filter((f) => existsSync(f));
  if (files.length === 0) return { kind: "failed", installation, message: `none of ${candidates.join(", ")} exists in ${installation}` };
  const skipped: string[] = [];
  for (const file of files) {
    try {
      const commandModule = asCommandModule(await importModule(file, installation));
      if (!commandModule) return { kind: "failed", installation, message: `${file} does not export \`commands\`` };
      return { kind: "loaded", module: commandModule, installation };
    } catch (error) {
      if (error instanceof NoTypeScriptLoader) {
        skipped.push(error.message);
        continue;
      }
      return { kind: "failed", installation, message: `could not load ${file}: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
  return { kind: "failed", installation, message: `${skipped.join("; ")}: build the console (npm run build), or install its dev dependencies` };
}
