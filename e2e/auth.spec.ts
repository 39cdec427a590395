import AxeBuilder from "@axe-core/playwright";
import { expect, request as playwrightRequest, test } from "@playwright/test";
import { decode, encode } from "next-auth/jwt";
import { SessionStore } from "../lib/auth/session-store";
import { DEMO_CLIENT_SECRET } from "../lib/auth/env";
import { CAROL_GROUPS, getStackFacts, setIdpGroups } from "./support/control";
import { BASE_URL, E2E_NEXTAUTH_SECRET, ISSUER_URL, PG_STORE } from "./support/harness";
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

test("an unverified email is no identity: eve, whose IdP account claims alice's address, acts and is found only as eve", async ({ browser }) => {
  const context = await browser.newContext({ storageState: SIGNED_OUT });
  const page = await context.newPage();
  await signInThroughIdp(page, "eve");
  await expect(page.getByTestId("user-name")).toHaveText("eve");
  const { user } = (await (await page.request.get("/api/auth/session")).json()) as { user: { id: string; email: string | null } };
  expect(user).toMatchObject({ id: `${ISSUER_URL}#eve`, email: null });

  // Something eve does goes on record: she creates (and revokes) an API token.
  const name = `e2e-eve-${Date.now()}`;
  const created = await page.request.post("/api/tokens", {
    data: { name, prefixes: ["e2e-eve:"], stores: [PG_STORE], actions: ["acquire"], expiresInDays: 1 },
    headers: { origin: BASE_URL },
  });
  expect(created.status()).toBe(201);
  const { token } = (await created.json()) as { token: { id: string; createdBy: string } };
  expect(token.createdBy).toBe(`${ISSUER_URL}#eve`);
  expect((await page.request.post("/api/tokens/revoke", { data: { id: token.id }, headers: { origin: BASE_URL } })).status()).toBe(200);

  // Looked up as alice (her email or her id), none of it is there; as eve, all of it.
  const entriesAs = async (actor: string) => {
    const answer = await page.request.get(`/api/audit?${new URLSearchParams({ actor, resource: name })}`);
    expect(answer.status()).toBe(200);
    return ((await answer.json()) as { items: Array<{ action: string; actorId: string; actorEmail: string | null }> }).items;
  };
  expect(await entriesAs("alice@example.test")).toEqual([]);
  expect(await entriesAs(`${ISSUER_URL}#alice`)).toEqual([]);
  expect((await entriesAs(`${ISSUER_URL}#eve`)).map((e) => [e.action, e.actorId, e.actorEmail])).toEqual([
    ["token_revoke", `${ISSUER_URL}#eve`, null],
    ["token_create", `${ISSUER_URL}#eve`, null],
  ]);
  // The audit page names her eve, with the id she is recorded by.
  await page.goto(`/audit?${new URLSearchParams({ resource: name })}`);
  const actors = page.getByRole("table", { name: /Audit entries/ }).getByTitle(`${ISSUER_URL}#eve`, { exact: false });
  await expect(actors).toHaveCount(2);
  await expect(actors.first()).toContainText("eve");
  await expect(actors.first()).not.toContainText("alice");
  await context.close();
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

const SESSION_COOKIE = "next-auth.session-token";
/** The e2e stack's client at the demo IdP (scripts/oidc-provider.ts's defaults). */
const DEMO_CLIENT_ID = "leasewatch-console";

test.describe("sessions that can be taken away", () => {
  test("a copied session cookie stops working after sign-out", async ({ browser }) => {
    const context = await browser.newContext({ storageState: SIGNED_OUT });
    const page = await context.newPage();
    await signInThroughIdp(page, "alice");
    const copied = await context.cookies();
    const thief = await browser.newContext({ storageState: { cookies: copied, origins: [] } });
    // The copy works while the session lives…
    expect((await thief.request.get("/api/health")).status()).toBe(200);

    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(/\/signin/);

    // …and not after sign-out: the server revoked the session, not just the browser's cookie.
    expect((await thief.request.get("/api/health")).status()).toBe(401);
    const thiefPage = await thief.newPage();
    await thiefPage.goto("/locks");
    await expect(thiefPage).toHaveURL(/\/signin\?callbackUrl=%2Flocks/);
    await thief.close();
    await context.close();
  });

  test("sign-out revokes the refresh token at the IdP, so it cannot mint new access tokens", async ({ browser }) => {
    const context = await browser.newContext({ storageState: SIGNED_OUT });
    const page = await context.newPage();
    await signInThroughIdp(page, "alice");
    const claims = await decode({ token: (await context.cookies()).find((c) => c.name === SESSION_COOKIE)!.value, secret: E2E_NEXTAUTH_SECRET });
    // The refresh token the console holds for this session (sealed in its session record).
    const pgStore = (await getStackFacts()).stores.find((s) => s.kind === "postgres")!;
    const sessions = new SessionStore({ url: pgStore.url, schema: pgStore.kind === "postgres" ? pgStore.schema : "", secret: E2E_NEXTAUTH_SECRET });
    const refreshToken = (await sessions.get(claims!.sid as string))?.refreshToken;
    await sessions.close();
    expect(refreshToken, "the session's refresh token").toBeTruthy();
    const refresh = () =>
      fetch(`${ISSUER_URL}/token`, {
        method: "POST",
        headers: { authorization: `Basic ${Buffer.from(`${DEMO_CLIENT_ID}:${DEMO_CLIENT_SECRET}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken! }),
      });
    expect((await refresh()).status).toBe(200);

    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(/\/signin/);

    const refused = await refresh();
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error?: string }).error).toBe("invalid_grant");
    await context.close();
  });

  test("a session ends at its absolute lifetime (8 h after sign-in), however fresh the cookie", async ({ browser }) => {
    const context = await browser.newContext({ storageState: SIGNED_OUT });
    const page = await context.newPage();
    await signInThroughIdp(page, "alice");
    const cookie = (await context.cookies()).find((c) => c.name === SESSION_COOKIE);
    expect(cookie, "session cookie").toBeTruthy();
    const claims = await decode({ token: cookie!.value, secret: E2E_NEXTAUTH_SECRET });
    expect(typeof claims?.signedInAt).toBe("number");

    // Re-issued with the secret (as next-auth does on every refresh): still the same live session…
    const reissued = await encode({ token: { ...claims! }, secret: E2E_NEXTAUTH_SECRET });
    // …and one whose sign-in was 8 h and a minute ago, with a brand-new cookie expiry.
    const aged = await encode({ token: { ...claims!, signedInAt: Date.now() - (8 * 60 + 1) * 60_000 }, secret: E2E_NEXTAUTH_SECRET });
    const withCookie = (value: string) => browser.newContext({ storageState: { cookies: [{ ...cookie!, value }], origins: [] } });

    const fresh = await withCookie(reissued);
    expect((await fresh.request.get("/api/health")).status()).toBe(200);
    const old = await withCookie(aged);
    expect((await old.request.get("/api/health")).status()).toBe(401);
    const oldPage = await old.newPage();
    await oldPage.goto("/");
    await expect(oldPage).toHaveURL(/\/signin/);
    await Promise.all([fresh.close(), old.close(), context.close()]);
  });

  test("roles follow the IdP: a removed group takes effect on every page without signing out", async ({ browser }) => {
    // A sign-in plus two waits of up to 15 s for the change to show.
    test.setTimeout(90_000);
    // carol is the one user whose groups tests change (see e2e/support/control.ts).
    const context = await browser.newContext({ storageState: SIGNED_OUT });
    const page = await context.newPage();
    await signInThroughIdp(page, "carol");
    await expect(page.getByTestId("user-role")).toHaveText("operator");
    try {
      // The e2e stack re-reads groups every 2 s (LEASEWATCH_GROUPS_REFRESH; default 60 s, at most 300 s).
      await setIdpGroups("carol", ["leasewatch-viewers"]);
      await expect
        .poll(async () => {
          await page.reload();
          return page.getByTestId("user-role").textContent();
        }, { timeout: 15_000 })
        .toBe("viewer");

      await setIdpGroups("carol", []);
      await expect.poll(async () => (await page.request.get("/api/health")).status(), { timeout: 15_000 }).toBe(403);
      await page.goto("/locks");
      await expect(page).toHaveURL(/\/signin\/not-authorised$/);
    } finally {
      await setIdpGroups("carol", CAROL_GROUPS);
      await context.close();
    }
  });
});

