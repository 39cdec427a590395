/**
 * The console's pages against the e2e stack: real Postgres and Redis stores fed
 * by the workload generator, the production build, a signed-in operator.
 * Serial: the last tests pause the Redis store (a throwaway server), then stop and restart it;
 * tagged @store-outage, they run in a project of their own after every other test (playwright.config.ts).
 */
import { randomBytes } from "node:crypto";
import { expect, test, type Page } from "@playwright/test";
import { STORE_TIMEOUT_MS } from "@/lib/console/shared/fan-out";
import { pauseLiveUpdates, scopedAxe } from "./support/axe";
import { openStackStore, pauseRedisStore, resumeRedisStore, startRedisStore, stopRedisStore } from "./support/control";
import { PG_STORE, REDIS_STORE } from "./support/harness";

test.describe.configure({ mode: "serial" });

/**
 * How long a page may take to show live data that is already in the stores (the
 * setup project waited for the workload): a server render, or the next live poll.
 * Well inside the test timeout (playwright.config.ts), with room for an axe scan.
 */
const DATA_TIMEOUT_MS = 15_000;

/** The link to a lease page in an events row (owner, task, store and token link to lists). */
const RESOURCE_LINK = 'a[href^="/locks/"]';

/** Each test scans last, so the page may stop polling for it. */
async function expectNoSeriousA11yViolations(page: Page): Promise<void> {
  await pauseLiveUpdates(page);
  const results = await scopedAxe(page).analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
}

function chart(page: Page, title: string) {
  return page.locator("figure").filter({ has: page.locator("figcaption", { hasText: title }) });
}

test("the overview draws every chart from real data", async ({ page }) => {
  await page.goto("/?window=15m");
  await expect(page.getByRole("heading", { name: "Overview" })).toBeVisible();
  // Series shapes, not axes or legend icons: each needs real events in the window.
  const series: Array<[string, string]> = [
    ["Contention over time", ".recharts-area-area"],
    ["Hold duration", ".recharts-line-curve"],
    ["Expired-to-released ratio", ".recharts-line-curve"],
    ["Active leases", ".recharts-area-area"],
    ["Hold duration histogram", ".recharts-bar-rectangle path"],
  ];
  // No reloads: the page polls its data while visible, and each series appears with
  // the first answer that has it (the workload's events are in the stores already).
  for (const [title, selector] of series) {
    await expect(chart(page, title).locator(selector).first(), title).toHaveAttribute("d", /\d/, { timeout: DATA_TIMEOUT_MS });
  }
  // The tiles agree there is data: acquisitions happened in the window.
  const acquisitions = page.locator("dl > div").filter({ hasText: "Acquisitions / min" }).locator("dd").first();
  await expect(acquisitions).not.toHaveText("0");

  // Window and depth live in the URL.
  await page.getByRole("button", { name: "1h" }).click();
  await expect(page).toHaveURL(/window=1h/);
  await page.getByLabel("Prefix depth").selectOption("1");
  await expect(page).toHaveURL(/depth=1/);
  await expect(chart(page, "Contention over time")).toContainText("depth 1");
});

test("a bad URL parameter is explained, not a crash", async ({ page }) => {
  await page.goto("/?window=2h");
  const notice = page.getByRole("alert").filter({ hasText: "Can’t show the overview" });
  await expect(notice).toContainText("window");
  await expect(notice).toContainText("must be one of 15m, 1h, 6h, 24h, 7d, 30d, custom");
  await expect(notice.getByRole("link", { name: "start again without filters" })).toHaveAttribute("href", "/");
  const api = await page.request.get("/api/leases?state=zombie");
  expect(api.status()).toBe(400);
  expect(((await api.json()) as { error: string }).error).toMatch(/Bad parameter "state"/);
});

test("a prefix in the URL narrows the leases list", async ({ page }) => {
  // Leases under a prefix nobody else uses, held through the test: the workload's leases come and
  // go, so a prefix read off its list can have none left by the time the filtered page loads.
  const store = await openStackStore();
  const prefix = `e2e-prefix-${randomBytes(4).toString("hex")}:`;
  const resources = [`${prefix}ledger`, `${prefix}payroll`];
  const leaseIds: string[] = [];
  try {
    for (const resource of resources) {
      const r = await store.acquire({ resource, owner: "e2e-prefix", task: "narrow", ttlMs: 5 * 60_000 });
      if (!r.acquired) throw new Error(`expected to acquire ${resource}`);
      leaseIds.push(r.lease.leaseId);
    }
    const names = page.locator("tbody tr td:first-child");
    const shownNames = async () => (await names.allTextContents()).map((t) => t.trim());
    await page.goto("/locks");
    await expect(names.first()).toBeVisible({ timeout: DATA_TIMEOUT_MS });
    expect((await shownNames()).some((n) => !n.startsWith(prefix)), "the unfiltered list has other prefixes too").toBe(true);

    await page.goto(`/locks?prefix=${encodeURIComponent(prefix)}`);
    await expect(page.getByLabel("Resource prefix")).toHaveValue(prefix);
    await expect(names).toHaveCount(resources.length, { timeout: DATA_TIMEOUT_MS });
    const shown = await shownNames();
    for (const resource of resources) expect(shown.some((n) => n.startsWith(resource)), `${resource} is listed`).toBe(true);
  } finally {
    await Promise.all(resources.map((resource, i) => (leaseIds[i] ? store.release({ resource, leaseId: leaseIds[i] }) : null)));
    await store.close();
  }

  // A prefix nothing has gives an empty state that says what to do.
  await page.goto("/locks?prefix=no-such-prefix-e2e:");
  await expect(page.getByText("No lease matches these filters")).toBeVisible();
  await expect(page.getByRole("link", { name: "Clear the filters" })).toBeVisible();
  await expectNoSeriousA11yViolations(page);
});

