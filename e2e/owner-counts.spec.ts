/**
 * The owner page's counts: past what it reads per store they say "at least" and what they
 * cover, never a number that looks exact. The test records more lost leases for an owner
 * of its own than the page counts per store.
 */
import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import type { LeaseStore } from "@leasewatch/lease";
import { PG_STORE } from "./support/harness";
import { openStackStore } from "./support/control";

/** One more than the owner page counts per store (TROUBLE_COUNT_LIMIT in lib/console/owners/get-owner.ts). */
const LOST = 5_001;

let store: LeaseStore;

test.beforeAll(async () => void (store = await openStackStore()));
test.afterAll(() => store?.close());

test("an owner with more lost leases than the page counts says 'at least' and what the count covers", async ({ page }) => {
  test.setTimeout(120_000);
  const tag = randomBytes(4).toString("hex");
  const owner = `e2e-lossy-${tag}`;
  for (let i = 0; i < LOST; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, LOST - i) }, (_, j) =>
        store.reportLost({ resource: `e2e-lost-${tag}:r${i + j}`, leaseId: `lease-${tag}-${i + j}`, owner, task: "t", fencingToken: String(i + j + 1), reason: "not_owner" }),
      ),
    );
  }

  await page.goto(`/owners/${owner}?store=${PG_STORE}`);
  const cover = page.getByTestId("owner-count-cover");
  await expect(cover).toHaveText("— counted over the newest 5,000 of these events per store");
  await expect(page.getByText(/at least 5,000 lost leases/)).toBeVisible();
  // The list shows the newest 50 and says so, with the way to all of them.
  await expect(page.getByTestId("owner-troubles-shown")).toContainText("The newest 50 per store are listed (50 of at least 5,000)");
  const shots = process.env.SCREENSHOT_DIR;
  if (shots) {
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: `${shots}/owner-capped-count-${scheme}.png` });
    }
    await page.emulateMedia({ colorScheme: "light" });
  }
});
