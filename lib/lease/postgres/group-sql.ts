/**
 * Lifetime hold-duration and renewal-slack histograms per prefix group (groupTotals()).
 *
 * Neither acquire nor release writes them: refreshRollups() folds what is final into two
 * lifetime tables, in its transaction and under its lock, and moves a watermark with them:
 * - holds: terminal events before the refresh's final minute (the rollups' cut), per
 *   GROUP_TOTALS_DEPTH prefix group and hold bucket (`lease_group_holds`);
 * - slack: the renew statement's hourly rows before the final hour, per group (the renew
 *   statement's, also GROUP_TOTALS_DEPTH deep) and slack bucket (`lease_group_slack`).
 * A read adds the tail after each watermark (raw terminal events; the last hour or two of slack
 * rows) in the same statement, so it is exact and every reader gets the same numbers; the
 * tail stays short however long the history is. Values are bind parameters; only the checked
 * schema is spliced in.
 */
import { HOLD_HISTOGRAM_BOUNDS_MS, TERMINAL_EVENT_KINDS } from "../types";
import { GROUP_TOTALS_DEPTH } from "../group-totals";
import { quoteSchema } from "./sql";

const BOUNDS_ARRAY = `ARRAY[${HOLD_HISTOGRAM_BOUNDS_MS.join(", ")}]::bigint[]`;
const TERMINAL_LIST = TERMINAL_EVENT_KINDS.map((k) => `'${k}'`).join(", ");
const prefixOf = (column: string, depth: string) => `array_to_string((string_to_array(${column}, ':'))[1:${depth}], ':')`;
/** The hold bucket as holdBucketIndex() computes it (width_bucket counts bounds <= x; hold_ms is whole ms). */
const HOLD_BUCKET = `width_bucket(coalesce(e.hold_ms, 0) - 1, ${BOUNDS_ARRAY})`;
const watermark = (s: string, column: string) =>
  `coalesce((SELECT ${column} FROM ${s}.lease_rollup_state), '-infinity'::timestamptz)`;

export interface GroupStatements {
  /** $1 the new holds watermark. Folds terminal events in [old watermark, $1) and moves it. */
  foldHolds: string;
  /** $1 the new slack watermark (hour-aligned). Folds slack rows in [old watermark, $1) and moves it. */
  foldSlack: string;
  /** Forgets the folded holds, so the next fold starts from the first event (after back-dated events were loaded). */
  resetHolds: string;
  readHoldsWatermark: string;
  /** $1 depth (at most GROUP_TOTALS_DEPTH). Rows: grp, b (hold bucket), n, ms. */
  readHolds: string;
  /** $1 depth (at most GROUP_TOTALS_DEPTH). Rows: grp, b (slack bucket), n. */
  readSlack: string;
}

export function buildGroupStatements(schema: string): GroupStatements {
  const s = quoteSchema(schema);
  return {
    foldHolds: `
      WITH fold AS (
        INSERT INTO ${s}.lease_group_holds AS t (prefix, hold_bucket, holds, hold_ms_sum)
        SELECT ${prefixOf("e.resource", String(GROUP_TOTALS_DEPTH))}, ${HOLD_BUCKET}, count(*), coalesce(sum(e.hold_ms), 0)
        FROM ${s}.lease_events e
        WHERE e.kind IN (${TERMINAL_LIST}) AND e.at >= ${watermark(s, "holds_folded_until")} AND e.at < $1::timestamptz
        GROUP BY 1, 2
        ON CONFLICT (prefix, hold_bucket) DO UPDATE SET holds = t.holds + EXCLUDED.holds, hold_ms_sum = t.hold_ms_sum + EXCLUDED.hold_ms_sum
      )
      UPDATE ${s}.lease_rollup_state SET holds_folded_until = $1::timestamptz
      WHERE $1::timestamptz > coalesce(holds_folded_until, '-infinity'::timestamptz)`,
    foldSlack: `
      WITH fold AS (
        INSERT INTO ${s}.lease_group_slack AS t (prefix, slack_bucket, renewals)
        SELECT r.prefix, r.slack_bucket, sum(r.renewals)::bigint
        FROM ${s}.lease_renewal_slack r
        WHERE r.bucket_start >= ${watermark(s, "slack_folded_until")} AND r.bucket_start < $1::timestamptz
        GROUP BY 1, 2
        ON CONFLICT (prefix, slack_bucket) DO UPDATE SET renewals = t.renewals + EXCLUDED.renewals
      )
      UPDATE ${s}.lease_rollup_state SET slack_folded_until = $1::timestamptz
      WHERE $1::timestamptz > coalesce(slack_folded_until, '-infinity'::timestamptz)`,
    resetHolds: `
      WITH gone AS (DELETE FROM ${s}.lease_group_holds)
      UPDATE ${s}.lease_rollup_state SET holds_folded_until = NULL`,
    readHoldsWatermark: `SELECT holds_folded_until FROM ${s}.lease_rollup_state`,
    readHolds: `
      SELECT grp, b, sum(n)::bigint AS n, sum(ms)::bigint AS ms FROM (
        SELECT ${prefixOf("t.prefix", "$1::int")} AS grp, t.hold_bucket::int AS b, t.holds AS n, t.hold_ms_sum AS ms
        FROM ${s}.lease_group_holds t
        UNION ALL
        SELECT ${prefixOf("e.resource", "$1::int")}, ${HOLD_BUCKET}, 1, coalesce(e.hold_ms, 0)
        FROM ${s}.lease_events e
        WHERE e.kind IN (${TERMINAL_LIST}) AND e.at >= ${watermark(s, "holds_folded_until")}
      ) parts
      GROUP BY 1, 2`,
    readSlack: `
      SELECT grp, b, sum(n)::bigint AS n FROM (
        SELECT ${prefixOf("t.prefix", "$1::int")} AS grp, t.slack_bucket::int AS b, t.renewals AS n
        FROM ${s}.lease_group_slack t
        UNION ALL
        SELECT ${prefixOf("r.prefix", "$1::int")}, r.slack_bucket, r.renewals
        FROM ${s}.lease_renewal_slack r
        WHERE r.bucket_start >= ${watermark(s, "slack_folded_until")}
      ) parts
      GROUP BY 1, 2`,
  };
}
