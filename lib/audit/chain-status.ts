/**
 * The chain's state for /audit, kept per process and extended incrementally:
 * the first look walks the whole log (in slices of MAX_ENTRIES_PER_LOOK, so a
 * huge log never holds a page for long), later looks verify only the entries
 * appended since, continuing from the last one walked. A result younger than
 * MAX_AGE_MS is answered from memory, and concurrent looks share one walk.
 * A change to an entry already walked shows at the next process start (and
 * always in `npm run audit:verify`, which walks everything).
 */
import type { ChainFailure, ChainPosition, VerifyResult } from "./verify";
import { MAX_LISTED_FAILURES } from "./verify";

export interface ChainStatus {
  /** Every entry walked so far verified. */
  ok: boolean;
  /** The last entry walked (null: the log is empty). */
  through: ChainPosition | null;
  entries: number;
  /** Entries that failed, and the first MAX_LISTED_FAILURES ways they did. */
  failureCount: number;
  failures: ChainFailure[];
  /** False while the first walk of a long log is still under way. */
  complete: boolean;
  checkedAt: Date;
}

export type VerifyFrom = (options: { after: ChainPosition | null; maxEntries: number }) => Promise<VerifyResult>;

const MAX_AGE_MS = 15_000;
const MAX_ENTRIES_PER_LOOK = 50_000;

export class ChainWatcher {
  private status: ChainStatus | null = null;
  private running: Promise<ChainStatus> | null = null;

  constructor(
    private readonly verifyFrom: VerifyFrom,
    private readonly options: { maxAgeMs?: number; maxEntriesPerLook?: number } = {},
  ) {}

  /** The remembered state if recent, otherwise the state after verifying what was appended since. */
  async look(now: Date = new Date()): Promise<ChainStatus> {
    const maxAgeMs = this.options.maxAgeMs ?? MAX_AGE_MS;
    if (this.status && this.status.complete && now.getTime() - this.status.checkedAt.getTime() < maxAgeMs) return this.status;
    this.running ??= this.extend().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async extend(): Promise<ChainStatus> {
    const before = this.status;
    const result = await this.verifyFrom({ after: before?.through ?? null, maxEntries: this.options.maxEntriesPerLook ?? MAX_ENTRIES_PER_LOOK });
    const failures = [...(before?.failures ?? []), ...result.failures].slice(0, MAX_LISTED_FAILURES);
    const failureCount = (before?.failureCount ?? 0) + result.failureCount;
    this.status = {
      ok: failureCount === 0,
      through: result.head ?? before?.through ?? null,
      entries: (before?.entries ?? 0) + result.entries,
      failureCount,
      failures,
      complete: result.complete,
      checkedAt: new Date(),
    };
    return this.status;
  }
}
