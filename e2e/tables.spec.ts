/**
 * Live tables in the browser, on data the test writes itself through the lease
 * library into both stores of the e2e stack: the row under the pointer holds
 * still while new events arrive (offered as "N new events — show"), rows expand
 * to the full event with absolute UTC times and the same formatted details from
 * either store, and ids copy to the clipboard.
 */
import { randomBytes } from "node:crypto";
import { expect, test, type Page } from "@playwright/test";
import { formatUtc } from "../components/ui/format";
import { eventsHref, locksHref, ownerHref } from "@/lib/console/shared/links";
import type { LeaseEvent, LeaseStore } from "@leasewatch/lease";
import { readStoreConfigs } from "./support/control";
import { BASE_URL, PG_STORE, REDIS_STORE } from "./support/harness";
import { openStore } from "./support/stores";

/** How long the pointer rests on a row while events keep arriving. */
const HOLD_FOR_MS = 10_000;
/** Several polls of the default 5 s refresh. */
const DATA_TIMEOUT_MS = 20_000;

const stores = new Map<string, LeaseStore>();

test.beforeAll(async () => {
  for (const config of await readStoreConfigs()) stores.set(config.name, openStore(config));
  if (!stores.has(PG_STORE) || !stores.has(REDIS_STORE)) throw new Error(`the e2e stack needs ${PG_STORE} and ${REDIS_STORE}`);
});

test.afterAll(async () => {
  await Promise.all([...stores.values()].map((s) => s.close()));
});

function storeNamed(name: string): LeaseStore {
  const store = stores.get(name);
  if (!store) throw new Error(`no store ${name}`);
  return store;
}

/** One acquire and its release: two events on `resource`. */
async function acquireAndRelease(store: LeaseStore, resource: string, owner: string): Promise<void> {
  const result = await store.acquire({ resource, owner, task: "hold-still", ttlMs: 60_000 });
  if (!result.acquired) throw new Error(`expected to acquire ${resource}`);
  await store.release({ resource, leaseId: result.lease.leaseId });
}

/** The `data-row-key` of the table row at the viewport point (x, y), and its text apart from the ticking time. */
async function rowAt(page: Page, x: number, y: number): Promise<{ key: string | null; text: string }> {
  return page.evaluate(
    ([px, py]) => {
      const row = document.elementFromPoint(px!, py!)?.closest("tr");
      const cells = row ? Array.from(row.querySelectorAll("td")).slice(1) : [];
      return { key: row?.getAttribute("data-row-key") ?? null, text: cells.map((c) => c.textContent ?? "").join(" | ") };
    },
    [x, y],
  );
}

