import { HOLD_HISTOGRAM_BOUNDS_MS, LEASE_EVENT_KINDS, type CounterKind, type LifetimeTotals } from "../types";

const COUNTER_KINDS: readonly CounterKind[] = [...LEASE_EVENT_KINDS, "renewed"];
const HISTOGRAM_FIELD = /^([a-z_]+):h(\d+)$/;

export function emptyLifetimeTotals(): LifetimeTotals {
  return {
    counts: Object.fromEntries(COUNTER_KINDS.map((k) => [k, 0])) as Record<CounterKind, number>,
    holdHistogram: new Array<number>(HOLD_HISTOGRAM_BOUNDS_MS.length + 1).fill(0),
    holdMsSum: 0,
  };
}

/**
 * Adds one bucket's `totals` hash (`<ns>:{b<n>}:totals`, no TTL) to `into`. The scripts count
 * each event there under the same field as in the minute hash: its kind, or `<kind>:h<bucket>`
 * for a terminal event (its kind and hold bucket in one field), plus `holdSum`. Namespaces
 * written before hold buckets were kept there have plain `released`/`expired`/`force_released`
 * fields: those count for their kind but, their hold unknown, not in the histogram.
 */
export function addTotalsHash(into: LifetimeTotals, hash: Readonly<Record<string, string>>): LifetimeTotals {
  for (const [field, raw] of Object.entries(hash)) {
    const value = Number(raw);
    if (!Number.isFinite(value)) continue;
    if (field === "holdSum") {
      into.holdMsSum += value;
      continue;
    }
    const held = HISTOGRAM_FIELD.exec(field);
    const kind = (held ? held[1] : field) as CounterKind;
    if (!(kind in into.counts)) continue;
    into.counts[kind] += value;
    if (held) {
      const index = Number(held[2]);
      if (index < into.holdHistogram.length) into.holdHistogram[index] = (into.holdHistogram[index] ?? 0) + value;
    }
  }
  return into;
}
