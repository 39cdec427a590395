/**
 * Live behaviour of the console in the browser: polling stops while the tab is
 * hidden and comes back when it shows; countdowns tick on their own. (A store
 * that hangs is in console.spec.ts, serially with the other store-outage test.)
 */
import { randomBytes } from "node:crypto";
import { expect, test, type Page } from "@playwright/test";
import { leaseHref } from "@/lib/console/shared/links";
import { LIVE_POLL_MS } from "@/lib/console/shared/fetch-view";
import { PG_STORE } from "./support/harness";
import { openStackStore } from "./support/control";

/** Sets what `document.visibilityState` reports and tells the page, as a browser does when a tab is switched. */
async function setVisibility(page: Page, state: "hidden" | "visible"): Promise<void> {
  await page.evaluate((s) => {
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => s });
    Object.defineProperty(document, "hidden", { configurable: true, get: () => s === "hidden" });
    document.dispatchEvent(new Event("visibilitychange"));
  }, state);
}

test("polling pauses while the tab is hidden and resumes when it shows", async ({ page }) => {
  // The page's timers run on a clock the test moves: minutes of polling in no time, and no race with a real interval.
  await page.clock.install();
  const apiCalls: string[] = [];
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith("/api/")) apiCalls.push(`${url.pathname}${url.search}`);
  });
  await page.goto("/locks");
  await expect(page.locator("tbody tr").first()).toBeVisible();

  // Visible: one poll interval brings a read of the leases. It must be over before the tab
  // hides: a poll still running would absorb the next one and hide a poll made while hidden.
  const polled = page.waitForResponse((response) => new URL(response.url()).pathname === "/api/leases");
  await page.clock.runFor(LIVE_POLL_MS + 500);
  await (await polled).finished();

  // Hidden: three intervals, one at a time, pass without a single API request.
  await setVisibility(page, "hidden");
  const hiddenFrom = apiCalls.length;
  for (let i = 0; i < 3; i++) await page.clock.runFor(LIVE_POLL_MS);
  // A request made after the hidden period: every request of that period has been seen before it.
  const marker = "/api/health?e2e-marker";
  await page.evaluate((url) => fetch(url).then(() => undefined), marker);
  await expect.poll(() => apiCalls.includes(marker)).toBe(true);
  expect(apiCalls.slice(hiddenFrom, apiCalls.indexOf(marker)), "API requests while hidden").toEqual([]);

  // Shown again: the page refreshes at once (its data is stale) and polls again.
  const shownFrom = apiCalls.length;
  await setVisibility(page, "visible");
  await expect.poll(() => apiCalls.slice(shownFrom).filter((c) => c.startsWith("/api/leases")).length).toBeGreaterThan(0);
});

test("countdowns tick on the lease page without a reload", async ({ page }) => {
  const store = await openStackStore();
  const resource = `e2e-live-${randomBytes(4).toString("hex")}:countdown`;
  const acquired = await store.acquire({ resource, owner: "e2e-live", task: "countdown", ttlMs: 5 * 60_000 });
  if (!acquired.acquired) throw new Error(`expected to acquire ${resource}`);
  try {
    await page.goto(leaseHref(PG_STORE, resource));
    const field = (label: string) => page.locator("dl > div").filter({ has: page.locator("dt", { hasText: new RegExp(`^${label}$`) }) }).locator("dd");
    const expires = field("Expires");
    await expect(expires).toHaveText(/^in 4 min \d+ s$/);
    const secondsLeft = async () => {
      const m = /^in (\d+) min (\d+) s$/.exec(((await expires.textContent()) ?? "").trim());
      return m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
    };
    const first = await secondsLeft();
    // Ticks once a second: within a few seconds it reads less, with no poll or reload needed.
    await expect.poll(secondsLeft, { timeout: 5_000 }).toBeLessThan(first);
    const heldFirst = await field("Held for").textContent();
    await expect(field("Held for")).not.toHaveText(heldFirst!, { timeout: 5_000 });
  } finally {
    await store.release({ resource, leaseId: acquired.lease.leaseId }).catch(() => {});
    await store.close();
  }
});
