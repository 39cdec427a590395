/**
 * The past view (`?at=`) against a history the test wrote itself, through the lease
 * library, into both stores of the e2e stack: at an instant inside the first hold the
 * leases page and the lease page show that holder (and how its hold ended later) under
 * a past-view banner; at the next holder's own millisecond, the next holder; before
 * the history, an explanation instead of an empty list.
 */
import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { leaseHref } from "@/lib/console/shared/links";
import type { Lease, LeaseStore } from "@leasewatch/lease";
import { readStoreConfigs } from "./support/control";
import { PG_STORE, REDIS_STORE } from "./support/harness";
import { openStore } from "./support/stores";

const MINUTE = 60_000;
const stores: LeaseStore[] = [];

test.beforeAll(async () => {
  for (const config of await readStoreConfigs()) stores.push(openStore(config));
});

test.afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
});

interface KnownHistory {
  prefix: string;
  first: Lease;
  firstEndedAt: number;
  second: Lease;
}

/** first holds the resource, releases it; second takes it and keeps it. */
async function writeHistory(store: LeaseStore): Promise<KnownHistory> {
  const tag = randomBytes(4).toString("hex");
  const prefix = `e2e-past-${tag}:`;
  const resource = `${prefix}ledger`;
  const first = await store.acquire({ resource, owner: `first-${tag}@e2e`, task: `task-1-${tag}`, ttlMs: 5 * MINUTE });
  if (!first.acquired) throw new Error(`expected to acquire ${resource}`);
  await new Promise((r) => setTimeout(r, 60));
  const released = await store.release({ resource, leaseId: first.lease.leaseId });
  if (!released.released) throw new Error("release failed");
  const second = await store.acquire({ resource, owner: `second-${tag}@e2e`, task: `task-2-${tag}`, ttlMs: 5 * MINUTE });
  if (!second.acquired) throw new Error(`expected to acquire ${resource} again`);
  return { prefix, first: first.lease, firstEndedAt: released.event.at.getTime(), second: second.lease };
}

for (const storeName of [PG_STORE, REDIS_STORE]) {
  test(`a past view of a known history on ${storeName} shows its holders then, under a past-view banner`, async ({ page }) => {
    const store = stores.find((s) => s.name === storeName)!;
    const h = await writeHistory(store);
    try {
      const during = new Date(Math.floor((h.first.acquiredAt.getTime() + h.firstEndedAt) / 2)).toISOString();
      await page.goto(`/locks?store=${storeName}&prefix=${encodeURIComponent(h.prefix)}&at=${encodeURIComponent(during)}`);
      const banner = page.getByTestId("past-view-banner");
      await expect(banner).toContainText("Past view, not live");
      await expect(banner).toContainText(during.replace("T", " ").replace("Z", ""));
      const rows = page.locator("tbody tr");
      await expect(rows).toHaveCount(1);
      const cells = rows.first().locator("td");
      // Store, Resource, Owner, Task, Token, Lease id, Held then, Acquired, Ended later
      await expect(cells.nth(0)).toHaveText(storeName);
      await expect(cells.nth(1)).toHaveText(h.first.resource);
      await expect(cells.nth(2)).toHaveText(h.first.owner);
      await expect(cells.nth(3)).toHaveText(h.first.task);
      await expect(cells.nth(4)).toHaveText(h.first.fencingToken);
      await expect(cells.nth(5).locator("span")).toHaveAttribute("title", h.first.leaseId);
      await expect(cells.nth(8)).toContainText("released");

      // The lease page at the same instant: the same holder, and the banner.
      await cells.nth(1).getByRole("link").click();
      await expect(page).toHaveURL(new RegExp(`\\?at=${encodeURIComponent(during).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
      await expect(page.getByTestId("past-view-banner")).toBeVisible();
      await expect(page.locator("tbody tr").first().locator("td").nth(2)).toHaveText(h.first.owner);
      await expect(page.getByTestId("timeline-instant").first()).toBeVisible();

      // At the second holder's own millisecond (the first had released by then): the second, still held.
      const next = h.second.acquiredAt.toISOString();
      await page.goto(`${leaseHref(storeName, h.second.resource)}?at=${encodeURIComponent(next)}`);
      const holder = page.locator("tbody tr").first().locator("td");
      await expect(holder.nth(2)).toHaveText(h.second.owner);
      await expect(holder.nth(4)).toHaveText(h.second.fencingToken);
      await expect(holder.nth(8)).toContainText("still held");

      // Back to now: the live list, without the banner.
      await page.goto(`/locks?store=${storeName}&prefix=${encodeURIComponent(h.prefix)}&at=${encodeURIComponent(during)}`);
      await page.getByRole("link", { name: "Back to now" }).click();
      await expect(page).not.toHaveURL(/at=/);
      await expect(page.getByTestId("past-view-banner")).toHaveCount(0);
      await expect(page.locator("tbody tr").first().locator("td").nth(3)).toHaveText(h.second.owner);
    } finally {
      await store.release({ resource: h.second.resource, leaseId: h.second.leaseId }).catch(() => {});
    }
  });
}

test("an instant before the retained history is explained, not shown as empty", async ({ page }) => {
  await page.goto(`/locks?at=2001-01-01T00:00:00Z`);
  await expect(page.getByTestId("past-view-banner")).toBeVisible();
  for (const name of [PG_STORE, REDIS_STORE]) {
    await expect(page.getByRole("status").filter({ hasText: `history on ${name} starts at` })).toContainText("this instant is before it");
  }
  await expect(page.getByText("Nothing was held at this instant")).toHaveCount(0);
});

test("Share on the overview copies a link with the window's absolute range and the instant", async ({ page }) => {
  const at = new Date(Date.now() - 10 * MINUTE).toISOString();
  await page.goto(`/?window=1h&at=${encodeURIComponent(at)}`);
  await expect(page.getByTestId("utc-range")).toContainText("UTC");
  await page.getByRole("button", { name: "Share" }).click();
  const link = new URL(await page.getByTestId("share-link").inputValue());
  expect(link.searchParams.get("window")).toBe("custom");
  expect(link.searchParams.get("at")).toBe(at);
  const from = Date.parse(link.searchParams.get("from")!);
  const to = Date.parse(link.searchParams.get("to")!);
  expect(to - from).toBeGreaterThanOrEqual(60 * MINUTE);
  expect(to - from).toBeLessThanOrEqual(60 * MINUTE + 1);
  // The shared link opens on the same window, as a custom one.
  await page.goto(link.pathname + link.search);
  await expect(page.getByTestId("utc-range")).toContainText(new Date(from).toISOString().replace("T", " ").replace("Z", ""));
});
