/**
 * API tokens end to end: the production console and a real sign-in create and
 * revoke a token, a real lock API server (started here, on the stack's Postgres
 * store and the console's tokens table) accepts and then refuses it, and the
 * audit log records every attempt, allowed or refused.
 */
import { expect, test, type APIRequestContext } from "@playwright/test";
import { freshOperatorTest } from "./support/sign-in";
import { randomBytes, randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { buildApiServer } from "../lib/api/server";
import { TokenStore } from "../lib/api/tokens";
import { PostgresLeaseStore } from "@leasewatch/lease";
import { getStackFacts } from "./support/control";
import { BASE_URL, ISSUER_URL, PG_STORE } from "./support/harness";

test.describe.configure({ mode: "serial" });

const RUN = randomUUID().slice(0, 8);

interface AuditEntryJson {
  id: string;
  action: string;
  outcome: string;
  actorId: string;
  resource: string | null;
  detail: string | null;
}

async function tokenEntries(request: APIRequestContext, name: string): Promise<AuditEntryJson[]> {
  const response = await request.get(`/api/audit?${new URLSearchParams({ prefix: name })}`);
  expect(response.status()).toBe(200);
  return ((await response.json()) as { items: AuditEntryJson[] }).items.filter((e) => e.action.startsWith("token_") && e.resource === name).reverse();
}

/** The form as the browser sends it, for hand-made requests. */
function createBody(name: string) {
  return { name, prefixes: [`e2e-tok-${RUN}:`], stores: [PG_STORE], actions: ["acquire", "release"], expiresInDays: 7 };
}

freshOperatorTest("operator creates a token (shown once), a worker uses it, the operator revokes it and the API refuses it", async ({ page }) => {
  test.setTimeout(90_000);
  const facts = await getStackFacts();
  const spec = facts.stores.find((s) => s.name === PG_STORE);
  if (!spec || spec.kind !== "postgres") throw new Error("the e2e stack has no Postgres store");
  // The lock API as `npm run api` runs it, on the stack's store and the console's tokens table (the console schema is the store's here).
  const store = new PostgresLeaseStore({ name: PG_STORE, connectionString: spec.url, schema: spec.schema });
  const tokens = new TokenStore({ url: spec.url, schema: spec.schema });
  let api: FastifyInstance | undefined;
  const name = `e2e-${RUN}-ops`;
  const prefix = `e2e-tok-${RUN}:`;
  try {
    api = buildApiServer({ stores: new Map([[PG_STORE, store]]), tokens, handleKey: randomBytes(32), logger: false });
    await api.listen({ port: 0, host: "127.0.0.1" });
    const apiUrl = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
    const acquire = (secret: string, resource: string) =>
      fetch(`${apiUrl}/v1/locks/acquire`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ resource, ownerId: "e2e-worker", task: "tokens-spec", ttlMs: 5_000 }),
      });

    await page.goto("/tokens");
    await expect(page.getByRole("heading", { level: 1, name: "API tokens" })).toBeVisible();
    await page.getByRole("button", { name: "New token" }).click();
    const form = page.getByRole("form", { name: "New API token" });
    await form.getByLabel("Name").fill(name);
    await form.getByLabel("Tenant prefixes").fill(prefix);
    // Only the Postgres store, two actions.
    for (const box of await form.getByRole("group", { name: "Stores" }).getByRole("checkbox").all()) await box.uncheck();
    await form.getByRole("checkbox", { name: PG_STORE }).check();
    for (const action of ["renew", "read", "report"]) await form.getByRole("checkbox", { name: action }).uncheck();
    await form.getByLabel("Expires in").selectOption("30");
    await form.getByRole("button", { name: "Create token" }).click();

    const shown = page.getByRole("region", { name: /created — copy it now/ });
    await expect(shown).toBeVisible();
    await expect(shown).toContainText("You will not see this again.");
    await expect(shown.getByRole("button", { name: "Copy the new API token" })).toBeVisible();
    const secret = (await shown.getByLabel("The new API token", { exact: true }).inputValue()).trim();
    expect(secret).toMatch(/^lwk_[A-Za-z0-9_-]{40,}$/);

    // The list shows the token and its scope, never the secret.
    const row = page.getByRole("row").filter({ hasText: name });
    await expect(row).toContainText("live");
    await expect(row).toContainText(prefix);
    await expect(row).toContainText("acquire, release");
    await expect(row).toContainText("alice");
    expect(await page.locator("table").innerText()).not.toContain(secret);

    // A worker in any language: the token works, within its tenant only.
    const inside = await acquire(secret, `${prefix}job-1`);
    expect(inside.status).toBe(200);
    expect(await inside.json()).toMatchObject({ acquired: true });
    expect((await acquire(secret, `e2e-other-tenant-${RUN}:job-1`)).status).toBe(404);

    // Shown once: after a reload it is gone from the page for good.
    await page.reload();
    await expect(page.getByRole("row").filter({ hasText: name })).toBeVisible();
    await expect(page.getByRole("region", { name: /created — copy it now/ })).toHaveCount(0);
    expect(await page.content()).not.toContain(secret);
    const listed = await page.request.get("/api/tokens");
    expect(await listed.text()).not.toContain(secret);

    // Revoke, with a confirm step.
    await row.getByRole("button", { name: `Revoke ${name}` }).click();
    const dialog = page.getByRole("dialog", { name: "Revoke this API token" });
    await expect(dialog).toContainText(prefix);
    await dialog.getByRole("button", { name: `Revoke ${name}` }).click();
    await expect(page.getByRole("status").filter({ hasText: `Token ${name} revoked` })).toBeVisible();
    await expect(page.getByRole("row").filter({ hasText: name })).toContainText("revoked");
    await expect(page.getByRole("row").filter({ hasText: name }).getByRole("button", { name: /Revoke/ })).toHaveCount(0);
    // The API refuses it within its cache's bound (≤ 1 s); polled, not timed.
    await expect.poll(async () => (await acquire(secret, `${prefix}job-2`)).status, { timeout: 5_000 }).toBe(401);

    // Both changes are in the audit log, with the operator as actor and no secret.
    const entries = await tokenEntries(page.request, name);
    expect(entries.map((e) => [e.action, e.outcome, e.actorId])).toEqual([
      ["token_create", "created", `${ISSUER_URL}#alice`],
      ["token_revoke", "revoked", `${ISSUER_URL}#alice`],
    ]);
    expect(JSON.stringify(entries)).not.toContain(secret);
    // And /audit shows them under the token-change filter.
    await page.goto(`/audit?${new URLSearchParams({ action: "token_revoke", prefix: name })}`);
    await expect(page.getByRole("row").filter({ hasText: name })).toContainText("token revoke");
  } finally {
    await api?.close();
    await tokens.close();
    await store.close();
  }
});

