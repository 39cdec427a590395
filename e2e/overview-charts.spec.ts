/**
 * The overview's charts by mouse and keyboard: legends that toggle series, a
 * point that opens its bucket's events, one tab stop per chart with arrow keys
 * announcing each point, and the first drill-down link within 16 Tabs (skip link, seven
 * nav links, the jump box and its button, sign-out, then the overview's four controls).
 */
import { expect, test, type Page } from "@playwright/test";
import { PG_STORE } from "./support/harness";

const DATA_TIMEOUT_MS = 15_000;
const MINUTE = 60_000;

function chart(page: Page, title: string) {
  return page.locator("figure").filter({ has: page.getByRole("heading", { name: title, exact: true }) });
}

/** The focusable plot of a chart (its one tab stop). */
function plot(page: Page, title: string) {
  return chart(page, title).getByRole("group", { name: title, exact: true });
}

function readout(page: Page, title: string) {
  return chart(page, title).locator("[data-chart-readout]");
}

/** "2026-11-26 07:05–07:06 UTC: …" → the bucket's start in ms. */
function bucketStartOf(text: string): number {
  const match = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d)–/.exec(text);
  expect(match, `"${text}" starts with its bucket`).not.toBeNull();
  return Date.parse(`${match![1]}T${match![2]}:00Z`);
}

test("chart titles are headings, tiles are named by what they show, legends toggle series", async ({ page }) => {
  await page.goto("/?window=15m");
  for (const title of ["Contention over time", "Hold duration", "Expired-to-released ratio", "Active leases", "Hold duration histogram"]) {
    await expect(page.getByRole("heading", { level: 2, name: title, exact: true })).toBeVisible();
  }
  await expect(page.getByRole("link", { name: /^Fencing rejections: [\d,]+(, needs attention)?$/ })).toBeVisible();
  await expect(page.getByRole("link", { name: /^Active leases: [\d,]+$/ })).toBeVisible();

  const hold = chart(page, "Hold duration");
  await expect(hold.locator(".recharts-line-curve").first()).toHaveAttribute("d", /\d/, { timeout: DATA_TIMEOUT_MS });
  await expect(hold.locator(".recharts-line-curve")).toHaveCount(3);
  const p99 = hold.getByRole("button", { name: "p99" });
  await expect(p99).toHaveAttribute("aria-pressed", "true");
  await p99.click();
  await expect(p99).toHaveAttribute("aria-pressed", "false");
  await expect(hold.locator(".recharts-line-curve")).toHaveCount(2);
  // The readout names only the shown series.
  await plot(page, "Hold duration").focus();
  await expect(readout(page, "Hold duration")).not.toContainText("p99");
  await p99.click();
  await expect(p99).toHaveAttribute("aria-pressed", "true");
  await expect(hold.locator(".recharts-line-curve")).toHaveCount(3);
});

test("clicking a chart point opens the events of that bucket, store kept", async ({ page }) => {
  await page.goto(`/?window=15m&store=${PG_STORE}`);
  const active = chart(page, "Active leases");
  await expect(active.locator(".recharts-area-area")).toHaveAttribute("d", /\d/, { timeout: DATA_TIMEOUT_MS });
  // The chart is below the fold at 1280×800: the pointer can only reach it on screen.
  await active.scrollIntoViewIfNeeded();
  const box = (await active.locator(".recharts-cartesian-grid").boundingBox())!;
  const clickedAt = Date.now();
  // Point first, as a person does: the click opens the bucket the tooltip shows.
  const x = box.x + box.width * 0.6;
  const y = box.y + box.height / 2;
  await page.mouse.move(x - 20, y);
  await page.mouse.move(x, y, { steps: 5 });
  await expect(active.locator(".recharts-tooltip-wrapper")).toBeVisible();
  await page.mouse.click(x, y);
  await expect(page).toHaveURL(/\/events\?/);
  const url = new URL(page.url());
  expect(url.searchParams.get("store")).toBe(PG_STORE);
  const from = Date.parse(url.searchParams.get("from")!);
  const to = Date.parse(url.searchParams.get("to")!);
  expect(to - from).toBe(MINUTE);
  expect(from % MINUTE).toBe(0);
  // A bucket of the 15-minute window, past its first third (the click was right of the middle).
  expect(from).toBeGreaterThan(clickedAt - 10 * MINUTE);
  expect(from).toBeLessThanOrEqual(clickedAt);
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
});

