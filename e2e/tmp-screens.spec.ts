import { expect, test } from "@playwright/test";
for (const colorScheme of ["light", "dark"] as const) {
  test(`screens ${colorScheme}`, async ({ page }) => {
    test.setTimeout(120_000);
    await page.emulateMedia({ colorScheme });
    for (const w of ["1h", "24h", "7d"]) {
      await page.goto(`/?window=${w}`);
      await expect(page.locator("[data-chart] .recharts-surface").first()).toBeVisible({ timeout: 15_000 });
      await page.waitForTimeout(1500);
      await page.screenshot({ path: `/tmp/charts-shots/${w}-${colorScheme}.png` });
      await page.screenshot({ path: `/tmp/charts-shots/${w}-${colorScheme}-full.png`, fullPage: true });
    }
  });
}
