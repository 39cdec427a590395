/** What one store's share of the workload has done so far (cumulative). */
export interface WorkloadCounters {
  /** Write operations sent to the store (acquire, renew, release, reports, sweep). */
  ops: number;
  acquired: number;
  released: number;
  /** Acquires refused because someone else held the resource. */
  contended: number;
  /** Waiting acquires that gave up after their waitMs. */
  gaveUp: number;
  /** Holders that "died" without releasing (their leases expire on the store's clock). */
  crashed: number;
  renewed: number;
  renewFailed: number;
  lost: number;
  fencedAccepted: number;
  fencedRejected: number;
  /** Expiries recorded by this workload's own sweeps. */
  swept: number;
  longHolds: number;
  /** Unexpected errors (e.g. the store was unreachable). */
  errors: number;
  lastError?: string;
}

export function createCounters(): WorkloadCounters {
  return {
    ops: 0,
    acquired: 0,
    released: 0,
    contended: 0,
    gaveUp: 0,
    crashed: 0,
    renewed: 0,
    renewFailed: 0,
    lost: 0,
    fencedAccepted: 0,
    fencedRejected: 0,
    swept: 0,
    longHolds: 0,
    errors: 0,
  };
}
