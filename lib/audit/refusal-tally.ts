/**
 * Attempts refused by a rate limit, counted instead of written one by one. A
 * burst of refusals would otherwise be a burst of appends under the chain's lock
 * (each with text the caller chose), crowding out a real force-release. Every
 * attempt is still in the log: each key's attempts in a window become one
 * `rate_limited` entry that says how many there were, when, and shows the last one.
 * In this process's memory: attempts counted in the last window before the
 * process ends are lost with it (the log says so for nothing else).
 */
import type { AuditLog } from "./log";
import type { AuditDraft } from "./entry";
import { getLogger } from "@/lib/log/logger";

export interface RefusalTallyOptions {
  /** How long a key's count runs before its entry is written. */
  windowMs: number;
  getAuditLog(): Promise<AuditLog>;
  /** Keys counted at once at most; a new key past this writes the oldest key's entry early. */
  maxKeys?: number;
}

interface Tally {
  count: number;
  firstAt: Date;
  lastAt: Date;
  last: AuditDraft;
  timer: NodeJS.Timeout | null;
}

export class RefusalTally {
  private readonly tallies = new Map<string, Tally>();
  private readonly maxKeys: number;

  constructor(private readonly options: RefusalTallyOptions) {
    this.maxKeys = options.maxKeys ?? 10_000;
  }

  /** Counts one refused attempt under `key` (e.g. action and actor); `draft` is its entry, as it would have been written alone. */
  add(key: string, draft: AuditDraft, at: Date = new Date()): number {
    const tally = this.tallies.get(key);
    if (tally) {
      tally.count++;
      tally.lastAt = at;
      tally.last = draft;
      return tally.count;
    }
    if (this.tallies.size >= this.maxKeys) void this.flush(this.tallies.keys().next().value!);
    const fresh: Tally = { count: 1, firstAt: at, lastAt: at, last: draft, timer: null };
    this.tallies.set(key, fresh);
    this.arm(key, fresh);
    return 1;
  }

  /** Attempts counted and not yet written, per key. */
  pending(): Map<string, number> {
    return new Map([...this.tallies].map(([k, t]) => [k, t.count]));
  }

  /** Writes the entry of `key` (or of every key) now. A count whose entry cannot be written is kept for the next try. */
  async flush(key?: string): Promise<void> {
    const keys = key === undefined ? [...this.tallies.keys()] : [key];
    for (const k of keys) {
      const tally = this.tallies.get(k);
      if (!tally) continue;
      this.tallies.delete(k);
      if (tally.timer) clearTimeout(tally.timer);
      try {
        const audit = await this.options.getAuditLog();
        await audit.append(tallyEntry(tally));
      } catch (error) {
        getLogger("audit").error({ attempts: tally.count, error: error instanceof Error ? error.message : String(error) }, "rate-limited attempts could not be recorded yet; kept for the next try");
        this.merge(k, tally);
      }
    }
  }

  private merge(key: string, tally: Tally): void {
    const newer = this.tallies.get(key);
    if (newer) {
      if (newer.timer) clearTimeout(newer.timer);
      tally.count += newer.count;
      tally.lastAt = newer.lastAt;
      tally.last = newer.last;
    }
    this.tallies.set(key, tally);
    this.arm(key, tally);
  }

  private arm(key: string, tally: Tally): void {
    tally.timer = setTimeout(() => void this.flush(key), this.options.windowMs);
    tally.timer.unref();
  }
}

function tallyEntry(tally: Tally): AuditDraft {
  const times = tally.count === 1 ? `at ${tally.firstAt.toISOString()}` : `from ${tally.firstAt.toISOString()} to ${tally.lastAt.toISOString()}`;
  const attempts = tally.count === 1 ? "1 attempt" : `${tally.count} attempts`;
  return {
    ...tally.last,
    outcome: "rate_limited",
    resolvesId: null,
    newHolder: null,
    detail: `rate limited ×${tally.count}: ${attempts} refused by the rate limit ${times}, before any other check; the fields are the last attempt's${tally.last.detail ? ` (${tally.last.detail})` : ""}`,
  };
}
