/** Base error for everything the lease library throws on purpose. */
export class LeaseError extends Error {
  readonly code: string;
  constructor(message: string, code = "invalid_input") {
    super(message);
    this.name = "LeaseError";
    this.code = code;
  }
}

/** The holder no longer owns the lease (renew refused, or the local deadline passed). */
export class LeaseLostError extends LeaseError {
  readonly resource: string;
  readonly reason: string;
  constructor(resource: string, reason: string) {
    super(`lease on "${resource}" was lost (${reason})`, "lease_lost");
    this.name = "LeaseLostError";
    this.resource = resource;
    this.reason = reason;
  }
}

/** A waiting acquire ran out of `waitMs`. */
export class AcquireTimeoutError extends LeaseError {
  readonly resource: string;
  readonly waitedMs: number;
  /** Who held the resource at the last attempt, when known. */
  readonly holder?: { owner: string; task: string; leaseId?: string; fencingToken?: string };
  constructor(resource: string, waitedMs: number, holder?: { owner: string; task: string; leaseId?: string; fencingToken?: string }) {
    const held = holder ? `; held by ${holder.owner} (${holder.task})` : "";
    super(`could not acquire "${resource}" within ${waitedMs} ms${held}`, "acquire_timeout");
    this.name = "AcquireTimeoutError";
    this.resource = resource;
    this.waitedMs = waitedMs;
    this.holder = holder;
  }
}

/** Thrown when the caller's AbortSignal fired; the store's work was stopped (a Postgres backend cancelled, a Redis read issuing no more commands), not left running. */
export class ReadAbortedError extends LeaseError {
  constructor(what: string) {
    super(`${what}: read cancelled`, "read_aborted");
    this.name = "ReadAbortedError";
  }
}
