/**
 * Observed locks in the rest of the console: an advisory lock taken by hand in a
 * real session is counted on the overview, listed in /events as an observed
 * event, found by the jump box (which opens its own page, with holder, waiter
 * and timeline), and still shown at `?at=` for an instant it was held after it
 * is gone.
 */
import { randomInt } from "node:crypto";
import { expect, test, type Page } from "@playwright/test";
import { observedLockHref } from "@/lib/console/shared/links";
import { readStoreConfigs } from "./support/control";
import { pgSessions } from "./support/pg-sessions";
import { PG_STORE } from "./support/harness";

/** The observer samples every 2 s in the stack; ten seconds is the promise to a person. */
const OBSERVED_TIMEOUT_MS = 10_000;
const OBSERVED_STORE = "pg-advisory";

const sessions = pgSessions();

test.afterAll(() => sessions.closeAll());

async function screenshots(page: Page, name: string, outputPath: (name: string) => string) {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: outputPath(`${name}-${scheme}.png`), fullPage: true });
  }
  await page.emulateMedia({ colorScheme: "light" });
}

test("an observed lock shows on the overview, in /events, through the jump box, and at ?at=", async ({ page }, testInfo) => {
  test.setTimeout(120_000);
  const config = (await readStoreConfigs()).find((c) => c.name === PG_STORE);
  if (!config || config.kind !== "postgres") throw new Error(`no ${PG_STORE} in the stack`);
  const key = String(randomInt(100_000_000, 2 ** 40));
  const name = `advisory:${key}`;
  const holder = await sessions.open(config.url, "e2e-observed-holder");
  const waiter = await sessions.open(config.url, "e2e-observed-waiter");
  await holder.client.query("SELECT pg_advisory_lock($1::bigint)", [key]);
  void waiter.client.query("SELECT pg_advisory_lock($1::bigint)", [key]).catch(() => {});

  // Held and sampled: its row on /observed links to its page.
  await page.goto("/observed");
  const row = page.getByRole("region", { name: /^pg-advisory/ }).getByRole("row").filter({ hasText: name });
  await expect(row).toContainText("1 waiting", { timeout: OBSERVED_TIMEOUT_MS });
  const heldAt = new Date().toISOString();

  // The overview counts it under its observed store, and says what sampling misses.
  await page.goto("/");
  const section = page.getByRole("region", { name: /^Observed locks/ });
  await expect(section).toContainText("holds shorter than that may be missed");
  const storeRow = section.getByRole("row").filter({ has: page.getByRole("link", { name: OBSERVED_STORE }) });
  await expect(storeRow).toContainText("waiting");
  await screenshots(page, "overview-observed", (n) => testInfo.outputPath(n));

  // /events lists its appearance as an observed event, filtered to its store and name.
  await page.goto(`/events?store=${OBSERVED_STORE}&resource=${encodeURIComponent(name)}`);
  const observedEvents = page.getByRole("region", { name: /^Observed events/ });
  const appeared = observedEvents.getByRole("row").filter({ hasText: name }).filter({ hasText: "appeared" });
  await expect(appeared).toContainText(`pid ${holder.pid} · e2e-observed-holder`);
  await expect(appeared).toContainText("observed");
  await screenshots(page, "events-observed", (n) => testInfo.outputPath(n));

  // The jump box opens its page: holder, the waiting session, and the timeline.
  const box = page.getByRole("searchbox", { name: /Jump to/ });
  await box.fill(name);
  await box.press("Enter");
  await expect(page).toHaveURL((url) => url.pathname === observedLockHref(OBSERVED_STORE, name));
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(name);
  await expect(page.getByRole("region", { name: "Holder", exact: true })).toContainText(`pid ${holder.pid} · e2e-observed-holder`);
  await expect(page.getByRole("region", { name: /^Wait chain/ })).toContainText(`pid ${waiter.pid}`);
  await expect(page.getByRole("region", { name: "Holder timeline" }).getByRole("row").filter({ hasText: "appeared" })).toBeVisible();
  await screenshots(page, "observed-lock", (n) => testInfo.outputPath(n));

  // Released: the waiter takes it, then it is gone; ?at= an instant it was held still shows the first holder.
  await holder.client.query("SELECT pg_advisory_unlock($1::bigint)", [key]);
  await waiter.client.query("SELECT pg_advisory_unlock($1::bigint)", [key]);
  await page.goto(observedLockHref(OBSERVED_STORE, name));
  await expect(async () => {
    await page.reload();
    await expect(page.getByRole("region", { name: "Holder", exact: true })).toContainText("Not held at the last sample", { timeout: 1_000 });
  }).toPass({ timeout: OBSERVED_TIMEOUT_MS });

  await page.goto(`/observed?at=${encodeURIComponent(heldAt)}`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Observed locks at");
  const pastRow = page.getByRole("region", { name: /^pg-advisory/ }).getByRole("row").filter({ hasText: name });
  await expect(pastRow).toContainText(`pid ${holder.pid} · e2e-observed-holder`);
  await screenshots(page, "observed-at", (n) => testInfo.outputPath(n));

  // The overview at that instant counts it too, and links to that instant's observed view.
  await page.goto(`/?at=${encodeURIComponent(heldAt)}`);
  const pastSection = page.getByRole("region", { name: /^Observed locks/ });
  await expect(pastSection).toContainText("at ");
  await expect(pastSection.getByRole("link", { name: OBSERVED_STORE })).toHaveAttribute("href", `/observed?at=${encodeURIComponent(new Date(heldAt).toISOString())}`);
});
