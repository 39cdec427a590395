/**
 * A console role scoped to one tenant, end to end: dave's IdP group is mapped to
 * `team-billing:operator:tenant_1:*` (the demo role map), so he signs in through
 * the real IdP as an operator who sees — and may end — tenant_1's leases only.
 * The workload writes every tenant's leases beside this run's own two (one per
 * tenant, on pg-main), so a page that forgot the scope would show the others.
 */
import { expect, test, type BrowserContext, type Page } from "@playwright/test";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { TokenStore } from "../lib/api/tokens";
import { type Lease, PostgresLeaseStore } from "@leasewatch/lease";
import { getStackFacts, setIdpGroups } from "./support/control";
import { BASE_URL, ISSUER_URL, PG_STORE, type StackFacts } from "./support/harness";
import { signInThroughIdp } from "./support/sign-in";

test.describe.configure({ mode: "serial" });

const RUN = randomUUID().slice(0, 8);
const OWNER = `e2e-scoped-${RUN}`;
const OWN = `tenant_1:e2e-scoped-${RUN}`;
const OTHER = `tenant_2:e2e-scoped-${RUN}`;
const REASON = "stuck after a node crash, holder is gone";
/** dave's groups at the demo IdP (scripts/oidc-provider.ts), put back after a test changes them. */
const DAVE_GROUPS = ["team-billing"];
/** Resource names the workload writes outside tenant_1 (other tenants, queues, cron). */
const FOREIGN = [/tenant_2:/, /queue:webhooks/, /cron:nightly-report/];

let facts: StackFacts;
let store: PostgresLeaseStore;
/** The console's tokens table (in the run's schema, beside the store's tables). */
let tokens: TokenStore;
let pool: pg.Pool;
let context: BrowserContext;
let page: Page;
let own: Lease;
let other: Lease;

function leasePath(resource: string): string {
  return `/locks/${PG_STORE}/${encodeURIComponent(resource)}`;
}

async function hold(resource: string): Promise<Lease> {
  const r = await store.acquire({ resource, owner: OWNER, task: "e2e", ttlMs: 300_000 });
  if (!r.acquired) throw new Error(`could not acquire ${resource}`);
  return r.lease;
}

async function expectNothingForeign(): Promise<void> {
  const text = await page.locator("main").innerText();
  for (const pattern of FOREIGN) expect(text).not.toMatch(pattern);
}

test.beforeAll(async ({ browser }) => {
  facts = await getStackFacts();
  const spec = facts.stores.find((s) => s.name === PG_STORE);
  if (!spec || spec.kind !== "postgres") throw new Error("the e2e stack has no Postgres store");
  store = new PostgresLeaseStore({ name: PG_STORE, connectionString: spec.url, schema: spec.schema });
  tokens = new TokenStore({ url: spec.url, schema: spec.schema });
  pool = new pg.Pool({ connectionString: facts.audit.url, max: 2 });
  pool.on("error", () => undefined);
  own = await hold(OWN);
  other = await hold(OTHER);
  context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  page = await context.newPage();
  await signInThroughIdp(page, "dave");
});

test.afterAll(async () => {
  await context?.close();
  await store?.release({ resource: OWN, leaseId: own.leaseId }).catch(() => undefined);
  await store?.release({ resource: OTHER, leaseId: other.leaseId }).catch(() => undefined);
  await store?.close();
  await tokens?.close();
  await pool?.end();
});