test("a lease page shows its holders acquired → released and expired on the timeline", async ({ page }) => {
  // A resource with a released hold, found through the events page.
  await page.goto(`/events?kind=released&store=${PG_STORE}`);
  const link = page.locator("tbody tr").first().locator(RESOURCE_LINK);
  await expect(link).toBeVisible({ timeout: DATA_TIMEOUT_MS });
  // The events table is live: rows shift between polls, so read the link's name and address
  // in one step (two reads can straddle a poll and come from different rows) and follow it
  // rather than clicking a row that may have moved.
  const { resource, href } = await link.evaluate((a) => ({ resource: (a.textContent ?? "").trim(), href: a.getAttribute("href") ?? "" }));
  await page.goto(href);

  await expect(page.getByRole("heading", { level: 1 })).toHaveText(resource);
  const timeline = page.getByRole("list", { name: "Holders, oldest first" });
  await expect(timeline.locator('[data-ending="released"]').first()).toContainText("released after");
  await expect(page.getByRole("heading", { name: "Fencing tokens" })).toBeVisible();
  await expect(page.locator("section[aria-labelledby=events] tbody tr").first()).toBeVisible();

  // And one whose holder crashed: its hold ends "expired".
  await page.goto("/events?kind=expired");
  const expiredLink = page.locator("tbody tr").first().locator(RESOURCE_LINK);
  await expect(expiredLink).toBeVisible({ timeout: DATA_TIMEOUT_MS });
  await page.goto((await expiredLink.getAttribute("href"))!);
  await expect(page.getByRole("list", { name: "Holders, oldest first" }).locator('[data-ending="expired"]').first()).toContainText("expired after");
  await expectNoSeriousA11yViolations(page);
});

test("events filter by kind, in the URL", async ({ page }) => {
  await page.goto("/events");
  await page.getByRole("checkbox", { name: "contended" }).check();
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/kind=contended/);
  const kinds = page.locator("tbody tr td:nth-child(2)");
  await expect(kinds.first()).toBeVisible({ timeout: DATA_TIMEOUT_MS });
  expect(new Set((await kinds.allTextContents()).map((t) => t.trim()))).toEqual(new Set(["contended"]));
  await expect(page.locator("tbody tr").first()).toContainText("held by");
  await expectNoSeriousA11yViolations(page);
});

/** Tabs forward until the focused element matches `isTarget`; fails after `max` presses. */
async function tabTo(page: Page, isTarget: (el: { tag: string; text: string }) => boolean, max = 80): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    const focused = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      return el ? { tag: el.tagName.toLowerCase(), text: (el.textContent ?? "").trim() } : null;
    });
    if (focused && isTarget(focused)) return;
  }
  throw new Error(`no matching control within ${max} Tab presses`);
}

/** The focused element draws a focus indicator (outline or ring). */
async function expectVisibleFocus(page: Page): Promise<void> {
  const ring = await page.evaluate(() => {
    const style = getComputedStyle(document.activeElement!);
    return { outline: style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0, shadow: style.boxShadow !== "none" };
  });
  expect(ring.outline || ring.shadow, "the focused control shows where focus is").toBe(true);
}

test("sortable headers and overview controls work from the keyboard, with visible focus", async ({ page }) => {
  await page.goto("/locks");
  await expect(page.locator("tbody tr").first()).toBeVisible({ timeout: DATA_TIMEOUT_MS });
  await page.locator("body").focus();
  await tabTo(page, (el) => el.tag === "a" && el.text.startsWith("Held for"));
  await expectVisibleFocus(page);
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/sort=held_longest/);
  await expect(page.getByRole("columnheader", { name: /Held for/ })).toHaveAttribute("aria-sort", "descending");

  await page.goto("/?window=15m");
  await expect(page.getByRole("heading", { name: "Overview" })).toBeVisible();
  // The window toolbar is one tab stop (the chosen window); arrow keys move inside it.
  await tabTo(page, (el) => el.tag === "button" && el.text === "15m");
  for (let i = 0; i < 4; i++) await page.keyboard.press("ArrowRight");
  await expect(page.getByRole("button", { name: "7d" })).toBeFocused();
  await expectVisibleFocus(page);
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/window=7d/);
  await expect(page.getByRole("button", { name: "7d" })).toHaveAttribute("aria-pressed", "true");
});