test("a chart is one tab stop; arrow keys announce each point and Enter opens its bucket", async ({ page }) => {
  await page.goto("/?window=15m");
  const contention = chart(page, "Contention over time");
  await expect(contention.locator(".recharts-area-area").first()).toHaveAttribute("d", /\d/, { timeout: DATA_TIMEOUT_MS });
  // Nothing inside the plot takes focus besides the plot itself.
  for (const figure of await page.locator("[data-chart]").all()) {
    await expect(figure.locator("a, button, input, select, [tabindex]:not([tabindex='-1'])")).toHaveCount(0);
    await expect(figure).toHaveAttribute("tabindex", "0");
  }

  const target = plot(page, "Contention over time");
  await target.focus();
  const live = readout(page, "Contention over time");
  await expect(live).toHaveAttribute("aria-live", "polite");
  // Focus starts on the newest bucket.
  await expect(live).toHaveText(/^\d{4}-\d\d-\d\d \d\d:\d\d–\d\d:\d\d UTC: [\d,]+ failed acquires/);
  const announcedBucket = async () => bucketStartOf((await live.textContent()) ?? "");
  const newest = await announcedBucket();
  await page.keyboard.press("ArrowLeft");
  await page.keyboard.press("ArrowLeft");
  await expect.poll(announcedBucket).toBe(newest - 2 * MINUTE);
  await page.keyboard.press("ArrowRight");
  await expect.poll(announcedBucket).toBe(newest - MINUTE);
  // Home and End go to the ends of the window (16 one-minute buckets; it may slide a minute meanwhile).
  await page.keyboard.press("Home");
  await expect.poll(announcedBucket).toBeLessThanOrEqual(newest - 14 * MINUTE);
  await page.keyboard.press("End");
  await expect.poll(announcedBucket).toBeGreaterThanOrEqual(newest);
  const last = await announcedBucket();
  await page.keyboard.press("ArrowLeft");
  await expect.poll(announcedBucket).toBe(last - MINUTE);
  const chosen = last - MINUTE;

  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/events\?/);
  const url = new URL(page.url());
  expect(url.searchParams.get("kind")).toBe("contended");
  expect(Date.parse(url.searchParams.get("from")!)).toBe(chosen);
  expect(Date.parse(url.searchParams.get("to")!)).toBe(chosen + MINUTE);
});

test("the first drill-down link on the overview is reachable in at most 16 Tabs", async ({ page }) => {
  await page.goto("/?window=1h");
  await expect(page.getByRole("heading", { name: "Overview", level: 1 })).toBeVisible();
  let presses = 0;
  let reached: string | null = null;
  while (presses < 16 && reached === null) {
    await page.keyboard.press("Tab");
    presses++;
    reached = await page.evaluate(() => {
      const el = document.activeElement;
      return el instanceof HTMLAnchorElement && el.closest("main") ? el.getAttribute("href") : null;
    });
  }
  expect(reached, `a link in the page content after ${presses} Tabs`).not.toBeNull();
  // It drills down into a list, not somewhere else.
  expect(reached).toMatch(/^\/(locks|events)\b/);
});

