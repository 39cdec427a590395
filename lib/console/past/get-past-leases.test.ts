import { beforeAll, describe, expect, it } from "vitest";
import type { RedisLeaseStore } from "@leasewatch/lease";
import { setUpStoreFixture } from "@/test/support/store-suite";
import { getPastLeasesFromSearch } from "./get-past-leases";

/**
 * `/locks?at=` on a Redis store whose prefix read stops at its read budget: the view names the
 * store as partial (the page says so above the table) and lists only holders that were real.
 */
const fixture = setUpStoreFixture("redis", { name: "redis-past", options: { buckets: 2 } });
let tiny: RedisLeaseStore;
let at: string;
const rare: string[] = [];

beforeAll(async () => {
  tiny = fixture.open({ name: "redis-past-tiny", options: { buckets: 2, readKeyBudget: 60 } });
  for (let i = 0; i < 120; i++) await fixture.store.acquire({ resource: `billing:run:${i}`, owner: "scheduler", task: "nightly", ttlMs: 60_000 });
  for (let i = 0; i < 2; i++) {
    const got = await fixture.store.acquire({ resource: `billing:manual:${i}`, owner: "oncall", task: "rerun", ttlMs: 60_000 });
    if (got.acquired) rare.push(got.lease.resource);
  }
  await fixture.store.project();
  // An instant just past (the store refuses one at or after its own clock's millisecond as "future").
  await new Promise((r) => setTimeout(r, 5));
  at = new Date(Date.now() - 2).toISOString();
}, 60_000);

describe("the past view on a read budget", () => {
  it("marks a store whose prefix read stopped at its budget as partial, and lists no one who was not holding", async () => {
    const search = new URLSearchParams({ at, prefix: "billing:", owner: "oncall" });
    const cut = await getPastLeasesFromSearch(search, { entries: [{ store: tiny }] });
    if (!cut.ok) throw new Error(cut.problem.message);
    const [outcome] = cut.view.stores;
    expect(outcome?.ok && outcome.data.partial).toEqual({ reason: "read_budget", examined: expect.any(Number) });
    expect(cut.view.items.every((h) => rare.includes(h.resource))).toBe(true);

    const whole = await getPastLeasesFromSearch(search, { entries: [{ store: fixture.store }] });
    if (!whole.ok) throw new Error(whole.problem.message);
    expect(whole.view.stores[0]?.ok && whole.view.stores[0].data.partial).toBeUndefined();
    expect(whole.view.items.map((h) => h.resource).sort()).toEqual([...rare].sort());
  });
});