test("re-authentication makes the IdP ask for the password again, comes back to the same page, and ends the old session", async ({ browser }) => {
  const context = await browser.newContext({ storageState: SIGNED_OUT });
  const page = await context.newPage();
  await signInThroughIdp(page, "alice");
  const before = await decode({ token: (await context.cookies()).find((c) => c.name === SESSION_COOKIE)!.value, secret: E2E_NEXTAUTH_SECRET });
  // A copy of the cookie from before the re-authentication works until then.
  const copied = await browser.newContext({ storageState: { cookies: await context.cookies(), origins: [] } });
  expect((await copied.request.get("/api/health")).status()).toBe(200);

  const from = "/locks?prefix=tenant_1";
  await page.goto(`/signin/reauth?${new URLSearchParams({ callbackUrl: from })}`);
  await expect(page.getByRole("heading", { name: "Confirm it’s you" })).toBeVisible();
  await page.getByRole("button", { name: "Sign in again" }).click();
  // The IdP still has alice's session, yet shows its login form (prompt=login, max_age=0).
  await page.waitForURL(`${ISSUER_URL}/**`);
  const authorize = page.url();
  await page.getByPlaceholder("Enter any login").fill("alice");
  await page.getByPlaceholder("and password").fill("any-password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await expect(page).toHaveURL(`${BASE_URL}${from}`);
  await expect(page.getByTestId("user-name")).toHaveText("alice");

  const after = await decode({ token: (await context.cookies()).find((c) => c.name === SESSION_COOKIE)!.value, secret: E2E_NEXTAUTH_SECRET });
  expect(after?.sid).not.toBe(before?.sid);
  expect(after!.signedInAt as number).toBeGreaterThan(before!.signedInAt as number);
  expect(authorize).toBeTruthy();
  // The session it replaced is revoked on the server: the copied cookie is nobody now.
  expect((await copied.request.get("/api/health")).status()).toBe(401);
  const copiedPage = await copied.newPage();
  await copiedPage.goto("/locks");
  await expect(copiedPage).toHaveURL(/\/signin\?callbackUrl=%2Flocks/);
  // The new one works.
  expect((await page.request.get("/api/health")).status()).toBe(200);
  await Promise.all([copied.close(), context.close()]);
});

test.describe("callbackUrl", () => {
  const ATTACKS = [
    "//evil.example/",
    "/\\evil.example/",
    "https://evil.example/",
    "/\t/evil.example/",
    "javascript:alert(document.domain)",
    "/%0d%0aSet-Cookie:%20stolen=1",
    `${BASE_URL}@evil.example/`,
  ];

  test("a signed-in visit to /signin never sends the browser off the console", async ({ page }) => {
    // Seven full navigations, each ending on the overview with its charts.
    test.setTimeout(90_000);
    // The requests the browser makes anywhere but the console are failed on the spot and recorded.
    const offConsole: string[] = [];
    await page.route((url) => url.origin !== BASE_URL, (route) => {
      offConsole.push(route.request().url());
      return route.abort();
    });
    for (const attack of ATTACKS) {
      await page.goto(`/signin?${new URLSearchParams({ callbackUrl: attack })}`);
      await expect(page, attack).toHaveURL(`${BASE_URL}/`);
      await expect(page.getByTestId("user-name"), attack).toHaveText("alice");
    }
    expect(offConsole).toEqual([]);
  });

  test.describe("signed out", () => {
    test.use({ storageState: SIGNED_OUT });

    test("next-auth keeps only same-origin targets through the IdP round trip", async ({ page, request }) => {
      for (const attack of ATTACKS) {
        const { csrfToken } = (await (await request.get("/api/auth/csrf")).json()) as { csrfToken: string };
        const response = await request.post("/api/auth/signin/oidc", { form: { csrfToken, callbackUrl: attack, json: "true" } });
        expect(response.ok(), attack).toBe(true);
        const kept = (await request.storageState()).cookies.find((c) => c.name === "next-auth.callback-url");
        const target = new URL(decodeURIComponent(kept?.value ?? ""));
        expect(target.origin, attack).toBe(BASE_URL);
        expect(target.href, attack).not.toMatch(/evil|javascript|%0d%0a/i);
      }
      // And the whole round trip, from a sign-in link carrying an attack, ends on the console.
      await signInThroughIdp(page, "bob", { from: `/signin?${new URLSearchParams({ callbackUrl: "/\t/evil.example/" })}` });
      expect(new URL(page.url()).origin).toBe(BASE_URL);
    });
  });
});

test.describe("security headers", () => {
  const expectCommonHeaders = (headers: Record<string, string>, what: string) => {
    expect(headers["x-content-type-options"], what).toBe("nosniff");
    expect(headers["referrer-policy"], what).toBe("same-origin");
    expect(headers["x-frame-options"], what).toBe("DENY");
    expect(headers["content-security-policy"], what).toContain("frame-ancestors 'none'");
    // Served over plain http here: no HSTS.
    expect(headers["strict-transport-security"], what).toBeUndefined();
  };

  test("every response carries them: pages, API routes, sign-in, assets", async ({ page }) => {
    const response = await page.goto("/");
    const headers = response!.headers();
    expectCommonHeaders(headers, "page");
    const nonce = /'nonce-([^']+)'/.exec(headers["content-security-policy"] ?? "")?.[1];
    expect(nonce, "a script nonce in the page's CSP").toBeTruthy();
    expect(headers["content-security-policy"]).not.toMatch(/script-src[^;]*'unsafe-(inline|eval)'/);
    // Next.js put that nonce on every script of the server's HTML (scripts its loader adds later run under 'strict-dynamic')…
    const html = await response!.text();
    const scriptTags = html.match(/<script\b[^>]*>/g) ?? [];
    expect(scriptTags.length).toBeGreaterThan(0);
    expect(scriptTags.filter((tag) => !tag.includes(`nonce="${nonce}"`))).toEqual([]);
    // …and a new one is made for every response.
    const again = (await page.request.get("/")).headers()["content-security-policy"] ?? "";
    expect(again).toMatch(/'nonce-[^']+'/);
    expect(again).not.toContain(`'nonce-${nonce}'`);

    for (const path of ["/api/health", "/api/leases", "/api/auth/session", "/signin"]) {
      expectCommonHeaders((await page.request.get(path)).headers(), path);
    }
    const anonymous = await playwrightRequest.newContext({ baseURL: BASE_URL, storageState: SIGNED_OUT });
    const signedOut = await anonymous.get("/api/health");
    expect(signedOut.status()).toBe(401);
    expectCommonHeaders(signedOut.headers(), "401 API response");
    await anonymous.dispose();
    const script = await page.locator("script[src]").first().getAttribute("src");
    expectCommonHeaders((await page.request.get(script!)).headers(), `asset ${script}`);

    // Behind a TLS proxy, HSTS is added.
    const viaTls = await page.request.get("/api/health", { headers: { "x-forwarded-proto": "https" } });
    expect(viaTls.headers()["strict-transport-security"]).toMatch(/max-age=\d+/);
  });

  test("the console runs under its CSP: no violations while pages render charts and poll", async ({ page }) => {
    const csp = (await page.request.get("/")).headers()["content-security-policy"] ?? "";
    // Inline <style> elements need the page's nonce; only style attributes (React's style={…}) stay allowed.
    expect(csp).toMatch(/style-src 'self' 'nonce-[^']+'(;|$)/);
    expect(csp).not.toMatch(/style-src [^;]*'unsafe-inline'/);
    const violations: string[] = [];
    page.on("console", (message) => {
      if (/content security policy|refused to (execute|load|apply|connect)/i.test(message.text())) violations.push(message.text());
    });
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (event) => console.error(`Content Security Policy violation: ${event.violatedDirective} ${event.blockedURI}`));
    });

    // The overview's charts render and TanStack Query polls: both need the page's scripts to run.
    const polled = page.waitForResponse((r) => r.url().includes("/api/overview") && r.status() === 200, { timeout: 20_000 });
    await page.goto("/");
    await polled;
    await expect(page.locator(".recharts-surface").first()).toBeVisible();
    for (const path of ["/locks", "/events"]) {
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: path === "/locks" ? "Leases" : "Events" }).click();
      await expect(page).toHaveURL(new RegExp(`${path}$`));
      await page.waitForLoadState("load");
    }
    // A script the policy blocked would show up as an error of the page.
    expect(pageErrors).toEqual([]);
    // Full loads too: the server's HTML carries the style attributes and <style> elements the policy judges.
    for (const path of ["/", "/locks", "/events", "/advice", "/audit", "/tokens"]) {
      await page.goto(path);
      await page.waitForLoadState("load");
    }
    expect(violations).toEqual([]);
  });
});
