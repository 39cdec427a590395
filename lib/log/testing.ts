/** Reading what the process logs, in tests. */
import { createLogger, replaceRootLogger, type Logger, type LogLevel } from "./logger";

export type LogLine = Record<string, unknown> & { level: string; msg?: string };

export interface CapturedLogs {
  /** Every line logged since capture began, parsed. */
  readonly lines: LogLine[];
  /** The raw output, exactly as it would have reached stdout. */
  text(): string;
  readonly logger: Logger;
  restore(): void;
}

/** Sends every line of the process logger (getLogger()) here, at `level` (default trace), until restore(). */
export function captureLogs(service = "test", level: LogLevel = "trace"): CapturedLogs {
  let raw = "";
  const logger = createLogger(service, { level, destination: { write: (chunk: string) => void (raw += chunk) } });
  const restore = replaceRootLogger(logger);
  return {
    get lines() {
      return raw
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as LogLine);
    },
    text: () => raw,
    logger,
    restore,
  };
}
