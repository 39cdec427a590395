/**
 * On call from a phone, and by keyboard alone.
 *
 * At 390×844 (a phone held upright) no page is wider than the screen, the whole
 * navigation is on it, and the force-release dialog opens inside it. By keyboard,
 * a stuck lease is reached from the overview's "overdue / lapsed now" tile and
 * force-released with Tab, Enter and the typing the form asks for; focus starts in
 * the reason and ends on the outcome with its audit link. Each overview chart is
 * one named Tab stop, and the leases page lets Tab skip its counts to the table.
 *
 * The stuck lease is pg-main's, under a prefix of this run: its holder "stopped
 * renewing" eight minutes ago (its renewal time is set back in the store's row), so
 * it is overdue by more than any of the workload's and comes first in the list.
 */
import { randomUUID } from "node:crypto";
import { expect, test, type Page } from "@playwright/test";
import { freshOperatorTest } from "./support/sign-in";
import pg from "pg";
import { leaseHref, locksHref } from "@/lib/console/shared/links";
import type { Lease } from "@leasewatch/lease";
import { getStackFacts } from "./support/control";
import { PG_STORE } from "./support/harness";
import { openStore } from "./support/stores";

test.describe.configure({ mode: "serial" });

const PHONE = { width: 390, height: 844 };
const NAV_LABELS = ["Overview", "Leases", "Events", "TTL advice", "Audit", "API tokens"];
const DATA_TIMEOUT_MS = 15_000;
const RUN = randomUUID().slice(0, 8);
const REASON = "holder stopped renewing, paged on call";

let pool: pg.Pool;
let schema: string;
let closeStore: () => Promise<void>;
let stuck: Lease;

test.beforeAll(async () => {
  const facts = await getStackFacts();
  const spec = facts.stores.find((s) => s.name === PG_STORE);
  if (!spec || spec.kind !== "postgres") throw new Error("the e2e stack has no Postgres store");
  schema = spec.schema;
  pool = new pg.Pool({ connectionString: spec.url, max: 2 });
  pool.on("error", () => undefined);
  const store = openStore({ kind: "postgres", name: PG_STORE, url: spec.url, schema: spec.schema });
  closeStore = () => store.close();
  const result = await store.acquire({ resource: `e2e-oncall-${RUN}:nightly-close`, owner: `worker-${RUN}@e2e`, task: "close-books", ttlMs: 10 * 60_000 });
  if (!result.acquired) throw new Error("expected to acquire");
  stuck = result.lease;
  // A holder that stopped renewing eight minutes ago: overdue (2/3 of the TTL passed) but not lapsed.
  await pool.query(`UPDATE "${schema}".leases SET renewed_at = now() - interval '8 minutes', acquired_at = now() - interval '8 minutes' WHERE resource = $1`, [stuck.resource]);
});

test.afterAll(async () => {
  await closeStore?.();
  await pool?.end();
});

async function scrollWidth(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth);
}

/** Presses Tab until `isTarget` holds for the focused element; returns how many presses it took. */
async function tabTo(page: Page, isTarget: () => Promise<boolean>, max = 80): Promise<number> {
  for (let presses = 1; presses <= max; presses++) {
    await page.keyboard.press("Tab");
    if (await isTarget()) return presses;
  }
  throw new Error(`not reached in ${max} Tab presses`);
}

const focusedText = (page: Page) => page.evaluate(() => document.activeElement?.textContent?.trim() ?? "");
const focusedName = (page: Page) => page.evaluate(() => document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.textContent?.trim() ?? "");

test.describe("at 390×844", () => {
  test.use({ viewport: PHONE });

  const PAGES: Array<{ name: string; path: () => string; ready: (page: Page) => Promise<void> }> = [
    { name: "the overview", path: () => "/?window=1h", ready: (page) => expect(page.locator("[data-chart] .recharts-surface").first()).toBeVisible({ timeout: DATA_TIMEOUT_MS }) },
    { name: "the leases", path: () => "/locks", ready: (page) => expect(page.locator("tbody tr").first()).toBeVisible({ timeout: DATA_TIMEOUT_MS }) },
    { name: "the stuck leases", path: () => locksHref({ state: "stuck" }), ready: (page) => expect(page.locator("tbody tr").first()).toBeVisible({ timeout: DATA_TIMEOUT_MS }) },
    { name: "the events", path: () => "/events", ready: (page) => expect(page.locator("tbody tr").first()).toBeVisible({ timeout: DATA_TIMEOUT_MS }) },
    { name: "a lease page", path: () => leaseHref(PG_STORE, stuck.resource), ready: (page) => expect(page.getByRole("region", { name: "Current lease" })).toContainText(stuck.owner) },
  ];

  for (const { name, path, ready } of PAGES) {
    test(`${name} fits the screen, and so does the whole navigation`, async ({ page }) => {
      await page.goto(path());
      await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
      await ready(page);
      expect.soft(await scrollWidth(page), `${path()} lays out no wider than the screen`).toBeLessThanOrEqual(PHONE.width);
      const nav = page.getByRole("navigation", { name: "Main" });
      for (const label of NAV_LABELS) await expect.soft(nav.getByRole("link", { name: label, exact: true }), `${label} is on the screen`).toBeInViewport({ ratio: 1 });
    });
  }

  test("the force-release dialog opens inside the screen", async ({ page }) => {
    await page.goto(leaseHref(PG_STORE, stuck.resource));
    await page.getByRole("button", { name: "Force release" }).click();
    const dialog = page.getByRole("dialog", { name: "Force release this lease" });
    await expect(dialog).toBeVisible();
    const box = (await dialog.boundingBox())!;
    expect(box.x, "the dialog's left edge is on the screen").toBeGreaterThanOrEqual(0);
    expect(box.x + box.width, "the dialog's right edge is on the screen").toBeLessThanOrEqual(PHONE.width);
    expect(await scrollWidth(page)).toBeLessThanOrEqual(PHONE.width);
    await expect(dialog.getByRole("textbox", { name: /Reason/ })).toBeInViewport({ ratio: 1 });
    await expect(dialog.getByRole("textbox", { name: /Type the resource name/ })).toBeVisible();
    await page.keyboard.press("Escape");
    await expect(dialog).toBeHidden();
  });
});

