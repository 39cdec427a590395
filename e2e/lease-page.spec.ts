/**
 * The lease page across stores, against data the test writes itself through
 * the lease library (resources no one else uses): a resource held in one store
 * is named, and linked, from the same resource's page in the other; a resource
 * never seen is not shown as "free"; a free resource with history links to it.
 */
import { randomBytes } from "node:crypto";
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { eventsHref, leaseHref, locksHref } from "@/lib/console/shared/links";
import type { LeaseStore } from "@leasewatch/lease";
import { readStoreConfigs } from "./support/control";
import { PG_STORE, REDIS_STORE } from "./support/harness";
import { openStore } from "./support/stores";

const MINUTE = 60_000;

let pg: LeaseStore;
let redis: LeaseStore;

test.beforeAll(async () => {
  const configs = await readStoreConfigs();
  const open = (name: string) => {
    const config = configs.find((c) => c.name === name);
    if (!config) throw new Error(`the e2e stack has no store ${name}`);
    return openStore(config);
  };
  pg = open(PG_STORE);
  redis = open(REDIS_STORE);
});

test.afterAll(async () => {
  await Promise.allSettled([pg?.close(), redis?.close()]);
});

/** A resource name no other test or worker uses. */
function freshResource(what: string): string {
  return `e2e-lease-page-${randomBytes(4).toString("hex")}:${what}`;
}

/** The "Current lease" section. */
function current(page: Page) {
  return page.getByRole("region", { name: "Current lease" });
}

async function expectNoSeriousA11yViolations(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
}

test("a resource held in redis-main is named and linked from its page in pg-main, which never saw it", async ({ page }) => {
  const resource = freshResource("ledger");
  const owner = `owner-${randomBytes(3).toString("hex")}@e2e`;
  const held = await redis.acquire({ resource, owner, task: "run-1", ttlMs: 5 * MINUTE });
  if (!held.acquired) throw new Error(`expected to acquire ${resource} in ${REDIS_STORE}`);
  try {
    await page.goto(leaseHref(PG_STORE, resource));
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(resource);
    // Never seen in pg-main: not a "free" resource.
    await expect(current(page)).toContainText("Never seen in this store");
    await expect(current(page).getByText("free", { exact: true })).toHaveCount(0);
    await expect(page.getByText(/Also in another store:/)).toContainText(`${REDIS_STORE} (held now)`);
    await expectNoSeriousA11yViolations(page);

    await page.getByRole("link", { name: REDIS_STORE, exact: true }).and(page.locator(`a[href="${leaseHref(REDIS_STORE, resource)}"]`)).click();
    await expect(page).toHaveURL(leaseHref(REDIS_STORE, resource));
    const field = (label: string) => current(page).locator("dl > div").filter({ has: page.locator("dt", { hasText: new RegExp(`^${label}$`) }) }).locator("dd");
    await expect(field("Owner")).toHaveText(owner);
    await expect(field("Fencing token")).toHaveText(String(held.lease.fencingToken));
    // pg-main never saw it, so redis-main's page points nowhere else.
    await expect(page.getByText(/Also in (another store|other stores):/)).toHaveCount(0);
  } finally {
    await redis.release({ resource, leaseId: held.lease.leaseId }).catch(() => {});
  }
});

test("a free resource with history says free and links to its history; one never seen anywhere says so", async ({ page }) => {
  const resource = freshResource("export");
  const held = await pg.acquire({ resource, owner: "worker-1@e2e", task: "run-2", ttlMs: MINUTE });
  if (!held.acquired) throw new Error(`expected to acquire ${resource} in ${PG_STORE}`);
  expect((await pg.release({ resource, leaseId: held.lease.leaseId })).released).toBe(true);

  await page.goto(leaseHref(PG_STORE, resource));
  await expect(current(page).getByText("free", { exact: true })).toBeVisible();
  await expect(current(page)).not.toContainText("Never seen");
  const history = current(page).getByRole("link", { name: "See its history →" });
  await expect(history).toHaveAttribute("href", eventsHref({ store: PG_STORE, resource }));
  await history.click();
  await expect(page).toHaveURL(eventsHref({ store: PG_STORE, resource }));
  const rows = page.locator("tbody tr");
  await expect(rows).toHaveCount(2);
  await expect(rows.first()).toContainText("released");
  await expect(rows.nth(1)).toContainText("acquired");

  const nowhere = freshResource("typo");
  await page.goto(leaseHref(PG_STORE, nowhere));
  await expect(current(page)).toContainText("Never seen in this store");
  await expect(current(page).getByText("free", { exact: true })).toHaveCount(0);
  await expect(page.getByText(/Also in (another store|other stores):/)).toHaveCount(0);
});

test("a lease link to a store that does not exist says so in a sentence, naming the stores that do", async ({ page }) => {
  await page.goto(leaseHref("nope", "tenant_1:ledger"));
  const notice = page.getByRole("alert").filter({ hasText: "Can’t show this lease." });
  await expect(notice).toContainText(`No store is called "nope". Known stores: ${PG_STORE}, ${REDIS_STORE}.`);
  await expect(notice).not.toContainText("URL parameter");
  await expect(notice.getByRole("link", { name: "start again without filters" })).toHaveAttribute("href", "/locks");
});

test("a lease whose name has '..' parts opens its own page from the leases list, not the page the dots point at", async ({ page }) => {
  const prefix = `tenant_1:e2e-dots-${randomBytes(4).toString("hex")}`;
  const resource = `${prefix}/../../audit`;
  const held = await pg.acquire({ resource, owner: "worker-dots@e2e", task: "run-3", ttlMs: 5 * MINUTE });
  if (!held.acquired) throw new Error(`expected to acquire ${resource} in ${PG_STORE}`);
  try {
    await page.goto(locksHref({ store: PG_STORE, prefix }));
    await page.getByRole("link", { name: resource, exact: true }).click();
    await expect(page).toHaveURL(leaseHref(PG_STORE, resource));
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(resource);
    await expect(current(page)).toContainText("worker-dots@e2e");
  } finally {
    await pg.release({ resource, leaseId: held.lease.leaseId }).catch(() => {});
  }
});
