import { beforeAll, describe, expect, it } from "vitest";
import type { LeaseStore } from "@leasewatch/lease";
import { createRandom } from "@leasewatch/lease/testing";
import { setUpStoreFixture } from "@/test/support/store-suite";
import { generateViewerRequests, STACK_TRACE } from "@/lib/console/testing/viewer-requests";

/**
 * 500 viewer requests built from the parameters the read routes accept, with valid,
 * valid-ish and hostile values (testing/viewer-requests.ts, shared with the console
 * bench), through the same edge as the routes (respondWithRead) against a real Postgres and a real Redis store at test volume.
 * None may be a 5xx or carry a stack trace. The slowest is printed, not asserted.
 * (The audit log's reads live in lib/audit; its parameters are fuzzed by audit-params.test.ts.)
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261126);
const REQUESTS = 500;

describe("viewer request fuzz", () => {
  const pgFixture = setUpStoreFixture("postgres", { name: "pg-fuzz" });
  const redisFixture = setUpStoreFixture("redis", { name: "redis-fuzz" });
  const stores: LeaseStore[] = [];

  beforeAll(async () => {
    stores.push(pgFixture.store, redisFixture.store);
    for (const store of stores) {
      for (let i = 0; i < 30; i++) {
        const got = await store.acquire({ resource: `jobs:${i % 7}:${i}`, owner: `w${i % 3}`, task: `t${i % 4}`, ttlMs: 60_000 });
        if (got.acquired && i % 2 === 0) await store.release({ resource: `jobs:${i % 7}:${i}`, leaseId: got.lease.leaseId });
      }
    }
  }, 60_000);

  it(`${REQUESTS} requests (seed ${SEED}): never a 5xx, never a stack trace`, async () => {
    const random = createRandom(SEED);
    const entries = stores.map((store) => ({ store }));
    const statuses = new Map<number, number>();
    let slowest = { ms: 0, what: "" };
    let i = 0;
    for (const request of generateViewerRequests(random, REQUESTS, { entries }, { storeNames: ["pg-fuzz", "redis-fuzz"] })) {
      const started = performance.now();
      const response = await request.read();
      const ms = performance.now() - started;
      if (ms > slowest.ms) slowest = { ms, what: request.what.slice(0, 200) };
      const body = await response.text();
      const what = `request ${i++} (seed ${SEED}) ${request.what.slice(0, 300)} → ${response.status} ${body.slice(0, 300)}`;
      expect(response.status, what).toBeLessThan(500);
      expect(body, what).not.toMatch(STACK_TRACE);
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    }
    console.log(`viewer fuzz: ${REQUESTS} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}, slowest ${Math.round(slowest.ms)} ms (${slowest.what})`);
    // Both kinds of answer were exercised: accepted reads and refused parameters.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
  }, 300_000);
});
