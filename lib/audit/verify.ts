/**
 * Walks the audit chain in id order and names every entry that was changed,
 * removed or reordered (`npm run audit:verify`, and /audit's chain state). A bad
 * entry does not stop the walk: the next one is checked against the bad entry's
 * stored hash, so one poisoned or tampered row never hides what comes after it.
 * Reads in batches, so it works over any number of entries, and can start after
 * an entry already verified (incremental checks).
 *
 * - changed: the entry's fields no longer give its hash under the key;
 * - removed: its prev_hash is the hash of no entry at all (the one before it is gone);
 * - reordered: its prev_hash is the hash of an entry stored elsewhere.
 * Removing only the newest entries leaves a shorter valid chain: compare the
 * printed head (id and hash) with one noted earlier to catch that.
 */
import type pg from "pg";
import { quoteSchema } from "@leasewatch/lease/internal";
import { GENESIS_HASH, hashEntry } from "./chain";
import { hashedFields, toAuditEntry } from "./entry";
import { SELECT_COLUMNS } from "./sql";

export type ChainProblem = "changed" | "removed" | "reordered";

export interface ChainFailure {
  entryId: string;
  problem: ChainProblem;
  message: string;
}

export interface ChainPosition {
  id: string;
  hash: string;
}

export interface VerifyResult {
  /** No entry read failed. */
  ok: boolean;
  /** Entries read by this walk. */
  entries: number;
  /** Entries read that passed every check. */
  verified: number;
  /** What failed, in id order (an entry can fail two ways); at most MAX_LISTED_FAILURES of them. */
  failures: ChainFailure[];
  /** Entries that failed, all of them. */
  failureCount: number;
  /** The last entry read (where an incremental walk continues), or where it started when nothing was read. */
  head: ChainPosition | null;
  /** False when maxEntries stopped the walk before the end of the log. */
  complete: boolean;
}

export interface VerifyOptions {
  pool: pg.Pool;
  schema: string;
  key: string;
  /** Continue after this entry (already walked), instead of from the start of the log. */
  after?: ChainPosition | null;
  /** Stop after reading about this many entries (whole batches); the result says whether the walk is complete. */
  maxEntries?: number;
}

const BATCH = 5_000;
export const MAX_LISTED_FAILURES = 100;

export async function verifyAuditChain(options: VerifyOptions): Promise<VerifyResult> {
  const a = quoteSchema(options.schema);
  let expectedPrev = options.after?.hash ?? GENESIS_HASH;
  let prevId: string | null = options.after?.id ?? null;
  let entries = 0;
  let verified = 0;
  let failureCount = 0;
  const failures: ChainFailure[] = [];
  const fail = (failure: ChainFailure) => {
    if (failures.length < MAX_LISTED_FAILURES) failures.push(failure);
  };
  let complete = true;
  for (;;) {
    if (options.maxEntries !== undefined && entries >= options.maxEntries) {
      complete = false;
      break;
    }
    const { rows } = await options.pool.query(
      `SELECT ${SELECT_COLUMNS} FROM ${a}.audit_log a WHERE a.id > $1::bigint ORDER BY a.id LIMIT $2::int`,
      [prevId ?? "0", BATCH],
    );
    for (const row of rows) {
      const entry = toAuditEntry(row);
      const after = prevId === null ? "at the start of the log" : `after entry #${prevId}`;
      let isGood = true;
      if (hashEntry(options.key, entry.prevHash, hashedFields(entry)) !== entry.hash) {
        isGood = false;
        fail({ entryId: entry.id, problem: "changed", message: `entry #${entry.id} was changed: its contents no longer match its hash` });
      }
      if (entry.prevHash !== expectedPrev) {
        isGood = false;
        const { rows: found } = await options.pool.query<{ id: string }>(`SELECT a.id::text AS id FROM ${a}.audit_log a WHERE a.hash = $1::text`, [entry.prevHash]);
        const predecessor = found[0]?.id;
        fail(
          predecessor !== undefined
            ? {
                entryId: entry.id,
                problem: "reordered",
                message: `entry #${entry.id} is out of order: it was written right after the entry now stored as #${predecessor}, but is stored ${after}`,
              }
            : { entryId: entry.id, problem: "removed", message: `an entry was removed before entry #${entry.id} (${after}): the entry it was chained to is gone` },
        );
      }
      if (isGood) verified++;
      else failureCount++;
      // The next entry is checked against this one's stored hash, good or not: one bad entry is reported once.
      expectedPrev = entry.hash;
      prevId = entry.id;
      entries++;
    }
    if (rows.length < BATCH) break;
  }
  return { ok: failureCount === 0, entries, verified, failures, failureCount, head: prevId === null ? null : { id: prevId, hash: expectedPrev }, complete };
}
