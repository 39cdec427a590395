import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";
import { signInThroughIdp } from "./support/sign-in";

const SIGNED_OUT = { cookies: [], origins: [] };

test.describe("signed out", () => {
  test.use({ storageState: SIGNED_OUT });

  test("a page sends you to sign-in and back afterwards", async ({ page }) => {
    await page.goto("/events?kind=expired");
    await expect(page).toHaveURL(/\/signin\?callbackUrl=%2Fevents%3Fkind%3Dexpired/);
    await expect(page.getByRole("heading", { name: "Sign in to Leasewatch" })).toBeVisible();
    await expect(page.getByRole("button", { name: "Sign in with SSO" })).toBeVisible();
    // Nothing of the console leaks before sign-in.
    await expect(page.getByRole("navigation", { name: "Main" })).toHaveCount(0);
  });

  test("the API answers 401 without a session", async ({ request }) => {
    const response = await request.get("/api/health");
    expect(response.status()).toBe(401);
    expect(await response.json()).toEqual({ error: "not signed in" });
  });

  test("a user without a Leasewatch group is not authorised", async ({ page }) => {
    await signInThroughIdp(page, "mallory");
    await expect(page).toHaveURL(/\/signin\/not-authorised$/);
    await expect(page.getByRole("heading", { name: "Not authorised" })).toBeVisible();
    // Which IdP groups grant access is not disclosed to someone without access.
    const text = await page.locator("body").innerText();
    expect(text).not.toMatch(/leasewatch-(operators|viewers)|→ (operator|viewer)/);
    // No session was created: the console still asks for sign-in.
    await page.goto("/");
    await expect(page).toHaveURL(/\/signin/);
    expect((await page.request.get("/api/health")).status()).toBe(401);
  });

  test("signing in returns to the page first asked for", async ({ page }) => {
    await signInThroughIdp(page, "alice", { from: "/locks?prefix=tenant" });
    await expect(page).toHaveURL(/\/locks\?prefix=tenant$/);
    await expect(page.getByTestId("user-role")).toHaveText("operator");
  });
});

test("@viewer bob sees his name and role, and every store's health, in the header", async ({ page }) => {
  await page.goto("/");
  const header = page.getByRole("banner");
  await expect(header.getByTestId("user-name")).toHaveText("bob");
  await expect(header.getByTestId("user-role")).toHaveText("viewer");
  const health = header.getByRole("list", { name: "Store health" });
  await expect(health.getByText(/^pg-main (up|down)$/)).toBeVisible();
  await expect(health.getByText(/^redis-main (up|down)$/)).toBeVisible();
  const api = await page.request.get("/api/health");
  expect(api.status()).toBe(200);
  const body = (await api.json()) as { stores: Array<{ store: string; ok: boolean }> };
  expect(body.stores.map((s) => s.store)).toEqual(["pg-main", "redis-main"]);
});

test("the signed-in shell is keyboard reachable and has no serious accessibility violations", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByTestId("user-name")).toHaveText("alice");
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Skip to content" })).toBeFocused();
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Overview" })).toHaveAttribute("aria-current", "page");

  // The shell: skip link, header (nav, store health, user) and the store-down banner.
  // Page content has its own checks in the page specs.
  const results = await new AxeBuilder({ page }).exclude("#main").analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
});

test("sign out ends the session", async ({ browser }) => {
  // A fresh sign-in, so ending it does not touch the shared operator session.
  const context = await browser.newContext({ storageState: SIGNED_OUT });
  const page = await context.newPage();
  await signInThroughIdp(page, "alice");
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin/);
  await page.goto("/");
  await expect(page).toHaveURL(/\/signin/);
  await context.close();
});
