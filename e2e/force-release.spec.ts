/**
 * Force-release end to end: the production console, a real sign-in at the IdP,
 * the e2e stack's Postgres store (the workload runs beside these leases), real
 * worker processes holding leases, and the audit log in Postgres.
 *
 * Leases here are on pg-main under a prefix of this run, so the workload never
 * takes them. Serial: the audit-down test locks the audit table for a while.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { randomUUID } from "node:crypto";
import { decode } from "next-auth/jwt";
import pg from "pg";
import { fencedWrite, type Lease, PostgresLeaseStore } from "@leasewatch/lease";
import { createFencedDownstream, type FencedDownstream } from "../test/support/stores";
import { spawnWorker, stopAllWorkers } from "../test/support/worker-process";
import { scopedAxe } from "./support/axe";
import { CAROL_GROUPS, getStackFacts, setIdpGroups } from "./support/control";
import { BASE_URL, E2E_NEXTAUTH_SECRET, ISSUER_URL, PG_STORE, type StackFacts } from "./support/harness";
import { freshOperatorTest, signInThroughIdp } from "./support/sign-in";

test.describe.configure({ mode: "serial" });
// A force-release needs a sign-in from the last 15 minutes: the tests that release as alice sign her in
// afresh (freshOperatorTest) rather than use the setup's session, which a long suite outlives.

const RUN = randomUUID().slice(0, 8);
const REASON = "stuck after a node crash, holder is gone";

let facts: StackFacts;
let store: PostgresLeaseStore;
let pool: pg.Pool;

test.beforeAll(async () => {
  facts = await getStackFacts();
  const spec = facts.stores.find((s) => s.name === PG_STORE);
  if (!spec || spec.kind !== "postgres") throw new Error("the e2e stack has no Postgres store");
  store = new PostgresLeaseStore({ name: PG_STORE, connectionString: spec.url, schema: spec.schema });
  pool = new pg.Pool({ connectionString: spec.url, max: 3 });
  pool.on("error", () => undefined);
});

test.afterAll(async () => {
  await stopAllWorkers();
  await store?.close();
  await pool?.end();
});

function pgSpec() {
  const spec = facts.stores.find((s) => s.name === PG_STORE);
  if (!spec || spec.kind !== "postgres") throw new Error("no pg store");
  return spec;
}

function leasePath(resource: string): string {
  return `/locks/${PG_STORE}/${resource.split("/").map(encodeURIComponent).join("/")}`;
}

async function hold(resource: string, owner: string, ttlMs = 120_000): Promise<Lease> {
  const r = await store.acquire({ resource, owner, task: "e2e", ttlMs });
  if (!r.acquired) throw new Error(`could not acquire ${resource}`);
  return r.lease;
}

interface AuditEntryJson {
  id: string;
  outcome: string;
  actorId: string;
  actorEmail: string | null;
  leaseId: string | null;
  reason: string | null;
  detail: string | null;
  newHolder: { owner: string | null; leaseId: string | null } | null;
}

async function auditEntries(request: APIRequestContext, resource: string): Promise<AuditEntryJson[]> {
  const response = await request.get(`/api/audit?${new URLSearchParams({ store: PG_STORE, resource })}`);
  expect(response.status()).toBe(200);
  return ((await response.json()) as { items: AuditEntryJson[] }).items;
}

async function openDialog(page: Page, resource: string) {
  await page.goto(leasePath(resource));
  await page.getByRole("button", { name: "Force release" }).click();
  const dialog = page.getByRole("dialog", { name: "Force release this lease" });
  await expect(dialog).toBeVisible();
  return dialog;
}

async function fillAndSubmit(dialog: ReturnType<Page["getByRole"]>, resource: string, reason = REASON) {
  await dialog.getByLabel(/^Reason/).fill(reason);
  await dialog.getByLabel(/Type the resource name to confirm/).fill(resource);
  await dialog.getByRole("button", { name: "Force release" }).click();
}

freshOperatorTest("operator force-releases a held lease: the holder's signal aborts, its fenced write is refused, the audit page shows it", async ({ page }) => {
  test.setTimeout(90_000);
  const resource = `e2e-fr-${RUN}:held`;
  const spec = pgSpec();
  const downstream: FencedDownstream = await createFencedDownstream(pool, "exports");
  // A zombie-to-be: it keeps writing after it loses the lease, so the fence is what stops it.
  const worker = spawnWorker({
    store: { kind: "postgres", name: PG_STORE, url: spec.url, schema: spec.schema },
    owner: `holder-${RUN}`,
    mode: "hold",
    resources: [resource],
    task: "export-run",
    ttlMs: 6_000,
    durationMs: 80_000,
    writeEveryMs: 300,
    ignoreSignal: true,
    fenced: { url: spec.url, table: downstream.table, by: "ledger" },
  });
  try {
    const acquired = await worker.waitFor((l) => l.type === "acquired", 30_000);
    const leaseId = String(acquired.leaseId);
    const token = String(acquired.token);

    const dialog = await openDialog(page, resource);
    const definitions = dialog.getByRole("definition");
    await expect(dialog.getByLabel("The lease that will end")).toContainText(leaseId);
    await expect(dialog.getByLabel("The lease that will end")).toContainText(`holder-${RUN}`);
    await expect(dialog.getByLabel("The lease that will end")).toContainText("export-run");
    await expect(dialog.getByLabel("The lease that will end")).toContainText(token);
    await expect(definitions.filter({ hasText: PG_STORE }).first()).toBeVisible();
    // The submit stays disabled until the reason is long enough and the name matches.
    await dialog.getByLabel(/^Reason/).fill("too short");
    await dialog.getByLabel(/Type the resource name to confirm/).fill(resource);
    await expect(dialog.getByRole("button", { name: "Force release" })).toBeDisabled();
    await fillAndSubmit(dialog, resource);

    const outcome = page.getByRole("status").filter({ hasText: "Force-released." });
    await expect(outcome).toBeVisible();
    await expect(dialog).toBeHidden();
    expect(await store.get(resource)).toBeNull();

    // The old holder learns it lost the lease (its signal aborts)…
    const lostAt = worker.lines.length;
    await worker.waitFor((l) => l.type === "lost" || l.type === "renew_refused", 20_000);
    // …and once a new holder has written with a higher token, its next fenced write is refused.
    const next = await hold(resource, `next-${RUN}`);
    expect(BigInt(next.fencingToken)).toBeGreaterThan(BigInt(token));
    const write = await fencedWrite({ pool, table: downstream.table, key: resource, value: { by: "next" }, fencingToken: String(next.fencingToken), resource, store, by: "ledger" });
    expect(write.accepted).toBe(true);
    // A write the old holder had in flight while the new one wrote may report "accepted" after
    // this point (it committed first); the writes it starts afterwards are refused, and none
    // lands after the new holder's: the row still holds the new token and value.
    const afterNext = worker.lines.length;
    const refused = await worker.waitFor((l) => l.type === "write" && l.accepted === false, 15_000, Math.max(lostAt, afterNext));
    expect(refused.token).toBe(token);
    const { rows: downstreamRows } = await pool.query(`SELECT fencing_token::text AS token, value->>'by' AS by FROM ${downstream.table}`);
    expect(downstreamRows).toEqual([{ token: String(next.fencingToken), by: "next" }]);
    await store.release({ resource, leaseId: next.leaseId });

    // The event list and the audit page show it.
    const entries = await auditEntries(page.request, resource);
    const released = entries.find((e) => e.outcome === "released");
    expect(released, JSON.stringify(entries)).toBeTruthy();
    expect(released!.leaseId).toBe(leaseId);
    expect(released!.reason).toBe(REASON);
    expect(released!.actorId).toBe(`${ISSUER_URL}#alice`);

    // The lease's own event list shows the force-release, with who and why.
    const forced = page.getByRole("region", { name: "Events of this resource" }).locator("tr", { hasText: "force-released" });
    await expect(forced).toContainText(`by ${ISSUER_URL}#alice`);
    await expect(forced).toContainText(REASON);
    await outcome.getByRole("link", { name: "See the audit entry" }).click();
    await expect(page).toHaveURL(/\/audit\?/);
    const row = page.locator(`tr:has(#audit-${released!.id})`);
    await expect(row).toContainText("released");
    await expect(row).toContainText("alice@example.test");
    await expect(row).toContainText(resource);
    const axe = await new AxeBuilder({ page }).analyze();
    expect(axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id)).toEqual([]);
  } finally {
    await worker.kill9();
    await downstream.drop();
  }
});

freshOperatorTest("stale dialog: the lease is re-acquired after the dialog opened → refused, nothing released, the entry says so", async ({ page }) => {
  const resource = `e2e-fr-${RUN}:stale`;
  const first = await hold(resource, `first-${RUN}`);
  const dialog = await openDialog(page, resource);
  await expect(dialog.getByLabel("The lease that will end")).toContainText(first.leaseId);

  // Meanwhile the holder releases and another worker takes the resource.
  await store.release({ resource, leaseId: first.leaseId });
  const second = await hold(resource, `second-${RUN}`);
  await fillAndSubmit(dialog, resource);

  const alert = page.getByRole("alert").filter({ hasText: "The lease changed — nothing was released." });
  await expect(alert).toBeVisible();
  await expect(alert).toContainText(`second-${RUN}`);
  expect((await store.get(resource))?.leaseId).toBe(second.leaseId);
  const entry = (await auditEntries(page.request, resource)).find((e) => e.outcome === "lease_changed");
  expect(entry?.leaseId).toBe(first.leaseId);
  expect(entry?.newHolder?.leaseId).toBe(second.leaseId);
  await store.release({ resource, leaseId: second.leaseId });
});

test("roles revoked at the IdP: the next force-release is refused without signing out", async ({ browser, page: alicePage }) => {
  test.setTimeout(60_000);
  // carol, not alice: alice's session is shared with the tests running beside this one.
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  const page = await context.newPage();
  const resource = `e2e-fr-${RUN}:revoked`;
  const lease = await hold(resource, `holder-${RUN}`);
  try {
    await signInThroughIdp(page, "carol", { from: leasePath(resource) });
    const dialog = await openDialog(page, resource);
    await setIdpGroups("carol", []);
    await fillAndSubmit(dialog, resource);
    const alert = page.getByRole("alert").filter({ hasText: "Not allowed — nothing was released." });
    await expect(alert).toBeVisible();
    expect((await store.get(resource))?.leaseId).toBe(lease.leaseId);
    // Not signed out: the same page, with the user's name in the header.
    await expect(page.getByTestId("user-name")).toHaveText("carol");
    // carol may not read the audit log any more either; alice can.
    const entry = (await auditEntries(alicePage.request, resource)).find((e) => e.outcome === "denied_role");
    expect(entry?.actorId).toBe(`${ISSUER_URL}#carol`);
    expect(entry?.leaseId).toBe(lease.leaseId);
  } finally {
    await setIdpGroups("carol", CAROL_GROUPS);
    await store.release({ resource, leaseId: lease.leaseId });
    await context.close();
  }
});

freshOperatorTest("a cross-origin POST and a POST without Origin are refused; the lease stays", async ({ page }) => {
  const resource = `e2e-fr-${RUN}:csrf`;
  const lease = await hold(resource, `holder-${RUN}`);
  const body = { store: PG_STORE, resource, leaseId: lease.leaseId, reason: REASON, confirm: resource };
  try {
    const forged = await page.request.post("/api/force-release", { data: body, headers: { origin: "https://evil.example" } });
    expect(forged.status()).toBe(403);
    expect(await forged.json()).toMatchObject({ ok: false, outcome: "refused", code: "cross_origin" });
    const noOrigin = await page.request.post("/api/force-release", { data: body });
    expect(noOrigin.status()).toBe(403);
    expect(await noOrigin.json()).toMatchObject({ code: "cross_origin" });
    expect((await store.get(resource))?.leaseId).toBe(lease.leaseId);
    // With the console's own Origin the same request goes through: the check is what refused the others.
    const own = await page.request.post("/api/force-release", { data: body, headers: { origin: BASE_URL } });
    expect(own.status()).toBe(200);
    expect(await store.get(resource)).toBeNull();
  } finally {
    await store.release({ resource, leaseId: lease.leaseId }).catch(() => undefined);
  }
});

freshOperatorTest("bulk release over a prefix ends exactly the lapsed and overdue leases listed", async ({ page }) => {
  const prefix = `e2e-bulk-${RUN}:`;
  const stuck = [await hold(`${prefix}a`, "stuck-1", 600_000), await hold(`${prefix}b`, "stuck-2", 600_000), await hold(`${prefix}c`, "stuck-3", 600_000)];
  const healthy = await hold(`${prefix}healthy`, "healthy");
  // Holders that stopped renewing: last renewal 500 s into a 600 s lease (overdue: over 2/3 of the TTL),
  // with time to spare before they lapse and the sweeper ends them, however slowly the page runs.
  const spec = pgSpec();
  await pool.query(
    `UPDATE "${spec.schema}".leases SET acquired_at = now() - interval '500 seconds', renewed_at = now() - interval '500 seconds', expires_at = now() + interval '100 seconds' WHERE resource = ANY($1)`,
    [stuck.map((l) => l.resource)],
  );
  try {
    await page.goto(`/locks?${new URLSearchParams({ prefix })}`);
    await page.getByRole("button", { name: /Release lapsed & overdue under/ }).click();
    const dialog = page.getByRole("dialog", { name: "Force release lapsed and overdue leases" });
    const listed = dialog.getByRole("table", { name: "Leases that will end" }).locator("tbody tr");
    await expect(listed).toHaveCount(3);
    await expect(dialog).not.toContainText(`${prefix}healthy`);
    await dialog.getByLabel(/^Reason/).fill("workers of this batch crashed overnight");
    await dialog.getByLabel(/Type the prefix to confirm/).fill(prefix);
    await dialog.getByRole("button", { name: "Force release 3 leases" }).click();
    await expect(dialog.getByRole("status")).toHaveText("3 of 3 leases force-released.");
    for (const lease of stuck) expect(await store.get(lease.resource)).toBeNull();
    expect((await store.get(healthy.resource))?.leaseId).toBe(healthy.leaseId);
    for (const lease of stuck) {
      const entries = await auditEntries(page.request, lease.resource);
      expect(entries.filter((e) => e.outcome === "released").map((e) => e.leaseId)).toEqual([lease.leaseId]);
    }
  } finally {
    await store.release({ resource: healthy.resource, leaseId: healthy.leaseId });
  }
});

freshOperatorTest("a bulk release on a sign-in older than 15 minutes is refused, nothing released, with a way back to the same prefix", async ({ page }) => {
  const prefix = `e2e-bulk-old-${RUN}:`;
  const lease = await hold(`${prefix}a`, "stuck-old");
  // The IdP's last authentication of this session, 20 minutes back (the console reads it from the session record).
  const token = (await page.context().cookies()).find((c) => c.name === "next-auth.session-token")!.value;
  const sid = (await decode({ token, secret: E2E_NEXTAUTH_SECRET }))!.sid as string;
  const updated = await pool.query(`UPDATE "${pgSpec().schema}".console_sessions SET auth_time = now() - interval '20 minutes' WHERE id = $1::uuid`, [sid]);
  expect(updated.rowCount).toBe(1);
  try {
    const response = await page.request.post("/api/force-release/bulk", {
      data: { prefix, reason: "workers of this batch crashed overnight", confirm: prefix, leases: [{ store: PG_STORE, resource: lease.resource, leaseId: lease.leaseId }] },
      headers: { origin: BASE_URL },
    });
    expect(response.status()).toBe(403);
    const body = (await response.json()) as { code: string; reauthUrl: string };
    expect(body.code).toBe("reauth_required");
    expect(body.reauthUrl).toBe(`/signin/reauth?${new URLSearchParams({ callbackUrl: `/locks?${new URLSearchParams({ prefix })}` })}`);
    expect((await store.get(lease.resource))?.leaseId).toBe(lease.leaseId);
  } finally {
    await store.release({ resource: lease.resource, leaseId: lease.leaseId });
  }
});

freshOperatorTest("audit log unavailable ⇒ force-release refused, nothing released", async ({ page }) => {
  test.setTimeout(60_000);
  const resource = `e2e-fr-${RUN}:audit-down`;
  const lease = await hold(resource, `holder-${RUN}`);
  const dialog = await openDialog(page, resource);
  // A superuser session holds the audit table so no entry can be written (a hung audit database).
  const blocker = await pool.connect();
  try {
    await blocker.query("BEGIN");
    // EXCLUSIVE blocks every write but not plain reads, so pages that read the audit log in tests
    // running beside this one (the other worker) still load.
    await blocker.query(`LOCK TABLE "${facts.audit.schema}".audit_log IN EXCLUSIVE MODE`);
    await fillAndSubmit(dialog, resource);
    const alert = page.getByRole("alert").filter({ hasText: "The audit log is unavailable — nothing was released." });
    await expect(alert).toBeVisible({ timeout: 30_000 });
    expect((await store.get(resource))?.leaseId).toBe(lease.leaseId);
  } finally {
    await blocker.query("ROLLBACK").catch(() => undefined);
    blocker.release();
    await store.release({ resource, leaseId: lease.leaseId }).catch(() => undefined);
  }
  // Nothing was recorded as released for it.
  expect((await auditEntries(page.request, resource)).filter((e) => e.outcome === "released")).toEqual([]);
});

test("viewer: the control is disabled with the reason, and a hand-made POST is refused and audited @viewer", async ({ page }) => {
  test.setTimeout(100_000);
  const resource = `e2e-fr-${RUN}:viewer`;
  const lease = await hold(resource, `holder-${RUN}`);
  try {
    await page.goto(leasePath(resource));
    await expect(page.getByRole("button", { name: "Force release" })).toBeDisabled();
    await expect(page.getByText("Force release needs the operator role.")).toBeVisible();
    const response = await page.request.post("/api/force-release", {
      data: { store: PG_STORE, resource, leaseId: lease.leaseId, reason: REASON, confirm: resource },
      headers: { origin: BASE_URL },
    });
    expect(response.status()).toBe(403);
    expect(await response.json()).toMatchObject({ ok: false, outcome: "refused", code: "forbidden" });
    expect((await store.get(resource))?.leaseId).toBe(lease.leaseId);
    const entry = (await auditEntries(page.request, resource)).find((e) => e.outcome === "denied_role");
    expect(entry?.actorId).toBe(`${ISSUER_URL}#bob`);
    expect(entry?.leaseId).toBe(lease.leaseId);
    // Text Postgres would change (a lone surrogate) or refuse (NUL): still audited, and the chain verifies past it on /audit.
    let lastId = 0;
    for (const reason of ["poison \ud800 entry", "nul \u0000 entry"]) {
      const poisoned = await page.request.post("/api/force-release", {
        data: { store: PG_STORE, resource, leaseId: lease.leaseId, reason, confirm: resource },
        headers: { origin: BASE_URL },
      });
      expect(poisoned.status()).toBe(403);
      const body = (await poisoned.json()) as { auditId?: string };
      expect(body.auditId).toMatch(/^\d+$/);
      lastId = Number(body.auditId);
    }
    expect((await auditEntries(page.request, resource)).map((e) => e.reason)).toEqual(expect.arrayContaining(["poison \ufffd entry", "nul \ufffd entry"]));
    await expect
      .poll(
        async () => {
          await page.goto("/audit");
          const state = await page.getByTestId("audit-chain-state").innerText();
          const through = /^Audit chain intact: verified through #(\d+)/.exec(state);
          return through ? Number(through[1]) >= lastId : state;
        },
        { timeout: 40_000, intervals: [1_000, 2_000, 5_000] },
      )
      .toBe(true);
    // The bulk control is disabled for viewers too.
    await page.goto(`/locks?${new URLSearchParams({ prefix: `e2e-fr-${RUN}:` })}`);
    await expect(page.getByRole("button", { name: /Release lapsed & overdue/ })).toBeDisabled();
  } finally {
    await store.release({ resource, leaseId: lease.leaseId });
  }
});

test("new API routes answer 401 without a session", async ({ playwright }) => {
  const anonymous = await playwright.request.newContext({ baseURL: BASE_URL, storageState: { cookies: [], origins: [] } });
  try {
    for (const [method, path] of [
      ["POST", "/api/force-release"],
      ["GET", "/api/force-release"],
      ["POST", "/api/force-release/bulk"],
      ["GET", "/api/force-release/bulk?prefix=a"],
      ["GET", "/api/audit"],
      ["GET", "/api/audit/export?format=csv"],
    ] as const) {
      const response = method === "GET" ? await anonymous.get(path) : await anonymous.post(path, { data: {}, headers: { origin: BASE_URL } });
      expect(response.status(), `${method} ${path}`).toBe(401);
    }
  } finally {
    await anonymous.dispose();
  }
});

async function expectFitsAndPassesAxe(page: Page, what: string): Promise<void> {
  const clipped = await page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('[role="region"]')]
      .filter((region) => region.scrollWidth > region.clientWidth + 1 && region.closest("dialog") === null)
      .map((region) => `${region.getAttribute("aria-label")}: ${region.scrollWidth}px in ${region.clientWidth}px`),
  );
  expect(clipped, `${what}: every column fits`).toEqual([]);
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${what} scrolls sideways`).toBeLessThanOrEqual(1280);
  // The page keeps polling (the test checks that after the scan), so only the rows are sampled.
  const axe = await scopedAxe(page).analyze();
  const serious = axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`), what).toEqual([]);
}

/** With SHOTS_DIR set, keeps a full-page screenshot there for a person to look at. */
async function shoot(page: Page, name: string): Promise<void> {
  const dir = process.env.SHOTS_DIR;
  if (dir) await page.screenshot({ path: `${dir}/${name}.png` });
}

