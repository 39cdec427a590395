/**
 * Following an alert: each example link in ops/alerts.yml, filled in as Prometheus
 * would for an alert on the test stores, opens in the browser on the right page with the
 * alert's store, prefix, state and window, and keeps `at=` (the alert's start) in the URL.
 */
import { expect, test } from "@playwright/test";
import { ALERT_LINKS, fillTemplates, RULES_BASE } from "../test/support/alert-links";
import { PG_STORE } from "./support/harness";

const LABELS: Record<string, string> = {
  store: PG_STORE,
  kind: "postgres",
  prefix: "tenant_1:billing close",
  prefix_group: "tenant_1:billing close",
  state: "overdue",
};
// Ten minutes ago, in whole seconds: what an alert that started then carries.
const AT = new Date(Math.floor(Date.now() / 1000) * 1000 - 10 * 60_000).toISOString().replace(".000Z", "Z");

// /locks with at= is the past view (what was held at the alert's start): its form takes the
// store, prefix and instant; the alert's state is a live filter, kept for "Back to now".
const FORM_FIELDS: Record<string, Record<string, string>> = {
  "/locks": { store: "Store", prefix: "Prefix", at: "Instant (UTC, ISO 8601)" },
  "/events": { store: "Store", prefix: "Resource prefix", window: "Window" },
};

for (const { alert, name, link } of ALERT_LINKS) {
  test(`the ${alert} alert's ${name} link lands on its store, prefix, window and moment`, async ({ page }) => {
    const expected = new URL(fillTemplates(link, LABELS, AT).replace(RULES_BASE, "http://x"));
    expect(expected.searchParams.get("at")).toBe(AT);
    await page.goto(`${expected.pathname}${expected.search}`);

    const landed = new URL(page.url());
    expect(landed.pathname).toBe(expected.pathname);
    for (const [key, value] of expected.searchParams) expect(landed.searchParams.get(key), key).toBe(value);
    await expect(page.getByRole("alert").filter({ hasText: "Can’t show" })).toHaveCount(0);

    // The page took the filters: they show in its form (the overview's window is its toolbar).
    for (const [param, label] of Object.entries(FORM_FIELDS[expected.pathname] ?? {})) {
      const value = expected.searchParams.get(param);
      const shown = param === "at" && value !== null ? new Date(value).toISOString() : value;
      if (shown !== null) await expect(page.getByLabel(label, { exact: true }), `${param} field`).toHaveValue(shown);
    }
    if (expected.pathname === "/locks") {
      await expect(page.getByRole("note", { name: "Past view" })).toBeVisible();
      const now = new URL((await page.getByRole("link", { name: "Back to now" }).getAttribute("href"))!, "http://x");
      expect(now.pathname).toBe("/locks");
      expect(now.searchParams.has("at"), "Back to now leaves the past").toBe(false);
      for (const key of ["store", "prefix", "state"]) expect(now.searchParams.get(key), `Back to now keeps ${key}`).toBe(expected.searchParams.get(key));
    }
    if (expected.pathname === "/") {
      await expect(page.getByRole("toolbar", { name: "Window" }).getByRole("button", { pressed: true })).toHaveText(expected.searchParams.get("window")!);
    }
  });
}