test("a tenant-scoped operator sees only their tenant on the leases, events and overview pages", async () => {
  await expect(page.getByTestId("user-role")).toHaveText("operator");
  await expect(page.getByTestId("user-scope")).toHaveText("tenant_1:*");

  await page.goto(`/locks?owner=${OWNER}`);
  await expect(page.locator("table").getByRole("link", { name: OWN })).toBeVisible();
  await expect(page.getByText(OTHER)).toHaveCount(0);
  await page.goto("/locks");
  await expect(page.getByRole("link", { name: /^tenant_1:/ }).first()).toBeVisible();
  await expectNothingForeign();
  // Asking for another tenant by prefix finds nothing rather than widening the scope.
  await page.goto("/locks?prefix=tenant_2:");
  await expect(page.getByRole("link", { name: /^tenant_2:/ })).toHaveCount(0);
  // Bulk release there would read as "nothing overdue": the page says the prefix is outside the scope instead.
  await expect(page.getByText("Bulk release is limited to your scope (tenant_1:*); tenant_2: is outside it.")).toBeVisible();
  await expect(page.getByRole("button", { name: /Release lapsed & overdue/ })).toHaveCount(0);

  await page.goto(`/events?window=1h&owner=${OWNER}`);
  await expect(page.getByRole("link", { name: OWN }).first()).toBeVisible();
  await expect(page.getByText(OTHER)).toHaveCount(0);
  await page.goto("/events?window=1h");
  await expect(page.getByRole("link", { name: /^tenant_1:/ }).first()).toBeVisible();
  await expectNothingForeign();

  await page.goto("/");
  await expect(page.getByText("Your access covers")).toContainText("tenant_1:*");
  await expectNothingForeign();
  // The store-wide Prometheus series would count every tenant: refused to this session.
  const metrics = await page.request.get("/api/metrics");
  expect(metrics.status()).toBe(403);
});

test("another tenant's lease page is not found, in the page and in its API twin", async () => {
  // A real 404, decided before the page streams behind its loading skeleton, and the same
  // page and status for a tenant_2 name that never existed: existence never shows through.
  const held = await page.goto(leasePath(OTHER));
  expect(held?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "Not found" })).toBeVisible();
  await expect(page.getByText(OWNER)).toHaveCount(0);
  const heldText = await page.locator("main").innerText();
  const missing = await page.goto(leasePath(`tenant_2:never-${RUN}`));
  expect(missing?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "Not found" })).toBeVisible();
  expect(await page.locator("main").innerText()).toBe(heldText);
  // The past view of the same lease is no way around it.
  const past = await page.goto(`${leasePath(OTHER)}?at=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}`);
  expect(past?.status()).toBe(404);
  await expect(page.getByText(OWNER)).toHaveCount(0);
  const api = await page.request.get(`/api/leases/${PG_STORE}/${encodeURIComponent(OTHER)}`);
  expect(api.status()).toBe(404);
  expect(JSON.stringify(await api.json())).not.toContain(OWNER);
  // A tenant_2 name that never existed answers exactly the same.
  const never = await page.request.get(`/api/leases/${PG_STORE}/${encodeURIComponent(`tenant_2:never-${RUN}`)}`);
  expect(never.status()).toBe(404);

  const mine = await page.goto(leasePath(OWN));
  expect(mine?.status()).toBe(200);
  await expect(page.getByText(OWNER).first()).toBeVisible();
  await expect(page.getByRole("heading", { name: "Not found" })).toHaveCount(0);
});

