import type pg from "pg";

/** At most this many calls share one statement; more waiting start further statements at once. */
const MAX_CALLS_PER_STATEMENT = 64;

/**
 * While a statement is out, calls made meanwhile wait for its answer and then go together, for
 * at most this long after the latest statement was sent: a statement stuck on a row lock holds
 * the calls behind it back no longer than this, and they go without it.
 */
export const DEFAULT_HOLD_LIMIT_MS = 5;

/** SQLSTATE: five characters, sent by the server with every error it raises. */
const SQLSTATE_PATTERN = /^[0-9A-Z]{5}$/;
/** SQLSTATE deadlock_detected: the server rolled this call back to break a cycle of waits. */
const DEADLOCK_DETECTED = "40P01";
/** How many times a call alone that the server rolled back in a deadlock runs again. */
const DEADLOCK_RETRIES = 3;

interface PendingCall<Row> {
  readonly values: readonly unknown[];
  readonly resolve: (row: Row | undefined) => void;
  readonly reject: (error: unknown) => void;
}

export interface CallBatchStatements<Row> {
  /** One call's statement: its values as given, its row (or none) as the answer. */
  runOne(values: readonly unknown[]): Promise<Row | undefined>;
  /**
   * Many calls in one statement: each parameter an array (one element per call, in order), each
   * row carrying `n`, the call's 1-based position. A call left without a row must have changed
   * nothing: it runs again alone (runOne), whose row answers it.
   */
  runMany(columns: unknown[][]): Promise<readonly (Row & { n: string | number })[]>;
}

/**
 * Group commit: the calls made while the process is busy with other work (one event-loop turn)
 * go to Postgres as one statement, so they share its round trip, its parse and its commit,
 * where each call's own work (the locks, the rows, the events) stays as it was. A call alone
 * goes as it always did. While a statement is out, the calls of the turns after it wait for its
 * answer and go together as the next one (up to the hold limit): at a steady load a statement
 * then carries the calls of all the turns its round trip took, not of one turn.
 *
 * Calls go in order of their first value (the resource), ties in arrival order, so the calls of
 * one resource reach the statement in the order they were made; the store's statement takes its
 * locks in one global order of its own (migration 20). Should the server refuse a statement anyway (it then committed nothing), each of its calls
 * runs again alone and meets its own answer; a statement whose connection failed may have
 * committed, so its calls get that error, as a call alone would.
 */
export class CallBatch<Row> {
  private pending: PendingCall<Row>[] = [];
  private isFlushScheduled = false;
  /** Statements sent and not yet answered, and when the latest was sent (performance.now()). */
  private inFlight = 0;
  private lastSentAt = 0;
  private holdTimer: NodeJS.Timeout | null = null;

  /**
   * `isGrouping` false: every call goes alone, at once (PostgresLeaseStoreOptions.groupCommit).
   * `holdLimitMs`: how long calls may wait for the statement out before them (0: never).
   */
  constructor(
    private readonly statements: CallBatchStatements<Row>,
    private readonly isGrouping = true,
    private readonly holdLimitMs = DEFAULT_HOLD_LIMIT_MS,
  ) {}

  run(values: readonly unknown[]): Promise<Row | undefined> {
    return new Promise((resolve, reject) => {
      if (!this.isGrouping) return void this.sendOne({ values, resolve, reject });
      this.pending.push({ values, resolve, reject });
      if (!this.isFlushScheduled) {
        this.isFlushScheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  private readonly flush = (): void => {
    this.isFlushScheduled = false;
    if (this.pending.length === 0) return;
    if (this.inFlight > 0) {
      const held = performance.now() - this.lastSentAt;
      if (held < this.holdLimitMs) {
        // The answer in flight flushes them; if it is late, the timer does.
        this.holdTimer ??= setTimeout(this.flushHeld, this.holdLimitMs - held);
        return;
      }
    }
    if (this.holdTimer) {
      clearTimeout(this.holdTimer);
      this.holdTimer = null;
    }
    const calls = this.pending;
    this.pending = [];
    this.lastSentAt = performance.now();
    for (let i = 0; i < calls.length; i += MAX_CALLS_PER_STATEMENT) void this.send(calls.slice(i, i + MAX_CALLS_PER_STATEMENT));
  };

  private readonly flushHeld = (): void => {
    this.holdTimer = null;
    this.flush();
  };

  private async send(calls: PendingCall<Row>[]): Promise<void> {
    this.inFlight++;
    try {
      await this.sendNow(calls);
    } finally {
      this.inFlight--;
      // The calls held for this answer go in the turn after it, with any its callers make next.
      if (this.pending.length > 0 && !this.isFlushScheduled) {
        this.isFlushScheduled = true;
        setImmediate(this.flush);
      }
    }
  }

  private async sendNow(calls: PendingCall<Row>[]): Promise<void> {
    if (calls.length === 1) return this.sendOne(calls[0]!);
    const ordered = calls
      .map((call, arrival) => ({ call, arrival }))
      .sort((a, b) => compareText(a.call.values[0], b.call.values[0]) || a.arrival - b.arrival)
      .map(({ call }) => call);
    const columns = ordered[0]!.values.map((_, column) => ordered.map((call) => call.values[column]));
    let rows: readonly (Row & { n: string | number })[];
    try {
      rows = await this.statements.runMany(columns);
    } catch (error) {
      if (!isStatementError(error)) {
        for (const call of ordered) call.reject(error);
        return;
      }
      await Promise.all(ordered.map((call) => this.sendOne(call)));
      return;
    }
    const byPosition = new Map<number, Row>();
    for (const row of rows) {
      const { n, ...rest } = row;
      byPosition.set(Number(n), rest as Row);
    }
    const unanswered: PendingCall<Row>[] = [];
    ordered.forEach((call, index) => {
      const row = byPosition.get(index + 1);
      if (row === undefined) unanswered.push(call);
      else call.resolve(row);
    });
    await Promise.all(unanswered.map((call) => this.sendOne(call)));
  }

  /**
   * A call alone, in its own transaction. The server may still roll one back to break a cycle of
   * waits with work that does not follow the store's lock order (a store of an earlier version
   * during an upgrade, another client's transaction). It then committed nothing, so it runs again.
   */
  private async sendOne(call: PendingCall<Row>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        call.resolve(await this.statements.runOne(call.values));
        return;
      } catch (error) {
        if (attempt < DEADLOCK_RETRIES && isStatementError(error) && error.code === DEADLOCK_DETECTED) continue;
        call.reject(error);
        return;
      }
    }
  }
}

/** Code-unit order, the same in every process. */
function compareText(a: unknown, b: unknown): number {
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The server refused the statement and kept the session (severity ERROR: a deadlock, a bad
 * value): its transaction rolled back, nothing of it committed. A FATAL one ends the session,
 * possibly after the commit, so it counts as a lost connection.
 */
function isStatementError(error: unknown): error is pg.DatabaseError {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  return typeof code === "string" && SQLSTATE_PATTERN.test(code) && severity === "ERROR";
}
