/**
 * Resource names are full of underscores (`tenant_17:…`); a link underline drawn close to the
 * text hides them, so "tenant_17" reads "tenant 17". On the past view the resource links sit
 * far enough below the baseline for the underscore to show, and the underline still skips ink.
 */
import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import type { Lease, LeaseStore } from "@leasewatch/lease";
import { openStackStore } from "./support/control";

let store: LeaseStore;
let lease: Lease;

test.beforeAll(async () => {
  store = await openStackStore();
  const resource = `tenant_17:e2e_underline_${randomBytes(4).toString("hex")}`;
  const acquired = await store.acquire({ resource, owner: "e2e_underline@e2e", task: "nightly_sync", ttlMs: 300_000 });
  if (!acquired.acquired) throw new Error(`expected to acquire ${resource}`);
  lease = acquired.lease;
});

test.afterAll(async () => {
  await store?.release({ resource: lease.resource, leaseId: lease.leaseId }).catch(() => {});
  await store?.close();
});

test("resource links on the past view leave room for underscores under their underline", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const at = new Date(lease.acquiredAt.getTime() + 1).toISOString();
  await page.goto(`/locks?prefix=${encodeURIComponent("tenant_1")}&at=${encodeURIComponent(at)}`);
  await expect(page.getByTestId("past-view-banner")).toBeVisible();
  const link = page.locator("tbody").getByRole("link", { name: lease.resource });
  await expect(link).toBeVisible();
  const style = await link.evaluate((el) => {
    const s = getComputedStyle(el);
    return { line: s.textDecorationLine, offset: s.textUnderlineOffset, fontSize: s.fontSize, skipInk: s.textDecorationSkipInk };
  });
  expect(style.line).toContain("underline");
  expect(style.skipInk).not.toBe("none");
  // An underscore sits about a quarter of an em below the baseline: the underline must clear it.
  expect(parseFloat(style.offset)).toBeGreaterThanOrEqual(0.25 * parseFloat(style.fontSize));

  const shots = process.env.SCREENSHOT_DIR;
  if (shots) {
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: `${shots}/past-view-underline-${scheme}.png` });
    }
    await page.emulateMedia({ colorScheme: "light" });
  }
});
