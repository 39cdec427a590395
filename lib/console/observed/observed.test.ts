import { describe, expect, it } from "vitest";
import { scopeOf, SCOPE_ALL } from "@/lib/auth/scope";
import { TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { setUpObservedHistory } from "@/test/support/observed-history";
import { getObservedLockHistory, getObservedView } from "@/lib/console/shared/observed";

const { pool, schema, env } = setUpObservedHistory({
  stores: [
    { name: "adv", kind: "pg-advisory", url: TEST_DATABASE_URL },
    { name: "never-sampled", kind: "redis-keys", url: "redis://127.0.0.1:6379", patterns: ["locks:*"] },
  ],
  intervalMs: 1000,
  samples: () => [
    {
      store: "adv",
      locks: [
        { resource: "tenant_1:billing", holder: "pid 10 · billing", waiters: 2 },
        { resource: "tenant_2:reports", holder: "pid 11 · reports", waiters: 0 },
      ],
    },
    {
      store: "adv",
      locks: [
        { resource: "tenant_1:billing", holder: "pid 12 · billing", waiters: 1 },
        { resource: "tenant_2:reports", holder: "pid 11 · reports", waiters: 0 },
      ],
    },
  ],
});

describe("getObservedView: what the observer last recorded, per observed store", () => {
  it("lists each store's locks with holder, waiters and since when the holder was recorded; a store never sampled says so", async () => {
    const view = await getObservedView({ scope: SCOPE_ALL, env, pool, schema: schema });
    expect(view.intervalMs).toBe(1000);
    const [adv, never] = view.stores;
    expect(adv).toMatchObject({ name: "adv", kind: "pg-advisory", stale: false, hidden: 0, error: null });
    expect(adv!.locks.map((l) => [l.resource, l.holder, l.waiters])).toEqual([
      ["tenant_1:billing", "pid 12 · billing", 1],
      ["tenant_2:reports", "pid 11 · reports", 0],
    ]);
    expect(adv!.locks[0]!.since).not.toBeNull();
    expect(never).toMatchObject({ name: "never-sampled", sampledAt: null, locks: [], error: null });
  });

  it("a scoped viewer sees only names under their prefixes, and never another tenant's history", async () => {
    const scope = scopeOf(["tenant_1:"]);
    const view = await getObservedView({ scope, env, pool, schema: schema });
    expect(view.stores[0]!.locks.map((l) => l.resource)).toEqual(["tenant_1:billing"]);
    expect(view.stores[0]!.hidden).toBe(1);
    expect(await getObservedLockHistory({ store: "adv", resource: "tenant_2:reports", scope, env, pool, schema: schema })).toBeNull();
    const own = await getObservedLockHistory({ store: "adv", resource: "tenant_1:billing", scope, env, pool, schema: schema });
    expect(own!.map((e) => e.kind)).toEqual(["holder_changed", "appeared"]);
  });

  it("a last sample older than three intervals reads as stale", async () => {
    await pool.query(`UPDATE "${schema}".observed_state SET sampled_at = now() - interval '10 seconds'`);
    const view = await getObservedView({ scope: SCOPE_ALL, env, pool, schema: schema });
    expect(view.stores[0]!.stale).toBe(true);
  });

  it("an unknown store or bad configuration gives a clear error", async () => {
    expect(await getObservedLockHistory({ store: "nope", resource: "x", scope: SCOPE_ALL, env, pool, schema: schema })).toBeNull();
    await expect(getObservedView({ scope: SCOPE_ALL, env: { LEASEWATCH_OBSERVED: '[{"name":"x","kind":"redis-keys","url":"redis://h","patterns":[]}]' } as unknown as NodeJS.ProcessEnv, pool })).rejects.toThrow(
      /LEASEWATCH_OBSERVED is invalid at 0.patterns: give at least one key pattern/,
    );
  });
});
