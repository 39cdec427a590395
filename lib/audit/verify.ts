/**
 * Walks the audit chain from the first entry and names the first one that was
 * changed, removed or reordered (`npm run audit:verify`). Reads in id order, in
 * batches, so it works over any number of entries.
 *
 * - changed: the entry's fields no longer give its hash under the key;
 * - removed: its prev_hash is the hash of no entry at all (the one before it is gone);
 * - reordered: its prev_hash is the hash of an entry stored elsewhere.
 * Removing only the newest entries leaves a shorter valid chain: compare the
 * printed head (id and hash) with one noted earlier to catch that.
 */
import type pg from "pg";
import { quoteSchema } from "@/lib/lease/postgres/sql";
import { GENESIS_HASH, hashEntry } from "./chain";
import { hashedFields, toAuditEntry } from "./log";
import { SELECT_COLUMNS } from "./sql";

export type VerifyResult =
  | { ok: true; entries: number; head: { id: string; hash: string } | null }
  | { ok: false; entries: number; problem: "changed" | "removed" | "reordered"; entryId: string; message: string };

const BATCH = 5_000;

export async function verifyAuditChain(options: { pool: pg.Pool; schema: string; key: string }): Promise<VerifyResult> {
  const a = quoteSchema(options.schema);
  let expectedPrev = GENESIS_HASH;
  let prevId: string | null = null;
  let entries = 0;
  for (;;) {
    const { rows } = await options.pool.query(
      `SELECT ${SELECT_COLUMNS} FROM ${a}.audit_log a WHERE a.id > $1::bigint ORDER BY a.id LIMIT $2::int`,
      [prevId ?? "0", BATCH],
    );
    for (const row of rows) {
      const entry = toAuditEntry(row);
      const after = prevId === null ? "at the start of the log" : `after entry #${prevId}`;
      if (hashEntry(options.key, entry.prevHash, hashedFields(entry)) !== entry.hash) {
        return { ok: false, entries, problem: "changed", entryId: entry.id, message: `entry #${entry.id} was changed: its contents no longer match its hash` };
      }
      if (entry.prevHash !== expectedPrev) {
        const { rows: found } = await options.pool.query<{ id: string }>(`SELECT a.id::text AS id FROM ${a}.audit_log a WHERE a.hash = $1::text`, [entry.prevHash]);
        const predecessor = found[0]?.id;
        if (predecessor !== undefined) {
          return {
            ok: false,
            entries,
            problem: "reordered",
            entryId: entry.id,
            message: `entry #${entry.id} is out of order: it was written right after the entry now stored as #${predecessor}, but is stored ${after}`,
          };
        }
        return {
          ok: false,
          entries,
          problem: "removed",
          entryId: entry.id,
          message: `an entry was removed before entry #${entry.id} (${after}): the entry it was chained to is gone`,
        };
      }
      expectedPrev = entry.hash;
      prevId = entry.id;
      entries++;
    }
    if (rows.length < BATCH) break;
  }
  return { ok: true, entries, head: prevId === null ? null : { id: prevId, hash: expectedPrev } };
}
