/**
 * Observed stores on /api/metrics: per store and kind, the locks held, their waiters, the
 * oldest hold (since the observer first saw the holder) and the last sample's age, read from
 * what the observer recorded in a fresh history schema on real Postgres.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { scopeOf, SCOPE_ALL, type ViewerScope } from "@/lib/auth/scope";
import { TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { setUpObservedHistory } from "@/test/support/observed-history";
import { getMetricsText } from "./get-metrics-text";

const MIN = 60_000;
const { pool, schema, env } = setUpObservedHistory({
  stores: [
    { name: "adv", kind: "pg-advisory", url: TEST_DATABASE_URL },
    { name: "shed", kind: "shedlock", url: TEST_DATABASE_URL, table: "public.shedlock" },
    { name: "never-sampled", kind: "redis-keys", url: "redis://127.0.0.1:6379", patterns: ["locks:*"] },
  ],
  intervalMs: 5000,
  samples: () => {
    const now = Date.now();
    return [
      {
        store: "adv",
        at: new Date(now - 30 * MIN),
        locks: [
          { resource: "tenant_1:billing", holder: "pid 10 · billing", waiters: 0 },
          { resource: "tenant_2:reports", holder: "pid 11 · reports", waiters: 2 },
        ],
      },
      // Ten minutes ago: billing changed holder (its hold restarts), reports kept its holder with more waiters
      // (its hold does not restart), and a new lock appeared.
      {
        store: "adv",
        at: new Date(now - 10 * MIN),
        locks: [
          { resource: "tenant_1:billing", holder: "pid 12 · billing", waiters: 1 },
          { resource: "tenant_2:reports", holder: "pid 11 · reports", waiters: 3 },
          { resource: "tenant_1:export", holder: "pid 13 · export", waiters: 0 },
        ],
      },
      { store: "shed", at: new Date(now - MIN), locks: [] },
    ];
  },
});

async function scrape(scope: ViewerScope = SCOPE_ALL, from: pg.Pool = pool): Promise<string> {
  const { body } = await getMetricsText({ entries: [], scope, audit: null, config: { prefixDepth: 2, maxGroups: 20 }, observed: { env, pool: from, schema: schema } });
  return body;
}

/** Every sample of `name` as `store/kind` → value. */
function series(body: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of body.matchAll(new RegExp(`^${name}\\{store="([^"]+)",kind="([^"]+)"\\} (\\S+)$`, "gm"))) out.set(`${m[1]}/${m[2]}`, m[3] === "+Inf" ? Infinity : Number(m[3]));
  return out;
}

describe("observed stores on /api/metrics", () => {
  it("counts held locks and waiters per store, and never names a lock", async () => {
    const body = await scrape();
    expect(series(body, "leasewatch_observed_up")).toEqual(new Map([["adv/pg-advisory", 1], ["shed/shedlock", 1], ["never-sampled/redis-keys", 1]]));
    expect(series(body, "leasewatch_observed_locks_held")).toEqual(new Map([["adv/pg-advisory", 3], ["shed/shedlock", 0]]));
    expect(series(body, "leasewatch_observed_waiters")).toEqual(new Map([["adv/pg-advisory", 4], ["shed/shedlock", 0]]));
    expect(body).toMatch(/^leasewatch_observe_interval_seconds 5$/m);
    expect(body).not.toMatch(/tenant_|billing|reports/);
  });

  it("the oldest hold counts from when the current holder was first seen; waiters changing do not restart it", async () => {
    const body = await scrape();
    const oldest = series(body, "leasewatch_observed_oldest_hold_seconds");
    // reports: held by pid 11 since 30 minutes ago (billing's holder changed 10 minutes ago).
    expect(oldest.get("adv/pg-advisory")).toBeGreaterThanOrEqual(30 * 60);
    expect(oldest.get("adv/pg-advisory")).toBeLessThan(31 * 60);
    expect(series(body, "leasewatch_observed_oldest_blocking_hold_seconds").get("adv/pg-advisory")).toBe(oldest.get("adv/pg-advisory"));
    // Nothing held, nobody waiting: no oldest series rather than a zero that reads as "just taken".
    expect(oldest.has("shed/shedlock")).toBe(false);
  });

  it("says how old each store's last sample is; a store never sampled reads +Inf", async () => {
    const age = series(await scrape(), "leasewatch_observed_sample_age_seconds");
    expect(age.get("adv/pg-advisory")).toBeGreaterThanOrEqual(10 * 60);
    expect(age.get("adv/pg-advisory")).toBeLessThan(11 * 60);
    expect(age.get("shed/shedlock")).toBeGreaterThanOrEqual(60);
    expect(age.get("shed/shedlock")).toBeLessThan(2 * 60);
    expect(age.get("never-sampled/redis-keys")).toBe(Infinity);
  });

  it("within a scope, counts only locks under its prefixes", async () => {
    const body = await scrape(scopeOf(["tenant_1:"]));
    expect(series(body, "leasewatch_observed_locks_held").get("adv/pg-advisory")).toBe(2);
    expect(series(body, "leasewatch_observed_waiters").get("adv/pg-advisory")).toBe(1);
    // billing's holder (pid 12) and export were first seen 10 minutes ago; tenant_2's 30-minute hold is not counted.
    const oldest = series(body, "leasewatch_observed_oldest_hold_seconds").get("adv/pg-advisory")!;
    expect(oldest).toBeGreaterThanOrEqual(10 * 60);
    expect(oldest).toBeLessThan(11 * 60);
    expect(series(body, "leasewatch_observed_oldest_blocking_hold_seconds").get("adv/pg-advisory")).toBe(oldest);
  });

  it("a history database it cannot reach reports observed_up 0 and no figures", async () => {
    const down = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:1/none", max: 1, connectionTimeoutMillis: 1_000 });
    down.on("error", () => {});
    try {
      const body = await scrape(SCOPE_ALL, down);
      expect(series(body, "leasewatch_observed_up")).toEqual(new Map([["adv/pg-advisory", 0], ["shed/shedlock", 0], ["never-sampled/redis-keys", 0]]));
      expect(series(body, "leasewatch_observed_locks_held").size).toBe(0);
      expect(series(body, "leasewatch_observed_sample_age_seconds").size).toBe(0);
    } finally {
      await down.end();
    }
  });

  it("without observed stores configured, there are no observed series", async () => {
    const { body } = await getMetricsText({ entries: [], scope: SCOPE_ALL, audit: null, config: { prefixDepth: 2, maxGroups: 20 }, observed: { env: {} as NodeJS.ProcessEnv, pool, schema: schema } });
    expect(body).not.toMatch(/observ/);
  });
});
