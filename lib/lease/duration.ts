import { LeaseError } from "./errors";

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

/**
 * `500ms`, `10s`, `1.5s`, `2m`, `1h` → milliseconds, a whole number; `0` needs no unit. Any
 * other bare number is refused (its unit would be a guess), and so is anything that is not
 * whole milliseconds.
 */
export function parseDuration(text: string): number {
  if (text.trim() === "0") return 0;
  const match = DURATION.exec(text.trim());
  if (!match) throw new LeaseError(`"${text}" is not a duration such as 500ms, 10s, 2m or 1h`);
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (!Number.isSafeInteger(ms)) throw new LeaseError(`"${text}" is not a whole number of milliseconds`);
  return ms;
}

/** Milliseconds as the shortest exact duration: 5000 → "5s", 1500 → "1500ms", 120000 → "2m". */
export function formatDuration(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 1_000 && ms % 1_000 === 0) return `${ms / 1_000}s`;
  return `${ms}ms`;
}