freshOperatorTest("a cross-origin POST and a POST without Origin are refused and audited; nothing is created", async ({ page }) => {
  const name = `e2e-${RUN}-csrf`;
  const forged = await page.request.post("/api/tokens", { data: createBody(name), headers: { origin: "https://evil.example" } });
  expect(forged.status()).toBe(403);
  expect(await forged.json()).toMatchObject({ ok: false, outcome: "refused", code: "cross_origin" });
  const noOrigin = await page.request.post("/api/tokens", { data: createBody(name) });
  expect(noOrigin.status()).toBe(403);
  const revoke = await page.request.post("/api/tokens/revoke", { data: { id: randomUUID() }, headers: { origin: "https://evil.example" } });
  expect(revoke.status()).toBe(403);
  const list = (await (await page.request.get("/api/tokens")).json()) as { items: Array<{ name: string }> };
  expect(list.items.map((t) => t.name)).not.toContain(name);
  expect((await tokenEntries(page.request, name)).map((e) => [e.action, e.outcome])).toEqual([
    ["token_create", "invalid_input"],
    ["token_create", "invalid_input"],
  ]);
  // With the console's own Origin the same request goes through: the check is what refused the others.
  const own = await page.request.post("/api/tokens", { data: createBody(name), headers: { origin: BASE_URL } });
  expect(own.status()).toBe(201);
  const created = (await own.json()) as { token: { id: string } };
  const revoked = await page.request.post("/api/tokens/revoke", { data: { id: created.token.id }, headers: { origin: BASE_URL } });
  expect(revoked.status()).toBe(200);
});

freshOperatorTest("bad input gets a 400 that names the field; an unknown token a 404", async ({ page }) => {
  const name = `e2e-${RUN}-bad`;
  const tooLong = await page.request.post("/api/tokens", { data: { ...createBody(name), expiresInDays: 3650 }, headers: { origin: BASE_URL } });
  expect(tooLong.status()).toBe(400);
  expect(await tooLong.json()).toMatchObject({ code: "invalid_input", issues: [{ field: "expiresInDays", message: expect.stringContaining("at most 365 days") }] });
  const unknownStore = await page.request.post("/api/tokens", { data: { ...createBody(name), stores: ["nowhere"] }, headers: { origin: BASE_URL } });
  expect(unknownStore.status()).toBe(400);
  expect(JSON.stringify(await unknownStore.json())).not.toMatch(/\n\s+at\s|node_modules/);
  const unknown = await page.request.post("/api/tokens/revoke", { data: { id: randomUUID() }, headers: { origin: BASE_URL } });
  expect(unknown.status()).toBe(404);
  expect(await unknown.json()).toMatchObject({ code: "not_found", message: "No token has this id." });
});

test("viewer: creating is disabled with the reason, and hand-made POSTs are refused with 403 and audited @viewer", async ({ page }) => {
  const name = `e2e-${RUN}-viewer`;
  await page.goto("/tokens");
  await expect(page.getByRole("heading", { level: 1, name: "API tokens" })).toBeVisible();
  await expect(page.getByRole("button", { name: "New token" })).toBeDisabled();
  await expect(page.getByText("Creating and revoking API tokens needs the operator role.")).toBeVisible();

  const forged = await page.request.post("/api/tokens", { data: createBody(name), headers: { origin: BASE_URL } });
  expect(forged.status()).toBe(403);
  expect(await forged.json()).toMatchObject({ ok: false, outcome: "refused", code: "forbidden" });
  const revoke = await page.request.post("/api/tokens/revoke", { data: { id: randomUUID() }, headers: { origin: BASE_URL } });
  expect(revoke.status()).toBe(403);

  const list = (await (await page.request.get("/api/tokens")).json()) as { items: Array<{ name: string }> };
  expect(list.items.map((t) => t.name)).not.toContain(name);
  const entries = await tokenEntries(page.request, name);
  expect(entries.map((e) => [e.action, e.outcome, e.actorId])).toEqual([["token_create", "denied_role", `${ISSUER_URL}#bob`]]);
});
