import type pg from "pg";
import type { HeldAtQuery, HeldAtResult, PastHold, PastHoldEnding } from "../types";
import { prefixUpperBound } from "./rows";
import { ROLLUP_SAFETY_MARGIN_MS } from "./rollups";
import { HOLD_ENDED_AT, quoteSchema, TERMINAL_LIST } from "./sql";

/**
 * heldAt() on Postgres: one statement, so the live leases and the ended holds are
 * read in one snapshot (a release between two reads would otherwise show a hold
 * twice, or not at all).
 *
 * History starts at the first event, or where retention stopped dropping days (see
 * ./partitions.ts); an instant before that is answered "before_history".
 *
 * `tn` is the end of the asked millisecond (T + 1 ms): a hold was live at T when it
 * began before tn and had not ended before tn. Two sources:
 * - `leases` rows acquired before tn that had not lapsed by then (still held, or lapsed
 *   and not swept yet: those ended at their TTL) — the (acquired_at, resource) index;
 * - terminal events whose hold spans tn, re-checked exactly: the end is the release time or
 *   detail.expiredAt, the start is the hold's own `acquired` event. Events recorded before the
 *   last rollup refresh's cut come from the hold-span read model (migration 8) through its GiST
 *   index; newer ones straight from lease_events (an index range on `at`). The cut is the one
 *   refreshRollups() recomputes from (the last refresh's minute − ROLLUP_SAFETY_MARGIN_MS), and
 *   the refresh writes spans and its watermark in one transaction, so every event older than the
 *   cut is in the read model and the two parts neither overlap nor leave a gap. The cut is read
 *   just before (buildHoldSpansCutQuery).
 */
/**
 * The hold-span cut: ended holds recorded before it are in the read model. Read before the
 * heldAt statement and passed in as a value, so the planner bounds the raw part by time (a
 * CTE's value it could not). A refresh in between only moves the cut later, and an older cut
 * is still complete: it reads more from raw events and less from the read model.
 */
export function buildHoldSpansCutQuery(schema: string): string {
  const s = quoteSchema(schema);
  // NULL before the first refresh: then every ended hold is read from raw events.
  return `SELECT (SELECT date_bin(interval '1 minute', r.refreshed_at, TIMESTAMPTZ 'epoch') - ${ROLLUP_SAFETY_MARGIN_MS} * interval '1 millisecond'
                  FROM ${s}.lease_rollup_state r) AS cut`;
}

