/**
 * axe on every page, in both colour schemes, failing on moderate violations as
 * well as serious and critical ones (duplicate landmark names, heading order,
 * contrast…). Each page is scanned once per scheme, after its data rendered.
 */
import { expect, test, type Page } from "@playwright/test";
import { pauseLiveUpdates, scopedAxe } from "./support/axe";

const DATA_TIMEOUT_MS = 15_000;
const FAILING_IMPACTS = new Set(["moderate", "serious", "critical"]);

async function expectNoA11yViolations(page: Page, path: string): Promise<void> {
  await pauseLiveUpdates(page);
  const results = await scopedAxe(page).analyze();
  const failing = results.violations.filter((v) => FAILING_IMPACTS.has(v.impact ?? ""));
  expect(
    failing.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.slice(0, 5).map((n) => n.target.join(" ")).join(", ")})`),
    `${path}: no moderate, serious or critical axe violations`,
  ).toEqual([]);
}

/** Waits until the page shows what it is for: its heading, and rows where it lists something. */
async function openRendered(page: Page, path: string): Promise<boolean> {
  const response = await page.goto(path);
  // Pages that other parts of the console may add later are scanned once they exist.
  if (response?.status() === 404) return false;
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
  // The workload keeps these lists full; the audit log may well be empty.
  if (/^\/(locks|events)(\?|$)/.test(path)) await expect(page.locator("tbody tr").first()).toBeVisible({ timeout: DATA_TIMEOUT_MS });
  if (path.startsWith("/?")) await expect(page.locator("[data-chart] .recharts-surface").first()).toBeVisible({ timeout: DATA_TIMEOUT_MS });
  return true;
}

/** A lease page with history, and an owner, found through the events page. */
async function findLeaseAndOwner(page: Page): Promise<{ leasePath: string; owner: string }> {
  await page.goto("/events?kind=released");
  const row = page.locator("tbody tr").first();
  await expect(row.getByRole("link").first()).toBeVisible({ timeout: DATA_TIMEOUT_MS });
  const leasePath = (await row.getByRole("link").first().getAttribute("href"))!;
  const owner = (await row.locator("td").filter({ hasText: "@" }).first().textContent())?.trim().split(/\s/)[0] ?? "";
  return { leasePath, owner };
}

// One test per page and scheme, so each scan has the whole test budget on a busy machine.
const PAGES: Array<{ name: string; path: (page: Page) => Promise<string> }> = [
  { name: "overview", path: async () => "/?window=1h" },
  { name: "overview narrowed to a prefix", path: async () => "/?window=1h&prefix=tenant_1" },
  { name: "leases", path: async () => "/locks" },
  { name: "expired view", path: async () => "/locks?state=expired&window=1h" },
  { name: "events", path: async () => "/events" },
  { name: "a lease page", path: async (page) => (await findLeaseAndOwner(page)).leasePath },
  { name: "audit", path: async () => "/audit" },
  { name: "tokens", path: async () => "/tokens" },
  { name: "an owner page", path: async (page) => `/owners/${encodeURIComponent((await findLeaseAndOwner(page)).owner)}` },
];

for (const colorScheme of ["light", "dark"] as const) {
  for (const { name, path: pathOf } of PAGES) {
    test(`${name} passes axe (${colorScheme})`, async ({ page }) => {
      await page.emulateMedia({ colorScheme });
      const path = await pathOf(page);
      expect(await openRendered(page, path), `${path} exists`).toBe(true);
      await expectNoA11yViolations(page, path);
    });
  }
}

test.describe("signed out", () => {
  test.use({ storageState: { cookies: [], origins: [] } });

  test("the sign-in and not-authorised pages pass axe in light and dark", async ({ page }) => {
    test.setTimeout(60_000);
    await page.route(/fonts\.googleapis\.com/, (route) => route.abort());
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      for (const path of ["/signin", "/signin/not-authorised"]) {
        await openRendered(page, path);
        await expectNoA11yViolations(page, path);
      }
    }
  });
});
