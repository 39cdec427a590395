import { expect, test as setup } from "@playwright/test";
import { waitForWorkloadData } from "./control";

/**
 * Once, before any spec: wait until the workload has written every kind of event
 * the specs read (a crashed holder's expiry takes its TTL plus a sweep). After
 * this, a page that needs data has it on its first render, so specs wait for the
 * page (DATA_TIMEOUT_MS), never for the workload.
 */
const WORKLOAD_DATA_TIMEOUT_MS = 60_000;

setup("the workload has produced data in every store", async () => {
  setup.setTimeout(WORKLOAD_DATA_TIMEOUT_MS + 15_000);
  const ready = await waitForWorkloadData(WORKLOAD_DATA_TIMEOUT_MS);
  expect(ready.missing, `after ${ready.waitedMs} ms`).toEqual([]);
  console.log(`[e2e] workload data ready after ${ready.waitedMs} ms`);
});
