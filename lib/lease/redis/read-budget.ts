import { ReadAbortedError } from "../errors";

/**
 * Keys and entries one read may examine by default (stream entries, index entries, lease
 * hashes). At a few microseconds each on the server that is tens of milliseconds of Redis
 * time, whatever the filter; a read that needs more answers in part and says so.
 */
export const DEFAULT_READ_KEY_BUDGET = 50_000;

/**
 * The bound on one read's Redis work: a count of what it examined, checked between round
 * trips, and the caller's AbortSignal, checked before each one (so a read whose request went
 * away issues no further commands).
 */
export class ReadBudget {
  examined = 0;

  constructor(
    readonly limit: number,
    private readonly signal: AbortSignal | undefined,
    private readonly what: string,
  ) {}

  /** Before a round trip: throws ReadAbortedError once the caller's signal has fired. */
  checkpoint(): void {
    if (this.signal?.aborted) throw new ReadAbortedError(this.what);
  }

  spend(n: number): void {
    this.examined += n;
  }

  get isSpent(): boolean {
    return this.examined >= this.limit;
  }

  /** What is left, at least 1 (a batch never asks Redis for 0 entries). */
  get remaining(): number {
    return Math.max(1, this.limit - this.examined);
  }
}