const isFocusInDialog = (page: Page) => page.evaluate(() => document.activeElement?.closest("dialog[open]") !== null);

for (const colorScheme of ["light", "dark"] as const) {
  freshOperatorTest(`the dialogs and /audit fit 1280×800, pass axe and work by keyboard (${colorScheme})`, async ({ page }) => {
    test.setTimeout(90_000);
    await page.emulateMedia({ colorScheme });
    // The dialogs and /audit run under the console's CSP too (nothing in their bundle may need eval).
    const violations: string[] = [];
    page.on("console", (message) => {
      if (/content security policy/i.test(message.text())) violations.push(message.text());
    });
    await page.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (event) => console.error(`Content Security Policy violation: ${event.violatedDirective} ${event.blockedURI}`));
    });
    const resource = `e2e-fr-${RUN}:look-${colorScheme}`;
    const lease = await hold(resource, `holder-${RUN}`);
    const prefix = `e2e-look-${RUN}-${colorScheme}:`;
    const stuck = await hold(`${prefix}stuck`, "stuck-worker");
    try {
      // The lease page by keyboard: Tab to the button, Enter opens the dialog, focus stays inside it.
      await page.goto(leasePath(resource));
      const button = page.getByRole("button", { name: "Force release" });
      await expect(button).toBeVisible();
      let polls = 0;
      page.on("request", (r) => {
        if (r.url().includes("/api/leases/")) polls += 1;
      });
      await button.focus();
      await page.keyboard.press("Enter");
      const dialog = page.getByRole("dialog", { name: "Force release this lease" });
      await expect(dialog).toBeVisible();
      expect(await isFocusInDialog(page)).toBe(true);
      for (let i = 0; i < 12; i++) {
        await page.keyboard.press("Tab");
        expect(await isFocusInDialog(page), `focus after ${i + 1} Tab presses`).toBe(true);
      }
      await expectFitsAndPassesAxe(page, "lease page with the dialog open");
      await shoot(page, `lease-dialog-${colorScheme}`);
      // Live updates pause while it is open (they poll every 4 s otherwise).
      polls = 0;
      await page.waitForTimeout(9_000);
      expect(polls, "lease polls while the dialog was open").toBe(0);
      await page.keyboard.press("Escape");
      await expect(dialog).toBeHidden();
      await expect(button).toBeFocused();
      await expect.poll(() => polls, { timeout: 10_000 }).toBeGreaterThan(0);
      await expectFitsAndPassesAxe(page, "lease page");

      // The leases page with the bulk dialog, over a holder that stopped renewing (made overdue just now).
      await pool.query(
        `UPDATE "${pgSpec().schema}".leases SET acquired_at = now() - interval '100 seconds', renewed_at = now() - interval '100 seconds', expires_at = now() + interval '20 seconds' WHERE resource = $1`,
        [stuck.resource],
      );
      await page.goto(`/locks?${new URLSearchParams({ prefix })}`);
      await page.getByRole("button", { name: /Release lapsed & overdue under/ }).click();
      const bulk = page.getByRole("dialog", { name: "Force release lapsed and overdue leases" });
      await expect(bulk.getByRole("table", { name: "Leases that will end" }).locator("tbody tr")).toHaveCount(1);
      await expectFitsAndPassesAxe(page, "leases page with the bulk dialog open");
      await shoot(page, `bulk-dialog-${colorScheme}`);
      await page.keyboard.press("Escape");
      await expect(bulk).toBeHidden();

      // The audit log, with its filters in the URL.
      await page.goto("/audit");
      await expect(page.getByRole("heading", { name: "Audit log", level: 1 })).toBeVisible();
      await expectFitsAndPassesAxe(page, "/audit");
      await shoot(page, `audit-${colorScheme}`);
      await page.getByLabel("Outcome").selectOption("released");
      await page.getByRole("button", { name: "Apply" }).click();
      await expect(page).toHaveURL(/outcome=released/);
      await expect(page.getByRole("heading", { name: "Audit log", level: 1 })).toBeVisible();
      expect(violations).toEqual([]);
    } finally {
      await store.release({ resource, leaseId: lease.leaseId });
      await store.release({ resource: stuck.resource, leaseId: stuck.leaseId }).catch(() => undefined);
    }
  });
}

