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
import { PostgresLeaseStore } from "../lib/lease/postgres/store";
import type { Lease } from "../lib/lease/types";
import { getStackFacts } from "./support/control";
import { BASE_URL, PG_STORE, type StackFacts } from "./support/harness";
import { signInThroughIdp } from "./support/sign-in";

test.describe.configure({ mode: "serial" });

const RUN = randomUUID().slice(0, 8);
const OWNER = `e2e-scoped-${RUN}`;
const OWN = `tenant_1:e2e-scoped-${RUN}`;
const OTHER = `tenant_2:e2e-scoped-${RUN}`;
const REASON = "stuck after a node crash, holder is gone";
/** Resource names the workload writes outside tenant_1 (other tenants, queues, cron). */
const FOREIGN = [/tenant_2:/, /queue:webhooks/, /cron:nightly-report/];

let facts: StackFacts;
let store: PostgresLeaseStore;
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
  // The page streams behind its loading skeleton, so its status is sent before the read: it
  // renders the not-found page instead. The API twin answers 404 outright.
  await page.goto(leasePath(OTHER));
  await expect(page.getByRole("heading", { name: "Not found" })).toBeVisible();
  await expect(page.getByText(OWNER)).toHaveCount(0);
  await page.goto(leasePath(`tenant_2:never-${RUN}`));
  await expect(page.getByRole("heading", { name: "Not found" })).toBeVisible();
  const api = await page.request.get(`/api/leases/${PG_STORE}/${encodeURIComponent(OTHER)}`);
  expect(api.status()).toBe(404);
  expect(JSON.stringify(await api.json())).not.toContain(OWNER);
  // A tenant_2 name that never existed answers exactly the same.
  const never = await page.request.get(`/api/leases/${PG_STORE}/${encodeURIComponent(`tenant_2:never-${RUN}`)}`);
  expect(never.status()).toBe(404);

  await page.goto(leasePath(OWN));
  await expect(page.getByText(OWNER).first()).toBeVisible();
  await expect(page.getByRole("heading", { name: "Not found" })).toHaveCount(0);
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
    expect(row).toMatchObject({ outcome: "denied_role", actor_sub: "dave", lease_id: other.leaseId });
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
