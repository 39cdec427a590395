/**
 * Reads behind renewalSlack() and ttlAdvice() on Postgres: the slack rollup the renew
 * statement writes, and one aggregate over the window's events per prefix group.
 * Values are bind parameters; only the checked schema is spliced in.
 */
import { HOLD_HISTOGRAM_BOUNDS_MS, SLACK_BUCKET_COUNT, SLACK_PREFIX_DEPTH } from "../types";
import { quoteSchema } from "./sql";

/** $1 from (hour-floored by the caller), $2 to. One row per group, TTL and slack bucket. */
export function buildSlackRowsQuery(schema: string): string {
  const s = quoteSchema(schema);
  return `
    SELECT r.prefix, r.ttl_ms, r.slack_bucket, sum(r.renewals)::bigint AS renewals
    FROM ${s}.lease_renewal_slack r
    WHERE r.bucket_start >= $1::timestamptz AND r.bucket_start < $2::timestamptz AND r.slack_bucket < ${SLACK_BUCKET_COUNT}
    GROUP BY 1, 2, 3`;
}

const BOUNDS_ARRAY = `ARRAY[${HOLD_HISTOGRAM_BOUNDS_MS.join(", ")}]::bigint[]`;
const HISTOGRAM_SIZE = HOLD_HISTOGRAM_BOUNDS_MS.length + 1;

/**
 * $1 from, $2 to, $3 prefix lower bound or NULL, $4 prefix upper bound or NULL.
 * Per prefix group: terminal counts, refused renewals and the hold histogram (bucketed
 * as holdBucketIndex does: width_bucket counts bounds <= x, hold_ms is whole ms, so x = hold_ms - 1).
 * The prefix range on the C-collated resource uses the (resource, at) index.
 */
export function buildAdviceEventsQuery(schema: string): string {
  const s = quoteSchema(schema);
  return `
    SELECT array_to_string((string_to_array(e.resource, ':'))[1:${SLACK_PREFIX_DEPTH}], ':') AS grp,
      count(*) FILTER (WHERE e.kind = 'released')::bigint AS released,
      count(*) FILTER (WHERE e.kind = 'expired')::bigint AS expired,
      count(*) FILTER (WHERE e.kind = 'force_released')::bigint AS force_released,
      count(*) FILTER (WHERE e.kind = 'renew_failed')::bigint AS renew_failed,
      ARRAY[${Array.from({ length: HISTOGRAM_SIZE }, (_, i) => `count(*) FILTER (WHERE e.hb = ${i})`).join(", ")}]::bigint[] AS hold_histogram
    FROM (
      SELECT ev.resource, ev.kind,
             CASE WHEN ev.kind <> 'renew_failed' THEN width_bucket(coalesce(ev.hold_ms, 0) - 1, ${BOUNDS_ARRAY}) END AS hb
      FROM ${s}.lease_events ev
      WHERE ev.at >= $1::timestamptz AND ev.at < $2::timestamptz
        AND ev.kind IN ('released', 'expired', 'force_released', 'renew_failed')
        AND ($3::text IS NULL OR ev.resource >= $3::text)
        AND ($4::text IS NULL OR ev.resource < $4::text)
    ) e
    GROUP BY 1`;
}
