import { expect, test as base, type Page } from "@playwright/test";
import { BASE_URL, ISSUER_URL } from "./harness";

/**
 * Signs in through the real flow: the console's sign-in page → the local IdP's
 * login form (demo users accept any password) → back to the console.
 * Resolves once the browser is back on the console after the callback.
 */
export async function signInThroughIdp(page: Page, username: string, options: { from?: string } = {}): Promise<void> {
  // The IdP's stock form imports a web font; there is no internet here, so fail that request fast.
  await page.route(/fonts\.googleapis\.com/, (route) => route.abort());
  await page.goto(options.from ?? "/signin");
  await page.getByRole("button", { name: "Sign in with SSO" }).click();
  await page.waitForURL(`${ISSUER_URL}/**`);
  await page.getByPlaceholder("Enter any login").fill(username);
  await page.getByPlaceholder("and password").fill("any-password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.waitForURL(`${BASE_URL}/**`);
  await expect(page).not.toHaveURL(/\/api\/auth\/callback/);
}

/**
 * A test whose `page` is alice signed in just now, in a context of her own: for mutations that
 * ask for a sign-in from the last 15 minutes, however long the suite has run since the setup
 * project signed in (re-authenticating the shared session instead would end it for every other test).
 */
export const freshOperatorTest = base.extend<{ page: Page }>({
  page: async ({ browser, viewport, colorScheme }, provide) => {
    const context = await browser.newContext({ storageState: { cookies: [], origins: [] }, viewport, colorScheme });
    const page = await context.newPage();
    await signInThroughIdp(page, "alice");
    await provide(page);
    await context.close();
  },
});

