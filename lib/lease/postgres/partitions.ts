import type pg from "pg";
import { ROLLUP_SAFETY_MARGIN_MS } from "./rollups";
import { buildDropPartition, buildPartitionStatements, DAILY_PARTITION_PATTERN, PARTITION_DAYS_AHEAD } from "./sql";
import { inTransaction } from "./transaction";
import { internalLockKey } from "./lock-keys";

/**
 * Upkeep of the daily lease_events partitions (migration 8):
 *
 * - today's partition and PARTITION_DAYS_AHEAD more exist, so the write path never needs DDL;
 * - rows that landed in the DEFAULT partition (an `at` outside the prepared days: a bulk load
 *   of old history, or a sweep that missed days) are moved into their day's partition, so
 *   DEFAULT stays empty and retention can drop them with their day;
 * - with a retention of N days, every partition whose whole day lies before (today − N) is
 *   dropped with DROP TABLE: no row is deleted. A day is dropped only when the minute rollups
 *   already hold it: the last rollup refresh must have finalised the whole day, and the
 *   events the rollups counted in that day must equal the raw rows. Otherwise the partition
 *   is kept and the reason returned (run refreshRollups({ since }) over that day, then retry).
 *   Days go oldest first and stop at the first one kept, so raw history is whole from
 *   `droppedUntil` on (heldAt and the events page rely on that).
 *
 * DDL takes locks on lease_events; lock_timeout keeps a long read from making writes queue
 * behind a waiting DROP. Each drop runs in its own short transaction for the same reason.
 */
const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** How long maintenance waits for a table lock before giving up until its next run. */
const LOCK_TIMEOUT = "3s";

export interface PartitionMaintenanceResult {
  /** false when another maintenance of this schema was running (it covers the same ground). */
  maintained: boolean;
  /** Partitions created by this call (days ahead, and days whose rows were in DEFAULT). */
  created: string[];
  /** Partitions dropped by retention. */
  dropped: string[];
  /** Partitions past retention that were kept, and why. */
  kept: Array<{ partition: string; reason: string }>;
  /** Raw events before this instant are no longer retained (null: nothing has been dropped). */
  droppedUntil: Date | null;
}

/** The daily partition holding `day` (a UTC midnight). */
export const partitionName = (day: Date) => `lease_events_p${day.toISOString().slice(0, 10).replaceAll("-", "")}`;

function dayOf(name: string): Date | null {
  const m = DAILY_PARTITION_PATTERN.exec(name);
  return m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : null;
}

/**
 * Creates the daily partitions for [from, to] (UTC days) that are missing, before a bulk load
 * of history there: rows then go straight to their day, not through DEFAULT.
 */
export async function ensureEventPartitions(db: pg.Pool | pg.PoolClient, schema: string, from: Date, to: Date): Promise<number> {
  const { rows } = await db.query<{ created: number }>(buildPartitionStatements(schema).createDays, [utcDay(from), utcDay(to)]);
  return rows[0]?.created ?? 0;
}

const utcDay = (t: Date) => t.toISOString().slice(0, 10);

export async function maintainPartitions(pool: pg.Pool, schema: string, retentionDays: number): Promise<PartitionMaintenanceResult> {
  const sql = buildPartitionStatements(schema);
  const head = await inTransaction(pool, async (client) => {
    const begin = await client.query<{ locked: boolean; now: Date; refreshed_at: Date | null }>(sql.begin, [internalLockKey("partitions", schema)]);
    const row = begin.rows[0]!;
    if (!row.locked) return null;
    await client.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
    const before = new Set((await client.query<{ name: string }>(sql.listDaily)).rows.map((r) => r.name));
    await client.query(sql.createAhead, [PARTITION_DAYS_AHEAD]);
    await client.query(sql.drainDefault);
    const after = (await client.query<{ name: string }>(sql.listDaily)).rows.map((r) => r.name);
    return { now: row.now, refreshedAt: row.refreshed_at, created: after.filter((n) => !before.has(n)), partitions: after };
  });
  if (head === null) return { maintained: false, created: [], dropped: [], kept: [], droppedUntil: await readDroppedUntil(pool, schema) };

  const dropped: string[] = [];
  const kept: PartitionMaintenanceResult["kept"] = [];
  if (retentionDays > 0) {
    const today = Math.floor(head.now.getTime() / DAY_MS) * DAY_MS;
    const cutoff = today - retentionDays * DAY_MS;
    // Minutes before this are final in the rollups (see rollups.ts); the raw tail after it is read live.
    const finalUntil = head.refreshedAt ? Math.floor(head.refreshedAt.getTime() / MINUTE_MS) * MINUTE_MS - ROLLUP_SAFETY_MARGIN_MS : null;
    let isBlocked = false;
    for (const name of head.partitions) {
      const day = dayOf(name);
      if (!day) continue;
      const end = day.getTime() + DAY_MS;
      if (end > cutoff) continue;
      if (isBlocked) {
        kept.push({ partition: name, reason: "an older day is kept: days go oldest first, so the retained history has no gaps" });
        continue;
      }
      if (finalUntil === null || finalUntil < end) {
        isBlocked = true;
        kept.push({ partition: name, reason: "the stats rollups have not been refreshed past the end of this day yet" });
        continue;
      }
      const outcome = await inTransaction(pool, async (client) => {
        await client.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
        const { rows } = await client.query<{ raw: string; rolled_up: string }>(sql.compareWithRollups, [day, new Date(end)]);
        const { raw, rolled_up: rolledUp } = rows[0]!;
        if (raw !== rolledUp) return `the minute rollups count ${rolledUp} events in this day but it holds ${raw}: refresh the rollups over it first`;
        await client.query(buildDropPartition(schema, name));
        await client.query(sql.markDropped, [new Date(end)]);
        return null;
      });
      if (outcome === null) dropped.push(name);
      else {
        isBlocked = true;
        kept.push({ partition: name, reason: outcome });
      }
    }
  }
  return { maintained: true, created: head.created, dropped, kept, droppedUntil: await readDroppedUntil(pool, schema) };
}

export async function readDroppedUntil(db: pg.Pool | pg.PoolClient, schema: string): Promise<Date | null> {
  const { rows } = await db.query<{ dropped_until: Date }>(buildPartitionStatements(schema).readDroppedUntil);
  return rows[0]?.dropped_until ?? null;
}