test("another tenant's ids in the URL of every read path find nothing: events, facets, leases, owner, past view, advice, jump", async () => {
  const json = async (path: string) => {
    const response = await page.request.get(path);
    expect(response.status(), path).toBe(200);
    return JSON.stringify(await response.json());
  };
  // OWNER holds one lease in each tenant: every answer names OWN and never OTHER.
  for (const path of [`/api/leases?owner=${OWNER}`, `/api/owners/${OWNER}`, `/api/facets?view=leases&owner=${OWNER}`]) {
    const body = await json(path);
    expect(body, path).toContain(OWN);
    expect(body, path).not.toContain(OTHER);
  }
  const at = new Date(Date.now() - 1_000).toISOString();
  for (const path of [`/api/past-leases?${new URLSearchParams({ at, owner: OWNER })}`, `/api/facets?view=events&window=1h&owner=${OWNER}`, `/api/events?window=1h&owner=${OWNER}`]) {
    expect(await json(path), path).not.toContain(OTHER);
  }
  // OTHER's own lease id and fencing token, and its name, as filters: no rows, no counts.
  for (const filter of [{ lease: other.leaseId }, { token: other.fencingToken }, { resource: OTHER }] as Record<string, string>[]) {
    const query = new URLSearchParams({ window: "1h", ...filter });
    const events = (await (await page.request.get(`/api/events?${query}`)).json()) as { items: unknown[] };
    expect(events.items, query.toString()).toEqual([]);
    const facets = (await (await page.request.get(`/api/facets?view=events&${query}`)).json()) as { total: number };
    expect(facets.total, query.toString()).toBe(0);
  }
  for (const q of [other.leaseId, other.fencingToken, OTHER]) {
    expect(await (await page.request.get(`/api/jump?${new URLSearchParams({ q })}`)).json(), q).toMatchObject({ found: false });
  }
  const advice = (await (await page.request.get("/api/advice?prefix=tenant_2:")).json()) as { rows: unknown[]; totalRows: number };
  expect({ rows: advice.rows, totalRows: advice.totalRows }).toEqual({ rows: [], totalRows: 0 });
  // The pages behind them, as he would open them.
  await page.goto(`/owners/${OWNER}`);
  await expect(page.getByRole("link", { name: OWN }).first()).toBeVisible();
  await expect(page.getByText(OTHER)).toHaveCount(0);
  await page.goto(`/locks?${new URLSearchParams({ at, owner: OWNER })}`);
  await expect(page.getByRole("link", { name: OWN }).first()).toBeVisible();
  await expect(page.getByText(OTHER)).toHaveCount(0);
  await page.goto(`/events?${new URLSearchParams({ window: "1h", lease: other.leaseId })}`);
  await expect(page.getByText(OTHER)).toHaveCount(0);
});

test("a forged force-release of another tenant's lease is refused and audited; their own goes through", async () => {
  const single = await page.request.post("/api/force-release", {
    data: { store: PG_STORE, resource: OTHER, leaseId: other.leaseId, reason: REASON, confirm: OTHER },
    headers: { origin: BASE_URL },
  });
  expect(single.status()).toBe(403);
  expect(await single.json()).toMatchObject({ ok: false, outcome: "refused", code: "forbidden" });

  const bulk = await page.request.post("/api/force-release/bulk", {
    data: { prefix: "tenant_", reason: REASON, confirm: "tenant_", leases: [{ store: PG_STORE, resource: OTHER, leaseId: other.leaseId }] },
    headers: { origin: BASE_URL },
  });
  expect(bulk.status()).toBe(200);
  const bulkBody = (await bulk.json()) as { results: { resource: string; result: { outcome: string; code?: string } }[] };
  expect(bulkBody.results).toEqual([expect.objectContaining({ resource: OTHER, result: expect.objectContaining({ outcome: "refused", code: "forbidden" }) })]);

  // Still held by its own holder.
  expect((await store.get(OTHER))?.leaseId).toBe(other.leaseId);
  // Both attempts are in the audit log, with who tried and why it was refused…
  const { rows } = await pool.query<{ outcome: string; actor_sub: string; lease_id: string; detail: string }>(
    `SELECT outcome, actor_sub, lease_id, detail FROM "${facts.audit.schema}".audit_log WHERE resource = $1 ORDER BY id`,
    [OTHER],
  );
  expect(rows).toHaveLength(2);
  for (const row of rows) {
    expect(row).toMatchObject({ outcome: "denied_role", actor_sub: `${ISSUER_URL}#dave`, lease_id: other.leaseId });
    expect(row.detail).toContain("outside the operator scope (tenant_1:*)");
  }
  // …which dave himself cannot read: the audit list keeps to his tenant too.
  const audit = await page.request.get(`/api/audit?${new URLSearchParams({ resource: OTHER })}`);
  expect(audit.status()).toBe(200);
  expect(((await audit.json()) as { items: unknown[] }).items).toEqual([]);

  const allowed = await page.request.post("/api/force-release", {
    data: { store: PG_STORE, resource: OWN, leaseId: own.leaseId, reason: REASON, confirm: OWN },
    headers: { origin: BASE_URL },
  });
  expect(allowed.status()).toBe(200);
  expect(await store.get(OWN)).toBeNull();
});

