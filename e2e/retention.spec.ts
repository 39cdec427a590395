/**
 * Retention on the events page: once a Postgres store has dropped old days of raw events, a
 * window that reaches back past them says so (which store, from when, and that the charts still
 * count them) instead of showing a short list as if that were all that happened.
 * The drop is simulated by recording the retention boundary two days back; the stack's own
 * events are all newer, so nothing else the specs read changes.
 */
import { expect, test } from "@playwright/test";
import pg from "pg";
import { pauseLiveUpdates, scopedAxe } from "./support/axe";
import { getStackFacts } from "./support/control";
import { PG_STORE } from "./support/harness";

const DAY_MS = 86_400_000;

test("the events page says which store no longer keeps the start of the window", async ({ page }) => {
  // Three page loads and an axe scan: on a busy machine that is more than the default minute.
  test.setTimeout(120_000);
  const facts = await getStackFacts();
  const store = facts.stores.find((s) => s.kind === "postgres" && s.name === PG_STORE);
  if (!store || store.kind !== "postgres") throw new Error(`no ${PG_STORE} in the stack`);
  const pool = new pg.Pool({ connectionString: store.url, max: 1 });
  pool.on("error", () => {});
  const boundary = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - 2 * DAY_MS);
  await pool.query(
    `INSERT INTO "${store.schema}".lease_event_retention (id, dropped_until) VALUES (true, $1)
     ON CONFLICT (id) DO UPDATE SET dropped_until = EXCLUDED.dropped_until`,
    [boundary],
  );
  try {
    await page.goto("/events?window=7d");
    const notice = page.getByTestId("retention-notice").getByRole("status");
    await expect(notice).toContainText("Part of this window is older than the events kept.");
    await expect(notice).toContainText(`${PG_STORE}: its events before ${boundary.toISOString().replace("T", " ").replace("Z", "")} UTC are no longer stored`);
    await expect(notice.getByRole("link", { name: "overview charts" })).toHaveAttribute("href", "/?window=7d");
    const shots = process.env.SCREENSHOT_DIR;
    if (shots) {
      for (const scheme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.screenshot({ path: `${shots}/events-retention-${scheme}.png` });
      }
      await page.emulateMedia({ colorScheme: "light" });
    }

    // A window inside what is kept: no notice.
    await page.goto("/events?window=24h");
    await expect(page.getByRole("heading", { name: "Events", exact: true })).toBeVisible();
    await expect(page.getByTestId("retention-notice")).toHaveCount(0);

    await page.goto("/events?window=7d");
    await expect(notice).toBeVisible();
    await pauseLiveUpdates(page);
    const results = await scopedAxe(page).analyze();
    expect(results.violations.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([]);
  } finally {
    await pool.query(`DELETE FROM "${store.schema}".lease_event_retention`);
    await pool.end();
  }
});
