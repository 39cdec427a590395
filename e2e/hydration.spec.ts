/**
 * Pages whose scripts arrive late still hydrate onto the server's HTML. A page hydrated after
 * its data went stale (a slow phone, a busy laptop) already has its first refetch pending; if
 * it rendered anything different from the HTML, React would rebuild the page, and a reader who
 * had started tabbing through it would lose their place.
 */
import { expect, test } from "@playwright/test";

/** Longer than the console's 2 s staleTime: the data is stale by the time the page hydrates. */
const SCRIPT_DELAY_MS = 3_000;

for (const path of ["/locks", "/events", "/audit"]) {
  test(`${path} hydrates without a mismatch when its scripts arrive ${SCRIPT_DELAY_MS / 1000} s late`, async ({ page }) => {
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.route("**/_next/static/chunks/**/*.js", async (route) => {
      await new Promise((resolve) => setTimeout(resolve, SCRIPT_DELAY_MS));
      await route.continue();
    });
    await page.goto(path);
    // The refresh picker is enabled once React runs in the page.
    await expect(page.getByRole("combobox", { name: "Refresh" })).toBeEnabled({ timeout: 30_000 });
    // Let a refetch begin and end: a mismatch is reported while hydrating, before either.
    await expect(page.getByRole("button", { name: "refresh now" })).toBeVisible({ timeout: 30_000 });
    expect(errors).toEqual([]);
  });
}
