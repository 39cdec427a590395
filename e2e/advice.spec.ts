/**
 * TTL advice and renewal slack against the e2e stack: real stores fed by the
 * workload generator (well-behaved, slow and crashing holders), a signed-in operator.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";
import { PG_STORE, REDIS_STORE } from "./support/harness";

/** The slack panel loads after the page (its own live query); as long as the console specs give live data. */
const DATA_TIMEOUT_MS = 15_000;

test("the advice page has a row per store and prefix group, each saying why", async ({ page }) => {
  await page.goto("/");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "TTL advice" }).click();
  await expect(page).toHaveURL(/\/advice$/);
  await expect(page.getByRole("heading", { name: "TTL advice" })).toBeVisible();

  const table = page.getByRole("table", { name: "TTL advice per prefix group" });
  await expect(table).toBeVisible();
  for (const store of [PG_STORE, REDIS_STORE]) {
    const rows = table.getByRole("row").filter({ has: page.getByRole("cell", { name: store, exact: true }) });
    await expect(rows.first(), store).toBeVisible();
  }
  // Every advice row is followed by its one-sentence reason.
  const reasons = table.getByRole("cell").filter({ hasText: /^Why: (Keep|Lengthen|No renewals|\d+ renewals were refused)/ });
  await expect(reasons.first()).toBeVisible();
  // The workload's holders renew: some group has measured slack, and its advice is keep or lengthen.
  await expect(table.getByRole("img", { name: /^Renewal slack: [1-9][\d,]* renewals/ }).first()).toBeVisible();
  await expect(table.getByText(/^(keep|lengthen)$/).first()).toBeVisible();

  // The filters live in the URL; a prefix nothing matches says what to do.
  await page.getByRole("textbox", { name: "Prefix" }).fill("no-such-prefix-anywhere");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/prefix=no-such-prefix-anywhere/);
  await expect(page.getByText("Nothing to advise on in this window")).toBeVisible();
});

test("the advice page passes an accessibility scan", async ({ page }) => {
  await page.goto(`/advice?store=${PG_STORE}&window=15m`);
  await expect(page.getByRole("heading", { name: "TTL advice" })).toBeVisible();
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
});

test("a bad advice parameter is explained", async ({ page }) => {
  await page.goto("/advice?window=3y");
  await expect(page.getByRole("alert").filter({ hasText: "Can’t show TTL advice" })).toContainText("The window parameter must be one of 15m, 1h, 6h, 24h, 7d, custom.");
});

test("the overview shows the renewal-slack distribution and close calls", async ({ page }) => {
  await page.goto("/?window=1h");
  const panel = page.getByRole("region", { name: /^Renewal slack/ });
  await expect(panel.getByRole("img", { name: /^Renewal slack: [1-9][\d,]* renewals, [\d,]+ close calls/ })).toBeVisible({ timeout: DATA_TIMEOUT_MS });
  await expect(panel.getByText(/close calls$/)).toBeVisible();
});

for (const colorScheme of ["light", "dark"] as const) {
  test(`the advice table fits 1280×800 to its last column (${colorScheme})`, async ({ page }, testInfo) => {
    await page.emulateMedia({ colorScheme });
    await page.goto("/advice");
    const table = page.getByRole("table", { name: "TTL advice per prefix group" });
    await expect(table.getByText(/^(keep|lengthen|no data)$/).first()).toBeVisible({ timeout: DATA_TIMEOUT_MS });
    const region = page.getByRole("region", { name: "TTL advice per prefix group" });
    const { scrollWidth, clientWidth } = await region.evaluate((el) => ({ scrollWidth: el.scrollWidth, clientWidth: el.clientWidth }));
    expect(scrollWidth, "the table scrolls sideways").toBeLessThanOrEqual(clientWidth + 1);
    // The last column is on screen, not behind the region's scroll.
    const last = await table.getByRole("columnheader", { name: "Advice" }).boundingBox();
    const box = await region.boundingBox();
    expect(last!.x + last!.width).toBeLessThanOrEqual(box!.x + box!.width + 1);
    expect(await page.evaluate(() => document.documentElement.scrollWidth), "the page scrolls sideways").toBeLessThanOrEqual(1280);
    await page.screenshot({ path: testInfo.outputPath(`advice-${colorScheme}.png`) });
  });
}