test("a stale form after the role changed: the force-release it sends is judged by the scope at that moment, and refused", async () => {
  test.setTimeout(60_000);
  // For a moment dave is an operator everywhere (the groups are re-read every 2 s here):
  // another tenant's lease page opens, with its force-release form.
  await setIdpGroups("dave", [...DAVE_GROUPS, "leasewatch-operators"]);
  try {
    await expect(async () => {
      const response = await page.goto(leasePath(OTHER));
      expect(response?.status()).toBe(200);
      await expect(page.getByRole("button", { name: "Force release" })).toBeEnabled({ timeout: 1_000 });
    }).toPass({ timeout: 20_000 });
    await page.getByRole("button", { name: "Force release" }).click();
    const dialog = page.getByRole("dialog", { name: "Force release this lease" });
    await dialog.getByLabel(/^Reason/).fill(REASON);
    await dialog.getByLabel(/Type the resource name to confirm/).fill(OTHER);
    // Back to tenant_1 only at the IdP while the form is open; then he sends it.
    await setIdpGroups("dave", DAVE_GROUPS);
    await dialog.getByRole("button", { name: "Force release" }).click();
    await expect(page.getByRole("alert").filter({ hasText: "Not allowed — nothing was released." })).toBeVisible();
    expect((await store.get(OTHER))?.leaseId).toBe(other.leaseId);
    const { rows } = await pool.query<{ outcome: string; detail: string }>(
      `SELECT outcome, detail FROM "${facts.audit.schema}".audit_log WHERE resource = $1 AND actor_sub = $2 ORDER BY id DESC LIMIT 1`,
      [OTHER, `${ISSUER_URL}#dave`],
    );
    expect(rows[0]?.outcome).toBe("denied_role");
    // His refused attempts on OTHER are in the log, but not in his view of it, nor in its exports.
    for (const format of ["csv", "json"]) {
      const exported = await page.request.get(`/api/audit/export?format=${format}`);
      expect(exported.status()).toBe(200);
      expect(await exported.text(), format).not.toContain(OTHER);
    }
    // And the page itself is gone again: a real 404.
    await expect(async () => {
      const response = await page.goto(leasePath(OTHER));
      expect(response?.status()).toBe(404);
    }).toPass({ timeout: 20_000 });
  } finally {
    await setIdpGroups("dave", DAVE_GROUPS);
  }
});

