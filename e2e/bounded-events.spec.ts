/**
 * A filter the Redis store could only answer by reading its streams is refused on the events
 * page itself: an inline problem that says which combination to use, and no table.
 */
import { expect, test } from "@playwright/test";
import { eventsHref } from "@/lib/console/shared/links";

test("events: a prefix alone over 7 days is refused with the combinations that are served", async ({ page }) => {
  await page.goto(eventsHref({ prefix: "tenant_1:", window: "7d" }));
  const problem = page.getByRole("alert").filter({ hasText: "Can’t show events." });
  await expect(problem).toContainText("On Redis a prefix filter alone reads the event streams, so it covers at most 24 h: use window=24h or shorter");
  await expect(problem).toContainText("(store redis-main)");
  await expect(page.getByRole("table")).toHaveCount(0);

  // The combination it suggests is served.
  await page.goto(eventsHref({ prefix: "tenant_1:", window: "24h" }));
  await expect(page.getByRole("heading", { name: "Events", exact: true })).toBeVisible();
  await expect(page.getByRole("alert").filter({ hasText: "Can’t show" })).toHaveCount(0);
});