test("the audit export streams every matching entry as CSV and JSON", async ({ page }) => {
  const csv = await page.request.get("/api/audit/export?format=csv&outcome=released");
  expect(csv.status()).toBe(200);
  expect(csv.headers()["content-type"]).toContain("text/csv");
  const lines = (await csv.text()).trim().split("\n");
  expect(lines[0]).toMatch(/outcome/);
  const json = await page.request.get("/api/audit/export?format=json&outcome=released");
  expect(json.status()).toBe(200);
  const parsed = JSON.parse(await json.text()) as unknown;
  expect(Array.isArray(parsed)).toBe(true);
  expect((parsed as unknown[]).length).toBe(lines.length - 1);
  expect((await page.request.get("/api/audit/export?format=xml")).status()).toBe(400);
});

test("force-release is rate-limited per user before any other check, and every limited attempt is counted in the audit", async ({ browser, page: alicePage }) => {
  test.setTimeout(120_000);
  // carol: the bucket is per user, and alice's must stay full for the other tests.
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  const page = await context.newPage();
  const resource = `e2e-fr-${RUN}:rate`;
  try {
    await signInThroughIdp(page, "carol");
    const body = { store: PG_STORE, resource, leaseId: randomUUID(), reason: "short", confirm: resource };
    const codes: string[] = [];
    for (let i = 0; i < 14; i++) {
      const response = await page.request.post("/api/force-release", { data: body, headers: { origin: BASE_URL } });
      codes.push(`${response.status()} ${((await response.json()) as { code: string }).code}`);
    }
    expect(codes.slice(0, 10)).toEqual(Array(10).fill("400 invalid_input"));
    expect(codes.slice(10)).toEqual(Array(4).fill("429 rate_limited"));
    // The limited attempts are not written one by one: their window ends in one entry with the count.
    const outcomes = (await auditEntries(alicePage.request, resource)).map((e) => e.outcome);
    expect(outcomes.filter((o) => o === "invalid_input")).toHaveLength(10);
    await expect
      .poll(async () => (await auditEntries(alicePage.request, resource)).filter((e) => e.outcome === "rate_limited").map((e) => e.detail?.split(":")[0]), {
        timeout: 60_000,
        intervals: [2_000, 5_000],
      })
      .toEqual(["rate limited ×4"]);
  } finally {
    await context.close();
  }
});