test("API tokens: dave sees only tenant_1's, cannot create or revoke another tenant's (refused and audited), and creates his own", async () => {
  const expiresAt = new Date(Date.now() + 86_400_000);
  const seed = (name: string, prefixes: string[]) => tokens.create({ name, prefixes, stores: [PG_STORE], actions: ["acquire", "release"], expiresAt, createdBy: "e2e-seed" });
  const mine = await seed(`e2e-${RUN}-t1`, [`tenant_1:e2e-scoped-${RUN}:`]);
  const theirs = await seed(`e2e-${RUN}-t2`, [`tenant_2:e2e-scoped-${RUN}:`]);
  const both = await seed(`e2e-${RUN}-both`, [`tenant_1:e2e-scoped-${RUN}:`, `tenant_2:e2e-scoped-${RUN}:`]);
  const created: string[] = [];
  try {
    // The list, in the page and its API twin: only tokens wholly within tenant_1.
    const listed = (await (await page.request.get("/api/tokens")).json()) as { items: Array<{ name: string; prefixes: string[] }> };
    const names = listed.items.map((t) => t.name);
    expect(names).toContain(mine.record.name);
    expect(names).not.toContain(theirs.record.name);
    expect(names).not.toContain(both.record.name);
    for (const t of listed.items) for (const prefix of t.prefixes) expect(prefix.startsWith("tenant_1:")).toBe(true);
    await page.goto("/tokens");
    await expect(page.getByRole("row").filter({ hasText: mine.record.name })).toBeVisible();
    await expect(page.getByTestId("tokens-scope")).toContainText("tenant_1:*");
    expect(await page.locator("main").innerText()).not.toContain("tenant_2:");

    // A forged create for tenant_2: 403 with what to do instead, nothing stored, audited with the scope.
    const forgedName = `e2e-${RUN}-forged`;
    const forged = await page.request.post("/api/tokens", {
      data: { name: forgedName, prefixes: [`tenant_2:e2e-scoped-${RUN}:`], stores: [PG_STORE], actions: ["acquire"], expiresInDays: 7 },
      headers: { origin: BASE_URL },
    });
    expect(forged.status()).toBe(403);
    const refusal = (await forged.json()) as { code: string; message: string };
    expect(refusal).toMatchObject({ ok: false, outcome: "refused", code: "forbidden" });
    expect(refusal.message).toContain('start with "tenant_1:"');
    expect(await tokens.getByName(forgedName)).toBeNull();
    const createRows = await pool.query<{ action: string; outcome: string; actor_sub: string; detail: string }>(
      `SELECT action, outcome, actor_sub, detail FROM "${facts.audit.schema}".audit_log WHERE resource = $1 ORDER BY id`,
      [forgedName],
    );
    expect(createRows.rows).toEqual([
      { action: "token_create", outcome: "denied_role", actor_sub: `${ISSUER_URL}#dave`, detail: `prefixes tenant_2:e2e-scoped-${RUN}: outside the operator scope (tenant_1:*)` },
    ]);

    // Revoking another tenant's token answers as an unknown id; the token stays live; the attempt is audited.
    for (const other of [theirs, both]) {
      const revoke = await page.request.post("/api/tokens/revoke", { data: { id: other.record.id }, headers: { origin: BASE_URL } });
      expect(revoke.status()).toBe(404);
      expect(await revoke.json()).toMatchObject({ code: "not_found", message: "No token has this id." });
      expect((await tokens.get(other.record.id))?.revokedAt).toBeNull();
    }
    const revokeRows = await pool.query<{ outcome: string; actor_sub: string; detail: string }>(
      `SELECT outcome, actor_sub, detail FROM "${facts.audit.schema}".audit_log WHERE action = 'token_revoke' AND resource = $1`,
      [theirs.record.name],
    );
    expect(revokeRows.rows).toEqual([{ outcome: "not_found", actor_sub: `${ISSUER_URL}#dave`, detail: `token ${theirs.record.id} is outside the operator scope (tenant_1:*)` }]);

    // His own tenant, through the form: it starts from his scope and says so.
    const ownName = `e2e-${RUN}-own`;
    await page.getByRole("button", { name: "New token" }).click();
    const form = page.getByRole("form", { name: "New API token" });
    await expect(form.getByLabel("Tenant prefixes")).toHaveValue("tenant_1:");
    await expect(form).toContainText("Your operator role covers only tenant_1:*");
    await form.getByLabel("Name").fill(ownName);
    await form.getByLabel("Tenant prefixes").fill(`tenant_1:e2e-scoped-${RUN}:`);
    await form.getByRole("button", { name: "Create token" }).click();
    await expect(page.getByRole("region", { name: /created — copy it now/ })).toBeVisible();
    created.push(ownName);
    await expect(page.getByRole("row").filter({ hasText: ownName })).toContainText(`tenant_1:e2e-scoped-${RUN}:`);
    expect((await tokens.getByName(ownName))?.createdBy).toBe(`${ISSUER_URL}#dave`);
  } finally {
    for (const name of [mine.record.name, theirs.record.name, both.record.name, ...created]) await tokens.revoke(name).catch(() => undefined);
  }
});
