/**
 * Following an alert: each console link in ops/alerts.yml, filled in as Prometheus would for an
 * alert on the test stores, opened signed out. The browser lands on sign-in, signs in through
 * the IdP and comes back to the same URL; the page then lists exactly what the store's own
 * events say for the window ending at the alert's moment (`at=`), with the alert's filters,
 * and says which window that is. Each link is checked with `at` an hour ago (before this
 * stack's history: nothing, where the hour ending now is full) and a few seconds ago (inside
 * the workload's history), against the store read through the lease library.
 */
import { expect, test, type Page } from "@playwright/test";
import type { LeaseEventKind, LeaseStore } from "@leasewatch/lease";
import { ALERT_LINKS, fillTemplates, RULES_BASE } from "../test/support/alert-links";
import { readStoreConfigs } from "./support/control";
import { BASE_URL, ISSUER_URL, PG_STORE, REDIS_STORE } from "./support/harness";
import { openStore } from "./support/stores";

const HOUR = 3_600_000;
const WINDOWS: Record<string, number> = { "15m": HOUR / 4, "1h": HOUR, "6h": 6 * HOUR, "24h": 24 * HOUR };
/** Each page's window when the link names none (lib/console/shared/params.ts). */
const DEFAULT_WINDOW: Record<string, string> = { "/": "1h", "/locks": "1h", "/events": "24h" };
const PAGE_SIZE = 50;

const stores = new Map<string, LeaseStore>();
test.beforeAll(async () => {
  for (const config of await readStoreConfigs()) stores.set(config.name, openStore(config));
});
test.afterAll(async () => {
  await Promise.all([...stores.values()].map((s) => s.close()));
});

// Signed out: every link starts at the sign-in page.
test.use({ storageState: { cookies: [], origins: [] } });

/** Whole seconds, Z: what an alert's template writes. */
const alertMoment = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");

/** What the page must list, read from the store through the library, as store/id keys. */
async function expectedRows(url: URL, atMs: number): Promise<{ keys: string[]; isOrdered: boolean; noHistory?: boolean }> {
  const q = url.searchParams;
  const store = stores.get(q.get("store")!)!;
  const prefix = q.get("prefix") ?? undefined;
  const window = WINDOWS[q.get("window") ?? DEFAULT_WINDOW[url.pathname]!]!;
  const range = { from: new Date(atMs - window), to: new Date(atMs + 1) };
  if (url.pathname === "/events") {
    const kinds = q.get("kind")?.split(",") as LeaseEventKind[] | undefined;
    const page = await store.events({ kinds, prefix, ...range, limit: PAGE_SIZE });
    return { keys: page.items.map((e) => `${store.name}/${e.id}`), isOrdered: false };
  }
  if (q.get("state") === "expired") {
    const page = await store.events({ kinds: ["expired"], prefix, ...range, limit: PAGE_SIZE });
    return { keys: page.items.map((e) => `${store.name}/${e.id}`), isOrdered: false };
  }
  // Any other /locks link: the leases held at the moment (the past view).
  const held = await store.heldAt({ at: new Date(atMs), prefix, limit: PAGE_SIZE });
  if (!held.covered) return { keys: [], isOrdered: false, noHistory: true };
  return { keys: held.items.map((h) => `${store.name}/${h.leaseId}`), isOrdered: false };
}

async function listedRows(page: Page): Promise<string[]> {
  return page.locator("table tbody tr[data-row-key]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-row-key")!));
}

/** The statement above the list: what is shown, between which UTC moments, and a Back to now that keeps every filter. */
async function expectWindowStatement(page: Page, url: URL, atMs: number) {
  const isPastView = url.pathname === "/locks" && url.searchParams.get("state") !== "expired";
  const note = page.getByRole("note", { name: isPastView ? "Past view" : "Window shown" });
  await expect(note).toBeVisible();
  if (isPastView) {
    await expect(note.locator("time").first()).toHaveAttribute("datetime", new Date(atMs).toISOString());
  } else {
    const window = WINDOWS[url.searchParams.get("window") ?? DEFAULT_WINDOW[url.pathname]!]!;
    const times = note.locator("time");
    await expect(times.nth(0)).toHaveAttribute("datetime", new Date(atMs - window).toISOString());
    await expect(times.nth(1)).toHaveAttribute("datetime", new Date(atMs).toISOString());
    await expect(note).toContainText(url.pathname === "/locks" ? "Expired leases between" : url.pathname === "/events" ? "Events between" : "Counts and charts between");
  }
  const now = new URL((await note.getByRole("link", { name: "Back to now" }).getAttribute("href"))!, BASE_URL);
  expect(now.pathname).toBe(url.pathname);
  expect(now.searchParams.has("at"), "Back to now leaves the moment").toBe(false);
  for (const [key, value] of url.searchParams) if (key !== "at") expect(now.searchParams.get(key), `Back to now keeps ${key}`).toBe(value);
}