test("the 30-day overview reads whole UTC days: its range starts at midnight, its charts have one point per day", async ({ page }) => {
  const DAY = 86_400_000;
  await page.goto("/?window=15m");
  // Chosen in the window picker, like any other window.
  await page.getByRole("button", { name: "30d", exact: true }).click();
  await expect(page).toHaveURL(/[?&]window=30d\b/);
  await expect(page.getByRole("button", { name: "30d", exact: true })).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByText(/last 30 days \(whole UTC days\)/)).toBeVisible();
  await expect(page.getByText("(daily buckets)")).toBeVisible();
  // Renewal slack covers 7 days: the panel shows the window's last 7 days and says so, never an error.
  const slack = page.getByRole("region", { name: /^Renewal slack/ });
  await expect(slack).toContainText("last 7 days of this window");
  await expect(slack).toContainText(/renewals|No renewals in this window/, { timeout: DATA_TIMEOUT_MS });
  await expect(slack).not.toContainText("could not be read");

  // The range line: from the UTC midnight 29 days before today's, to now.
  const range = page.getByTestId("utc-range").locator("time");
  const from = Date.parse((await range.first().getAttribute("datetime"))!);
  const to = Date.parse((await range.last().getAttribute("datetime"))!);
  expect(from % DAY, "the window starts at a UTC midnight").toBe(0);
  expect(Math.floor(to / DAY) * DAY - from).toBe(29 * DAY);

  const contention = chart(page, "Contention over time");
  await expect(contention.locator(".recharts-area-area").first()).toHaveAttribute("d", /\d/, { timeout: DATA_TIMEOUT_MS });
  await expect(contention.getByText("failed acquires per day, by prefix", { exact: false })).toBeVisible();
  await plot(page, "Contention over time").focus();
  // Focus starts on the newest bucket: today, named by its date.
  const live = readout(page, "Contention over time");
  await expect(live).toHaveText(/^\d{4}-\d\d-\d\d \(UTC day\): [\d,]+ failed acquires/);
  const today = new Date(Math.floor(to / DAY) * DAY).toISOString().slice(0, 10);
  await expect(live).toHaveText(new RegExp(`^${today} `));
  await page.keyboard.press("Home");
  await expect(live).toHaveText(new RegExp(`^${new Date(from).toISOString().slice(0, 10)} `));
  // A day opens the events of that day.
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/events\?/);
  const url = new URL(page.url());
  expect(Date.parse(url.searchParams.get("from")!)).toBe(from);
  expect(Date.parse(url.searchParams.get("to")!)).toBe(from + DAY);
});

test("a custom range past 7 days is widened to the whole UTC days it touches, and says what was asked", async ({ page }) => {
  const DAY = 86_400_000;
  const today = Math.floor(Date.now() / DAY) * DAY;
  const asked = { from: today - 12 * DAY + 10.5 * 60 * MINUTE, to: today - 3 * DAY + 9.25 * 60 * MINUTE };
  const minute = (t: number) => new Date(t).toISOString().slice(0, 16);
  await page.goto(`/?window=custom&from=${minute(asked.from)}Z&to=${minute(asked.to)}Z`);
  await expect(page.getByText("(daily buckets)")).toBeVisible();
  const note = page.getByTestId("whole-days");
  await expect(note).toContainText("widened to whole UTC days");
  await expect(note).toContainText(minute(asked.from).replace("T", " "));

  // The range line shows the days counted: from the midnight before `from` to the one after `to`.
  const range = page.getByTestId("utc-range").locator("time");
  expect(Date.parse((await range.first().getAttribute("datetime"))!)).toBe(today - 12 * DAY);
  expect(Date.parse((await range.last().getAttribute("datetime"))!)).toBe(today - 2 * DAY);
  // The custom form keeps the range as asked, so applying it again changes nothing.
  await expect(page.getByLabel("From (UTC)")).toHaveValue(minute(asked.from));
  await expect(page.getByLabel("To (UTC)")).toHaveValue(minute(asked.to));
  // Drill-down links open the days counted (ten days: within the event lists' 14).
  const href = await page.locator('main a[href^="/events?"]').first().getAttribute("href");
  const url = new URL(href!, "http://x");
  expect(url.searchParams.get("from")).toBe(new Date(today - 12 * DAY).toISOString());
  expect(url.searchParams.get("to")).toBe(new Date(today - 2 * DAY).toISOString());
});