for (const colorScheme of ["light", "dark"] as const) {
  // axe scans these pages in e2e/axe.spec.ts.
  test(`every page fits 1280×800 without clipped tables (${colorScheme})`, async ({ page }) => {
    test.setTimeout(120_000);
    await page.emulateMedia({ colorScheme });
    // A lease page with history, found through the events page.
    await page.goto("/events?kind=released");
    const link = page.locator("tbody tr").first().locator(RESOURCE_LINK);
    await expect(link).toBeVisible({ timeout: DATA_TIMEOUT_MS });
    const leasePath = (await link.getAttribute("href"))!;

    for (const path of ["/?window=15m", "/?window=7d", "/locks", "/locks?state=expired&window=1h", leasePath, "/events"]) {
      await page.goto(path);
      await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
      // The live lists must have rows, or there is nothing to clip.
      if (path === "/locks" || path === "/events") await expect(page.locator("tbody tr").first()).toBeVisible({ timeout: DATA_TIMEOUT_MS });
      const clipped = await page.evaluate(() =>
        [...document.querySelectorAll<HTMLElement>('[role="region"]')]
          .filter((region) => region.scrollWidth > region.clientWidth + 1)
          .map((region) => `${region.getAttribute("aria-label")}: ${region.scrollWidth}px in ${region.clientWidth}px`),
      );
      expect(clipped, `${path}: every column fits`).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), `${path} scrolls sideways`).toBeLessThanOrEqual(1280);
    }
  });
}

// The sign-in pages' axe scan is in e2e/axe.spec.ts.

test("with the Redis store hanging, pages still render and show it down within the read timeout @store-outage", async ({ page }) => {
  await page.goto(`/locks?store=${PG_STORE}`);
  await expect(page.locator("tbody tr").first()).toBeVisible({ timeout: DATA_TIMEOUT_MS });
  // SIGSTOP: connections stay open and nothing answers, unlike a stopped server that refuses at once.
  await pauseRedisStore();
  try {
    await page.goto("/locks");
    const downNotice = page.getByRole("status").filter({ hasText: "Store down:" });
    await expect(downNotice).toContainText(REDIS_STORE);
    // The page rendered while the store still hangs, so it did not wait for it: the console gave up
    // on a bound of its own and says which. (Wall-clock time on a loaded machine would prove nothing more.)
    const bound = Number(/no answer within (\d+) ms/.exec((await downNotice.textContent()) ?? "")?.[1]);
    expect(bound, "the notice names the bound the console stopped waiting at").toBeGreaterThan(0);
    expect(bound).toBeLessThanOrEqual(STORE_TIMEOUT_MS);
    await expect(page.locator("tbody tr td:nth-child(3)", { hasText: PG_STORE }).first()).toBeVisible();
    await expect(page.getByRole("banner").getByRole("list", { name: "Store health" }).getByText(`${REDIS_STORE} down`)).toBeVisible();

    await page.goto("/?window=15m");
    await expect(page.getByRole("row", { name: new RegExp(`${REDIS_STORE}.*down`) })).toBeVisible();
    await expect(page.getByRole("row", { name: new RegExp(`${PG_STORE}.*read`) })).toBeVisible();
  } finally {
    await resumeRedisStore();
  }
  await page.goto("/locks");
  await expect(page.getByText("Store down:")).toHaveCount(0, { timeout: 20_000 });
});

test("with the Redis store stopped, the banner names it and Postgres data stays @store-outage", async ({ page }) => {
  await page.goto(`/locks?store=${PG_STORE}`);
  await expect(page.locator("tbody tr").first()).toBeVisible({ timeout: DATA_TIMEOUT_MS });
  await stopRedisStore();
  try {
    await page.goto("/locks");
    await expect(page.getByText(`Store down:`)).toBeVisible({ timeout: 20_000 });
    await expect(page.getByRole("status").filter({ hasText: "Store down:" })).toContainText(REDIS_STORE);
    await expect(page.locator("li", { hasText: "Not shown:" })).toContainText(`${REDIS_STORE} (redis) could not be read`);
    await expect(page.locator("tbody tr td:nth-child(3)", { hasText: PG_STORE }).first()).toBeVisible({ timeout: DATA_TIMEOUT_MS });

    await page.goto("/?window=15m");
    await expect(page.getByRole("row", { name: new RegExp(`${REDIS_STORE}.*down`) })).toBeVisible();
    await expect(page.getByRole("row", { name: new RegExp(`${PG_STORE}.*read`) })).toBeVisible();
    await expect(chart(page, "Active leases").locator(".recharts-area-area")).toHaveCount(1);
  } finally {
    await startRedisStore();
  }
  await page.goto("/locks");
  await expect(page.getByText("Store down:")).toHaveCount(0, { timeout: 20_000 });
});
