import { HOLD_HISTOGRAM_BOUNDS_MS, LEASE_EVENT_KINDS, type CounterKind, type LifetimeTotals } from "../types";

const COUNTER_KINDS: readonly CounterKind[] = [...LEASE_EVENT_KINDS, "renewed"];
const HISTOGRAM_FIELD = /^([a-z_]+):h(\d+)$/;
/** `hold:h<n>`: a histogram bucket only (the kind is counted in a field of its own). */
const HOLD_FIELD_PREFIX = "hold";

export function emptyLifetimeTotals(): LifetimeTotals {
  return {
    counts: Object.fromEntries(COUNTER_KINDS.map((k) => [k, 0])) as Record<CounterKind, number>,
    holdHistogram: new Array<number>(HOLD_HISTOGRAM_BOUNDS_MS.length + 1).fill(0),
    holdMsSum: 0,
    releaseFailures: { not_owner: 0, expired: 0 },
  };
}

/**
 * Adds one bucket's `totals` hash (`<ns>:{b<n>}:totals`, no TTL) to `into`. Fields: a kind's
 * count under its name (acquired, released, expired, force_released and renewed by the scripts
 * on the hot path; the other kinds by the projector), `hold:h<bucket>` for the hold histogram
 * and `holdSum` (the projector, see projector.ts). Namespaces written before the lean write path
 * may also hold `<kind>:h<bucket>` fields: each counts for its kind and its hold bucket at once.
 * `release_refused:<reason>` counts refused releases (the release script, on that branch only).
 */
export function addTotalsHash(into: LifetimeTotals, hash: Readonly<Record<string, string>>): LifetimeTotals {
  for (const [field, raw] of Object.entries(hash)) {
    const value = Number(raw);
    if (!Number.isFinite(value)) continue;
    if (field === "release_refused:not_owner" || field === "release_refused:expired") {
      into.releaseFailures[field === "release_refused:expired" ? "expired" : "not_owner"] += value;
      continue;
    }
    if (field === "holdSum") {
      into.holdMsSum += value;
      continue;
    }
    const held = HISTOGRAM_FIELD.exec(field);
    if (held && held[1] === HOLD_FIELD_PREFIX) {
      const index = Number(held[2]);
      if (index < into.holdHistogram.length) into.holdHistogram[index] = (into.holdHistogram[index] ?? 0) + value;
      continue;
    }
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