export function buildHeldAtQuery(schema: string, q: HeldAtQuery, limit: number, cut: Date | null): { text: string; values: unknown[] } {
  const s = quoteSchema(schema);
  const tn = new Date(q.at.getTime() + 1);
  const values: unknown[] = [tn, tn.getTime(), limit, cut];
  const filters = (alias: string): string => {
    const where: string[] = [];
    if (q.resource !== undefined) {
      values.push(q.resource);
      where.push(`${alias}.resource = $${values.length}::text`);
    }
    if (q.prefix !== undefined) {
      values.push(q.prefix);
      where.push(`${alias}.resource >= $${values.length}::text`);
      const upper = prefixUpperBound(q.prefix);
      if (upper !== null) {
        values.push(upper);
        where.push(`${alias}.resource < $${values.length}::text`);
      }
    }
    if (q.owner !== undefined) {
      values.push(q.owner);
      where.push(`${alias}.owner = $${values.length}::text`);
    }
    if (q.task !== undefined) {
      values.push(q.task);
      where.push(`${alias}.task = $${values.length}::text`);
    }
    return where.map((w) => ` AND ${w}`).join("");
  };
  const liveFilters = filters("l");
  const endedFilters = filters("e");
  const spanFilters = filters("h");
  const text = `
    WITH clk AS MATERIALIZED (
      SELECT clock_timestamp() AS now,
             -- Once retention has dropped days, history is whole from the end of the last dropped
             -- day (a hold that began before it ended after it: its terminal event is kept).
             coalesce((SELECT dropped_until FROM ${s}.lease_event_retention), (SELECT min(at) FROM ${s}.lease_events)) AS first_at
    ),
    live AS (
      SELECT l.resource, l.lease_id, l.owner, l.task, l.fencing_token, l.acquired_at,
             CASE WHEN l.expires_at <= c.now THEN l.expires_at END AS ended_at,
             CASE WHEN l.expires_at <= c.now THEN 'expired' ELSE 'held' END AS ending
      FROM ${s}.leases l, clk c
      WHERE l.acquired_at < $1::timestamptz AND l.expires_at >= $1::timestamptz${liveFilters}
      ORDER BY l.acquired_at, l.resource
      LIMIT $3::int
    ),
    spans AS (
      SELECT h.resource, h.lease_id, h.owner, h.task, h.fencing_token, h.at, h.hold_ms, h.kind, h.ended_at
      FROM ${s}.lease_hold_spans h
      WHERE h.span @> $2::bigint AND h.at < coalesce($4::timestamptz, '-infinity')${spanFilters}
      UNION ALL
      SELECT e.resource, e.lease_id, e.owner, e.task, e.fencing_token, e.at, e.hold_ms, e.kind, ${HOLD_ENDED_AT("e")} AS ended_at
      FROM ${s}.lease_events e
      WHERE e.at >= coalesce($4::timestamptz, '-infinity') AND e.kind IN (${TERMINAL_LIST}) AND e.hold_ms IS NOT NULL
        AND ${s}.lease_hold_span(e.kind, e.at, e.hold_ms, e.detail) @> $2::bigint${endedFilters}
    ),
    ended AS (
      SELECT x.resource, x.lease_id, x.owner, x.task, x.fencing_token,
             coalesce(a.at, x.ended_at - x.hold_ms * interval '1 millisecond') AS acquired_at, x.ended_at, x.kind AS ending
      FROM spans x
      LEFT JOIN LATERAL (
        SELECT a.at FROM ${s}.lease_events a
        WHERE a.resource = x.resource AND a.at <= x.at AND a.kind = 'acquired' AND a.lease_id = x.lease_id
        ORDER BY a.at DESC LIMIT 1
      ) a ON true
      WHERE x.ended_at >= $1::timestamptz
    ),
    holds AS (
      SELECT * FROM live
      UNION ALL
      SELECT * FROM ended WHERE acquired_at < $1::timestamptz
    )
    SELECT c.now, c.first_at, h.* FROM clk c
    LEFT JOIN LATERAL (SELECT * FROM holds ORDER BY acquired_at, resource LIMIT $3::int) h ON true`;
  return { text, values };
}

export async function readHeldAt(pool: pg.Pool | pg.PoolClient, schema: string, store: string, q: HeldAtQuery, limit: number): Promise<HeldAtResult> {
  const { rows: cutRows } = await pool.query<{ cut: Date | null }>(buildHoldSpansCutQuery(schema));
  const { text, values } = buildHeldAtQuery(schema, q, limit + 1, cutRows[0]!.cut);
  const { rows } = await pool.query(text, values);
  const head = rows[0]!;
  const now = head.now as Date;
  const firstAt = (head.first_at as Date | null) ?? null;
  if (q.at.getTime() >= now.getTime()) return { covered: false, reason: "future", at: q.at, now, historyStartsAt: firstAt };
  // The first recorded millisecond is covered: `at` includes everything recorded in it.
  if (firstAt === null || q.at.getTime() < Math.floor(firstAt.getTime())) {
    return { covered: false, reason: "before_history", at: q.at, now, historyStartsAt: firstAt };
  }
  const found: PastHold[] = rows
    .filter((r) => r.resource !== null)
    .map((r) => {
      const acquiredAt = r.acquired_at as Date;
      return {
        store,
        resource: String(r.resource),
        leaseId: String(r.lease_id),
        owner: String(r.owner),
        task: String(r.task),
        fencingToken: String(r.fencing_token),
        acquiredAt,
        heldForMs: Math.max(0, q.at.getTime() - acquiredAt.getTime()),
        ending: r.ending as PastHoldEnding,
        endedAt: (r.ended_at as Date | null) ?? null,
      };
    });
  return { covered: true, at: q.at, items: found.slice(0, limit), hasMore: found.length > limit, now, historyStartsAt: firstAt };
}
