/**
 * The one logger of the console's server side, the lock API and the sweeper: pino, one
 * JSON object per line on stdout, level from LOG_LEVEL (default info). Every line made
 * while a request (or a background run) is in progress carries its id, from the context
 * in ./context.ts. Secrets are redacted by path before a line is written.
 *
 * The lease library does not log (it reports through callbacks such as `onWarning`);
 * the code around it does, through this module.
 */
import pino, { type DestinationStream, type Logger, type LoggerOptions } from "pino";
import { currentLogContext } from "./context";

export type { Logger } from "pino";

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const DEFAULT_LOG_LEVEL: LogLevel = "info";

export const isLogLevel = (value: string): value is LogLevel => (LOG_LEVELS as readonly string[]).includes(value);

/**
 * Where secrets may sit in what we log: request headers (bearer tokens, session cookies,
 * the console's peer stamp, which carries a process secret) and fields named like one.
 */
export const REDACTED_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  'req.headers["proxy-authorization"]',
  'req.headers["x-leasewatch-peer"]',
  'res.headers["set-cookie"]',
  "headers.authorization",
  "headers.cookie",
  "*.authorization",
  "*.cookie",
  "*.password",
  "*.secret",
  "*.token",
  "*.accessToken",
  "*.idToken",
  "*.refreshToken",
  "*.clientSecret",
];

/** What a request looks like in a line: enough to find it, never its body. Headers are redacted above. */
function serializeRequest(req: { method?: string; url?: string; headers?: unknown; ip?: string; socket?: { remoteAddress?: string } }) {
  return { method: req.method, url: typeof req.url === "string" && req.url.length <= 256 ? req.url : undefined, headers: req.headers, remoteAddress: req.ip ?? req.socket?.remoteAddress };
}

/**
 * pino options shared by every service (the lock API hands them to Fastify, which builds
 * its own pino from them). `service` names the process in each line.
 */
export function loggerOptions(service: string, level: LogLevel = DEFAULT_LOG_LEVEL): LoggerOptions {
  return {
    level,
    base: { service, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
    serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err, req: serializeRequest },
    mixin: () => currentLogContext() ?? {},
  };
}

/** LOG_LEVEL, or the default; a value that is not a level is reported by the logger's first line. */
export function readLogLevel(env: Readonly<Record<string, string | undefined>> = process.env): { level: LogLevel; problem: string | null } {
  const raw = env.LOG_LEVEL?.trim().toLowerCase();
  if (!raw) return { level: DEFAULT_LOG_LEVEL, problem: null };
  if (isLogLevel(raw)) return { level: raw, problem: null };
  return { level: DEFAULT_LOG_LEVEL, problem: `LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}; logging at ${DEFAULT_LOG_LEVEL}` };
}

/** A logger on `destination` (stdout by default); tests pass a stream of their own. */
export function createLogger(service: string, options: { level?: LogLevel; destination?: DestinationStream } = {}): Logger {
  const { level, problem } = options.level ? { level: options.level, problem: null } : readLogLevel();
  const logger = pino(loggerOptions(service, level), options.destination ?? pino.destination({ dest: 1, sync: true }));
  if (problem) logger.warn(problem);
  return logger;
}

// One root logger per process, shared by every bundle Next.js loads this module into.
const ROOT_KEY = Symbol.for("leasewatch.logger");
type GlobalWithLogger = typeof globalThis & { [ROOT_KEY]?: Logger };

/**
 * Names this process in every line (`service`: console, api, sweeper, …). Call it first
 * thing in an entry point; a process that never does logs as "leasewatch".
 */
export function initLogger(service: string): Logger {
  const g = globalThis as GlobalWithLogger;
  g[ROOT_KEY] ??= createLogger(service);
  return g[ROOT_KEY];
}

/** The process's logger; `component` (e.g. "audit", "force-release") is added to each line. */
export function getLogger(component?: string): Logger {
  const root = initLogger("leasewatch");
  return component ? root.child({ component }) : root;
}


/** Puts `logger` in the root's place until the returned function is called (tests read what is logged). */
export function replaceRootLogger(logger: Logger): () => void {
  const g = globalThis as GlobalWithLogger;
  const previous = g[ROOT_KEY];
  g[ROOT_KEY] = logger;
  return () => {
    g[ROOT_KEY] = previous;
  };
}
