/**
 * The overview narrowed to a prefix: typing one narrows the tiles and the
 * charts to data the test wrote itself under a prefix no one else uses, the
 * URL carries `prefix=`, drill-down links keep it, and "×" removes it. Over 7
 * days the same numbers come from the rollups per prefix group; a prefix they
 * cannot answer is "not counted" in place.
 */
import { randomBytes } from "node:crypto";
import { expect, test, type Page } from "@playwright/test";
import type { LeaseStore } from "@leasewatch/lease";
import { PG_STORE } from "./support/harness";
import { openStackStore } from "./support/control";

const MINUTE = 60_000;

let store: LeaseStore;

test.beforeAll(async () => void (store = await openStackStore()));
test.afterAll(() => store?.close());

test("typing a prefix narrows the tiles and charts, and links keep it", async ({ page }) => {
  const prefix = `e2e-prefix-${randomBytes(4).toString("hex")}`;
  // Three leases under the prefix, two refused acquires on one of them, one release.
  const held = [];
  for (const name of ["job:a", "job:b", "sync:c"]) {
    const result = await store.acquire({ resource: `${prefix}:${name}`, owner: "e2e-holder", task: "t", ttlMs: 5 * MINUTE });
    if (!result.acquired) throw new Error(`expected to acquire ${prefix}:${name}`);
    held.push(result.lease);
  }
  for (let i = 0; i < 2; i++) await store.acquire({ resource: `${prefix}:job:a`, owner: "e2e-waiter", task: "t", ttlMs: 5 * MINUTE });
  await store.release({ resource: held[2]!.resource, leaseId: held[2]!.leaseId });

  await page.goto(`/?window=15m&store=${PG_STORE}`);
  const contention = page.getByRole("link", { name: /^Contention rate: / });
  await expect(contention).toBeVisible();

  const field = page.getByRole("searchbox", { name: "Prefix", exact: true });
  await field.fill(prefix);
  await field.press("Enter");

  await expect(page).toHaveURL(new RegExp(`[?&]prefix=${prefix}(&|$)`));
  await expect(page.getByRole("heading", { level: 1 })).toContainText(`Overview of ${prefix}`);
  // Tiles: exactly what the test wrote (the workload never writes under this prefix).
  await expect(page.getByText("2 failed of 5 attempts", { exact: true })).toBeVisible();
  await expect(page.getByText("0 expired · 1 released", { exact: true })).toBeVisible();
  await expect(page.getByRole("link", { name: "Active leases: 2", exact: true })).toBeVisible();
  // Charts: the contention chart's only series is the prefix's own group.
  const chart = page.locator("figure").filter({ has: page.getByRole("heading", { name: "Contention over time", exact: true }) });
  await expect(chart.getByRole("button", { name: `${prefix}:job`, exact: true })).toBeVisible();
  await expect(chart.getByRole("button")).toHaveCount(1);
  await expect(page.getByRole("table", { name: "Most contended prefixes" }).getByRole("row")).toHaveCount(2);

  // A drill-down link keeps the prefix (and the window and store).
  await expect(contention).toHaveAttribute("href", new RegExp(`prefix=${prefix}`));
  await contention.click();
  await expect(page).toHaveURL(/\/events\?/);
  const url = new URL(page.url());
  expect(url.searchParams.get("prefix")).toBe(prefix);
  expect(url.searchParams.get("kind")).toBe("contended");
  expect(url.searchParams.get("window")).toBe("15m");
  expect(url.searchParams.get("store")).toBe(PG_STORE);

  // Back on the narrowed overview, "×" removes the prefix by keyboard.
  await page.goBack();
  await expect(page.getByRole("searchbox", { name: "Prefix", exact: true })).toHaveValue(prefix);
  await page.getByRole("button", { name: `Remove the prefix filter ${prefix}` }).focus();
  await page.keyboard.press("Enter");
  await expect(page).not.toHaveURL(/prefix=/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Overview");
  await expect(page.getByRole("searchbox", { name: "Prefix", exact: true })).toHaveValue("");
});

test("a prefix over 7 days is counted from the rollups, and one it cannot count says so in place", async ({ page }) => {
  const prefix = `e2e-week-${randomBytes(4).toString("hex")}`;
  const held = await store.acquire({ resource: `${prefix}:job:a`, owner: "e2e-holder", task: "t", ttlMs: 5 * MINUTE });
  if (!held.acquired) throw new Error("expected to acquire");
  for (let i = 0; i < 3; i++) await store.acquire({ resource: `${prefix}:job:a`, owner: "e2e-waiter", task: "t", ttlMs: 5 * MINUTE });

  await page.goto(`/?window=7d&store=${PG_STORE}&prefix=${prefix}`);
  await expect(page.getByText("counted from hourly rollups per prefix")).toBeVisible();
  // The window asked for is kept.
  await expect(page.getByRole("button", { name: "7d", exact: true, pressed: true })).toBeVisible();
  await expect(page.getByText("3 failed of 4 attempts", { exact: true })).toBeVisible();
  await expect(page.getByRole("link", { name: "Active leases: 1", exact: true })).toBeVisible();
  await screenshots(page, "overview-7d-prefix");

  // Deeper than the prefix groups over 7 days: not counted, with the reason — no zeros, no "down".
  await page.goto(`/?window=7d&store=${PG_STORE}&prefix=${prefix}:job:a`);
  const notCounted = page.getByTestId("not-counted");
  await expect(notCounted).toContainText("this is not a count of zero");
  await expect(notCounted).toContainText("choose window=24h or shorter, or a shorter prefix");
  await expect(page.getByRole("link", { name: /^Contention rate: / })).toHaveCount(0);
  await expect(page.getByText("No failed acquires in this window")).toHaveCount(0);
  const row = page.getByRole("table", { name: "Per store, over the window" }).getByRole("row").filter({ hasText: PG_STORE });
  await expect(row).toContainText("not counted");
  await expect(row).not.toContainText("down");
  await screenshots(page, "overview-7d-prefix-not-counted");
});

/** With SCREENSHOT_DIR set: the page in light and dark, for a person to look at. */
async function screenshots(page: Page, name: string): Promise<void> {
  const shots = process.env.SCREENSHOT_DIR;
  if (!shots) return;
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: `${shots}/${name}-${scheme}.png` });
  }
  await page.emulateMedia({ colorScheme: "light" });
}
