/**
 * The walk from an alert to its answer, with the workload running: the alert
 * link's counts match the events API and one click narrows the list to the top
 * owner; an owner link lands on that owner's page; the jump box finds a lease by
 * its fencing token (and says so when it finds nothing).
 */
import AxeBuilder from "@axe-core/playwright";
import { randomBytes } from "node:crypto";
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { leaseHref, ownerHref } from "@/lib/console/shared/links";
import type { EventsView } from "@/lib/console/shared/views";
import type { LeaseStore } from "@leasewatch/lease";
import { PG_STORE, REDIS_STORE } from "./support/harness";
import { openStackStore } from "./support/control";

const ALERT_LINK = `/locks?store=${REDIS_STORE}&state=expired&window=1h`;
const COUNT_LINE = /^([\d,]+) of ([\d,]+) expiries: (.+)$/;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Every event the events API lists for `query`, page by page. */
async function countEvents(request: APIRequestContext, query: Record<string, string>): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const params = new URLSearchParams({ ...query, limit: "200", ...(cursor ? { cursor } : {}) });
    const response = await request.get(`/api/events?${params}`);
    expect(response.status(), await response.text()).toBe(200);
    const view = (await response.json()) as EventsView;
    expect(view.stores.every((s) => s.ok)).toBe(true);
    count += view.items.length;
    cursor = view.nextCursor;
    if (!cursor) return count;
  }
  throw new Error("more than 100 pages of events");
}

/** The counts region's top owner line and its window, read at one instant (the region refreshes itself). */
async function readTopOwner(page: Page) {
  const region = page.getByRole("region", { name: /expiries/ });
  await expect(region.getByRole("list", { name: "Owners" }).getByRole("link").first()).toBeVisible();
  return region.evaluate((el) => {
    const times = [...el.querySelectorAll("h2 time")].map((t) => t.getAttribute("datetime"));
    const list = [...el.querySelectorAll("h3")].find((h) => h.textContent === "Owners")?.nextElementSibling;
    return { line: list?.querySelector("li a")?.textContent ?? "", from: times[0] ?? "", to: times[1] ?? "" };
  });
}

test("the alert link counts expiries by owner as the events API does, and one click narrows to the top owner", async ({ page }) => {
  await page.goto(ALERT_LINK);
  const top = await readTopOwner(page);
  const match = COUNT_LINE.exec(top.line);
  expect(match, `"${top.line}" reads "N of M expiries: owner"`).not.toBeNull();
  const [, ownerCount, total, owner] = match!;
  const asNumber = (s: string) => Number(s.replace(/,/g, ""));

  // The same window, asked of the events API: the counts are of exactly those events.
  const window = { store: REDIS_STORE, kind: "expired", window: "custom", from: top.from, to: top.to };
  expect(await countEvents(page.request, window)).toBe(asNumber(total!));
  expect(await countEvents(page.request, { ...window, owner: owner! })).toBe(asNumber(ownerCount!));

  // One click: the list and its counts narrow to that owner. (Its count may have grown since: the counts stay live.)
  await page.getByRole("region", { name: /expiries/ }).getByRole("link", { name: new RegExp(`expiries: ${escapeRegExp(owner!)}$`) }).click();
  await expect(page).toHaveURL((url) => url.pathname === "/locks" && url.searchParams.get("owner") === owner && url.searchParams.get("state") === "expired");
  const narrowed = page.getByRole("region", { name: /expiries/ }).getByRole("list", { name: "Owners" }).getByRole("listitem");
  await expect(narrowed).toHaveCount(1);
  await expect(narrowed.first()).toContainText(`expiries: ${owner}`);
  const rows = page.locator("tbody tr");
  await expect(rows.first()).toBeVisible();
  for (const row of await rows.all()) await expect(row).toContainText(owner!);
});

test("an owner link lands on that owner's page: what it holds, whether it is alive, its history", async ({ page }) => {
  await page.goto(ALERT_LINK);
  const top = await readTopOwner(page);
  const owner = COUNT_LINE.exec(top.line)![3]!;
  await page.getByRole("link", { name: `${owner}: owner page` }).click();
  await expect(page).toHaveURL((url) => url.pathname === ownerHref(owner));
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(owner);
  // The plain answer: alive or not, and when it was last seen (it expired a lease within the hour).
  await expect(page.getByTestId("owner-verdict")).toContainText(/^(Alive|Not renewing|Active, holds nothing now|Not alive)/);
  await expect(page.getByTestId("owner-verdict")).not.toContainText("Not seen");
  await expect(page.getByTestId("owner-verdict")).toContainText(/last seen \d/);
  await expect(page.getByRole("heading", { name: "Expiries, renewal failures and lost leases" })).toBeVisible();
  await expect(page.getByRole("table", { name: /Expiries, renewal failures and lost leases/ }).locator("tbody tr").first()).toContainText(owner);
  await expect(page.getByRole("link", { name: "All its events" })).toHaveAttribute("href", new RegExp(`owner=${escapeRegExp(encodeURIComponent(owner))}`));
});

test.describe("the jump box", () => {
  let store: LeaseStore;
  test.beforeAll(async () => void (store = await openStackStore()));
  test.afterAll(() => store?.close());

  test("finds a lease by its fencing token, and says plainly when nothing matches", async ({ page }) => {
    const tag = randomBytes(4).toString("hex");
    const result = await store.acquire({ resource: `e2e-jump-${tag}:ledger`, owner: `owner-${tag}@e2e`, task: `task-${tag}`, ttlMs: 5 * 60_000 });
    if (!result.acquired) throw new Error("expected to acquire");
    const { lease } = result;
    try {
      await page.goto("/");
      const box = page.getByRole("searchbox", { name: /Jump to/ });
      await box.fill(String(lease.fencingToken));
      await box.press("Enter");
      await expect(page).toHaveURL((url) => url.pathname === leaseHref(PG_STORE, lease.resource));
      await expect(page.getByRole("heading", { level: 1 })).toHaveText(lease.resource);

      await box.fill(`e2e-nothing-${tag}:here`);
      await box.press("Enter");
      await expect(page.getByRole("search", { name: "Jump to" }).getByRole("status")).toHaveText(new RegExp(`Nothing found for “e2e-nothing-${tag}:here”`));
      await expect(page).toHaveURL((url) => url.pathname === leaseHref(PG_STORE, lease.resource));
    } finally {
      await store.release({ resource: lease.resource, leaseId: lease.leaseId }).catch(() => {});
    }
  });
});

for (const colorScheme of ["light", "dark"] as const) {
  test(`the counts, the owner page and the jump box pass axe (${colorScheme})`, async ({ page }) => {
    test.setTimeout(120_000);
    await page.emulateMedia({ colorScheme });
    const check = async (include: string) => {
      const results = await new AxeBuilder({ page }).include(include).analyze();
      const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical" || v.impact === "moderate");
      expect(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`), `${page.url()} ${include}`).toEqual([]);
    };
    await page.goto(ALERT_LINK);
    const top = await readTopOwner(page);
    await check('section[aria-labelledby^="facets-"]');
    await check('form[role="search"]');
    await page.goto(`/events?store=${REDIS_STORE}&window=1h`);
    await expect(page.getByRole("region", { name: /events/ }).getByRole("list", { name: "Kinds" })).toBeVisible();
    await check('section[aria-labelledby^="facets-"]');
    await page.goto(ownerHref(COUNT_LINE.exec(top.line)![3]!));
    await expect(page.getByTestId("owner-verdict")).toBeVisible();
    await check("main");
  });
}