test("each overview chart is one Tab stop, named by its title", async ({ page }) => {
  await page.goto("/?window=1h");
  await expect(page.locator("[data-chart] .recharts-surface").first()).toBeVisible({ timeout: DATA_TIMEOUT_MS });
  const titles = await page.locator("figure [data-chart][tabindex=\"0\"]").evaluateAll((plots) => plots.map((p) => p.getAttribute("aria-label") ?? ""));
  expect(titles.length).toBeGreaterThanOrEqual(5);
  // Tab through the whole page once (until focus comes back round to the first stop), noting every stop inside a chart's figure.
  const plots: string[] = [];
  const others: string[] = [];
  await page.locator("body").focus();
  for (let i = 0; i < 250; i++) {
    await page.keyboard.press("Tab");
    const stop = await page.evaluate(() => {
      const el = document.activeElement;
      if (!el || el === document.body) return { done: true };
      const figure = el.closest("figure");
      const isChartFigure = figure !== null && figure.querySelector("[data-chart]") !== null;
      // A legend entry is a named toggle of its own (it shows or hides a series), not part of the plot.
      const isLegendToggle = el.tagName === "BUTTON" && el.hasAttribute("aria-pressed") && (el.textContent ?? "").trim() !== "";
      return { done: false, isChartFigure, isLegendToggle, plot: el.hasAttribute("data-chart") ? (el.getAttribute("aria-label") ?? "") : null, html: el.outerHTML.slice(0, 80), isFirst: el.textContent === "Skip to content" };
    });
    if (stop.done || (i > 0 && stop.isFirst)) break;
    if (!stop.isChartFigure) continue;
    if (stop.plot) plots.push(stop.plot);
    else if (!stop.isLegendToggle) others.push(stop.html!);
  }
  expect(others, "no other Tab stops inside the charts").toEqual([]);
  expect(plots.sort(), "each chart once, by its title").toEqual(titles.filter(Boolean).sort());
});

test("the leases page has a skip link past its filters and counts to the table", async ({ page }) => {
  await page.goto("/locks");
  await expect(page.locator("tbody tr").first()).toBeVisible({ timeout: DATA_TIMEOUT_MS });
  await page.keyboard.press("Tab"); // the page's own "Skip to content"
  await page.keyboard.press("Enter");
  await page.keyboard.press("Tab");
  expect(await focusedText(page)).toBe("Skip to the leases table");
  await page.keyboard.press("Enter");
  await page.keyboard.press("Tab");
  // The next stop is in the table: the first lease's link.
  expect(await page.evaluate(() => document.activeElement?.closest("table")?.querySelector("caption")?.textContent ?? "")).toMatch(/leases/i);
});

freshOperatorTest("by keyboard alone: overview → the stuck lease → force-release, focus on the reason, then on the outcome", async ({ page }) => {
  const startedAt = Date.now();
  await page.goto("/?window=1h");
  const tile = page.getByRole("link", { name: new RegExp(`^${PG_STORE}: \\d+\\+? overdue or lapsed`) });
  await expect(tile).toBeVisible({ timeout: DATA_TIMEOUT_MS });
  await page.locator("body").focus();
  const presses: Record<string, number> = {};
  presses.toTile = await tabTo(page, async () => (await focusedName(page)).startsWith(`${PG_STORE}: `));
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL((url) => url.pathname === "/locks" && url.searchParams.get("state") === "stuck" && url.searchParams.get("store") === PG_STORE);
  await expect(page.getByRole("columnheader", { name: /Overdue by/ })).toBeVisible();

  // Skip the header, then the filters and counts: the first row is the longest overdue, ours.
  await page.locator("body").focus();
  presses.toTable = await tabTo(page, async () => (await focusedText(page)) === "Skip to the leases table");
  await page.keyboard.press("Enter");
  await page.keyboard.press("Tab");
  expect(await focusedText(page)).toBe(stuck.resource);
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL((url) => url.pathname === leaseHref(PG_STORE, stuck.resource));

  presses.toButton = await tabTo(page, async () => (await focusedText(page)) === "Force release");
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog", { name: "Force release this lease" });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole("textbox", { name: /Reason/ })).toBeFocused();
  await page.keyboard.type(REASON);
  await page.keyboard.press("Tab");
  await expect(dialog.getByRole("textbox", { name: /Type the resource name/ })).toBeFocused();
  await page.keyboard.type(stuck.resource);
  await page.keyboard.press("Enter");

  await expect(dialog).toBeHidden();
  const outcome = page.getByRole("status").filter({ hasText: "Force-released." });
  await expect(outcome).toBeVisible();
  await expect(outcome).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(outcome.getByRole("link", { name: "See the audit entry" })).toBeFocused();
  // Reported, not asserted: the walk's cost for the record (speed is measured in bench/, not here).
  const walk = `Tab presses ${JSON.stringify(presses)}, ${((Date.now() - startedAt) / 1000).toFixed(1)} s from opening the overview to focus on the outcome`;
  test.info().annotations.push({ type: "keyboard walk", description: walk });
  console.log(`keyboard walk: ${walk}`);
});