test("the row under the pointer holds still through 10 s of new events, which wait behind “N new events — show”", async ({ page }) => {
  const tag = randomBytes(4).toString("hex");
  const prefix = `e2e-hold-${tag}:`;
  const store = storeNamed(PG_STORE);
  for (let i = 0; i < 3; i++) await acquireAndRelease(store, `${prefix}r${i}`, `holder-${tag}`);

  await page.goto(eventsHref({ prefix }));
  const rows = page.locator("tbody tr[data-row-key]");
  await expect(rows).toHaveCount(6);
  await expect(page.getByText(/paused while/)).toHaveCount(0);

  // Rest the pointer on the third row (the second acquire's release).
  const target = rows.nth(2);
  const box = (await target.boundingBox())!;
  const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
  // Moves a pixel at a time until the page says it holds (a move before the page is interactive is not seen).
  let jiggle = 0;
  await expect(async () => {
    await page.mouse.move(x, y + (jiggle++ % 2));
    await expect(page.getByText(/paused while the pointer is over the table/)).toBeVisible({ timeout: 1_000 });
  }).toPass({ timeout: DATA_TIMEOUT_MS });
  const before = await rowAt(page, x, y);
  expect(before.key, "the row under the pointer is a table row").toBeTruthy();

  // New events on the same prefix keep arriving; every half second the row under the pointer is the same row.
  let written = 0;
  const writer = (async () => {
    for (const end = Date.now() + HOLD_FOR_MS; Date.now() < end; ) {
      await acquireAndRelease(store, `${prefix}new${written}`, `holder-${tag}`);
      written += 2;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  })();
  for (const end = Date.now() + HOLD_FOR_MS; Date.now() < end; ) {
    expect(await rowAt(page, x, y), "the row under the pointer").toEqual(before);
    await page.waitForTimeout(500);
  }
  await writer;

  // They were read (the notice counts them) but not shown; one click shows them all.
  const notice = page.getByRole("button", { name: /^\d+ new events? — show$/ });
  await expect(notice).toBeVisible({ timeout: DATA_TIMEOUT_MS });
  await expect(rows).toHaveCount(6);
  await expect(notice).toHaveText(`${written} new events — show`, { timeout: DATA_TIMEOUT_MS });
  await notice.click();
  await expect(rows).toHaveCount(6 + written);
  await expect(notice).toHaveCount(0);
});

test("the refresh choice is remembered across pages and reloads", async ({ page }) => {
  await page.goto("/events");
  const picker = page.getByRole("combobox", { name: "Refresh" });
  await expect(picker).toHaveValue("5s");
  await picker.selectOption("1m");
  await page.goto("/locks");
  await expect(page.getByRole("combobox", { name: "Refresh" })).toHaveValue("1m");
  await page.reload();
  await expect(page.getByRole("combobox", { name: "Refresh" })).toHaveValue("1m");
  await page.getByRole("combobox", { name: "Refresh" }).selectOption("off");
  await expect(page.getByRole("combobox", { name: "Refresh" })).toHaveValue("off");
});

/** A lease renewed once onto a short TTL and left to expire; its expiry recorded by a sweep. */
async function expireOnce(store: LeaseStore, resource: string, owner: string): Promise<{ expiresAt: Date; event: LeaseEvent }> {
  const acquired = await store.acquire({ resource, owner, task: `task-${owner}`, ttlMs: 60_000 });
  if (!acquired.acquired) throw new Error(`expected to acquire ${resource}`);
  const renewed = await store.renew({ resource, leaseId: acquired.lease.leaseId, ttlMs: 200 });
  if (!renewed.renewed) throw new Error(`expected to renew ${resource}`);
  await new Promise((r) => setTimeout(r, 500));
  await store.sweep();
  const [event] = (await store.events({ resource, kinds: ["expired"], limit: 5 })).items;
  if (!event) throw new Error(`no expiry recorded for ${resource}`);
  return { expiresAt: renewed.expiresAt, event };
}

test("an expiry reads the same from both stores, expands to the full event in UTC, and its ids copy", async ({ page, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: BASE_URL });
  const tag = randomBytes(4).toString("hex");
  const prefix = `e2e-detail-${tag}:`;
  const expiries = [];
  for (const name of [PG_STORE, REDIS_STORE]) expiries.push({ name, ...(await expireOnce(storeNamed(name), `${prefix}${name}`, `owner-${tag}-${name}`)) });

  await page.goto(eventsHref({ prefix, kind: "expired" }));
  const rows = page.locator("tbody tr[data-row-key]");
  await expect(rows).toHaveCount(2);

  for (const { name, expiresAt, event } of expiries) {
    const row = page.locator(`tbody tr[data-row-key="${name}/${event.id}"]`);
    // Formatted, never JSON, and worded alike whichever store recorded it.
    const clock = expiresAt.toISOString().slice(11, 19);
    await expect(row.locator("td").last()).toHaveText(`expired at ${clock} UTC · recorded by sweep · 1 renewal`);

    // Every name links to its filtered view.
    await expect(row.getByRole("link", { name: event.owner!, exact: true })).toHaveAttribute("href", ownerHref(event.owner!));
    await expect(row.getByRole("link", { name: event.task!, exact: true })).toHaveAttribute("href", eventsHref({ task: event.task! }));
    await expect(row.getByRole("link", { name: name, exact: true })).toHaveAttribute("href", locksHref({ store: name }));
    await expect(row.getByRole("link", { name: String(event.fencingToken), exact: true })).toHaveAttribute("href", eventsHref({ store: name, token: String(event.fencingToken) }));

    // Expands from the keyboard: focus the button, press Enter.
    const toggle = row.getByRole("button", { name: /^Details of the expired event/ });
    await expect(toggle).toHaveAttribute("aria-expanded", "false");
    await toggle.focus();
    await page.keyboard.press("Enter");
    await expect(toggle).toHaveAttribute("aria-expanded", "true");
    const detail = page.locator(`#${await toggle.getAttribute("aria-controls")}`);
    const field = (label: string) => detail.locator("dl > div").filter({ has: page.locator("dt", { hasText: new RegExp(`^${label}$`) }) }).locator("dd");
    await expect(field("At \\(UTC\\)")).toContainText(formatUtc(event.at));
    await expect(field("Event id")).toContainText(event.id);
    await expect(field("Lease id")).toContainText(event.leaseId!);
    await expect(field("Fencing token")).toContainText(String(event.fencingToken));
    await expect(field("Expired at")).toHaveText(formatUtc(expiresAt));
    await expect(field("Recorded by")).toHaveText("sweep");
    await expect(field("Renewals")).toHaveText("1");

    // Copy puts the lease id on the clipboard and says so.
    await field("Lease id").getByRole("button", { name: "Copy lease id" }).click();
    await expect(field("Lease id").getByRole("status")).toHaveText("copied");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(event.leaseId);

    await toggle.click();
    await expect(toggle).toHaveAttribute("aria-expanded", "false");
    await expect(detail).toHaveCount(0);
  }
});