async function expectListsTheWindow(page: Page, url: URL, atMs: number) {
  if (url.pathname === "/") {
    // The overview counts rollups in whole minute buckets; an hour before this stack's history they are all zero,
    // and nothing was held at the window's end (the hour ending now has the workload's acquires and holders).
    await expect(page.getByRole("link", { name: "Active leases: 0", exact: true })).toBeVisible();
    await expect(page.getByText("0 in the window", { exact: true })).toBeVisible();
    return;
  }
  const expected = await expectedRows(url, atMs);
  if (expected.noHistory) {
    await expect(page.getByRole("status").filter({ hasText: "this instant is before it" })).toBeVisible();
  }
  const listed = await listedRows(page);
  // How much each check compared, in the run's output (an empty window is a real answer, but should not be the only one).
  console.log(`[alert-links] ${url.pathname}${url.search}: ${listed.length} rows listed, ${expected.keys.length} from the store`);
  if (expected.isOrdered) expect(listed).toEqual(expected.keys);
  else expect(listed.sort()).toEqual(expected.keys.sort());
}

const LABELS_BY_STORE = (store: string): Record<string, string> => ({
  store,
  kind: store === PG_STORE ? "postgres" : "redis",
  // Wide enough that the workload has holders, expiries and refusals under it.
  prefix: "tenant_",
  prefix_group: "tenant_",
  state: "overdue",
  // The worker-side alerts are per exporting process.
  instance: "127.0.0.1:9464",
});

ALERT_LINKS.forEach(({ alert, name, link }, i) => {
  // Alternate the stores so both are followed without doubling the sign-ins.
  const storeName = i % 2 === 0 ? PG_STORE : REDIS_STORE;
  test(`the ${alert} alert's ${name} link on ${storeName} lands, after sign-in, on the window ending at the alert's moment`, async ({ page }) => {
    const hourAgo = Date.now() - HOUR;
    const at = alertMoment(hourAgo);
    const atMs = Date.parse(at);
    const url = new URL(fillTemplates(link, LABELS_BY_STORE(storeName), at).replace(RULES_BASE, BASE_URL));
    expect(url.searchParams.get("at")).toBe(at);

    // Signed out: sign-in first, then back to exactly the link.
    await page.route(/fonts\.googleapis\.com/, (route) => route.abort());
    await page.goto(url.pathname + url.search);
    await expect(page).toHaveURL(/\/signin\?callbackUrl=/);
    await page.getByRole("button", { name: "Sign in with SSO" }).click();
    await page.waitForURL(`${ISSUER_URL}/**`);
    await page.getByPlaceholder("Enter any login").fill("alice");
    await page.getByPlaceholder("and password").fill("any-password");
    await page.getByRole("button", { name: "Sign-in" }).click();
    await page.waitForURL((landed) => landed.origin === BASE_URL && landed.pathname === url.pathname);
    const landed = new URL(page.url());
    expect([...landed.searchParams].sort()).toEqual([...url.searchParams].sort());
    await expect(page.getByRole("alert").filter({ hasText: "Can’t show" })).toHaveCount(0);

    await expectWindowStatement(page, url, atMs);
    await expectListsTheWindow(page, url, atMs);

    // The same link for a moment inside the workload's history lists what the store recorded then.
    if (url.pathname !== "/") {
      const recent = new URL(url);
      const recentAt = alertMoment(Date.now() - 2_000);
      recent.searchParams.set("at", recentAt);
      await page.goto(recent.pathname + recent.search);
      await expectWindowStatement(page, recent, Date.parse(recentAt));
      await expectListsTheWindow(page, recent, Date.parse(recentAt));
    }
  });
});
