/**
 * Force-release of an observed lock end to end: a ShedLock row in the demo
 * workload's table (observed by the stack's observer every 2 s), the production
 * console, the operator's real session, and the audit log. The row is this run's
 * own, so the workload's scheduler never takes it.
 */
import { randomUUID } from "node:crypto";
import { expect, test, type APIRequestContext } from "@playwright/test";
import pg from "pg";
import { getStackFacts } from "./support/control";
import { BASE_URL, PG_STORE } from "./support/harness";
import { freshOperatorTest } from "./support/sign-in";

const RUN = randomUUID().slice(0, 8);
const NAME = `e2e-release-${RUN}`;
const REASON = "the nightly job's host was replaced, the row is stuck";
const OBSERVED_TIMEOUT_MS = 10_000;

let pool: pg.Pool;
let table: string;

test.beforeAll(async () => {
  const facts = await getStackFacts();
  const spec = facts.stores.find((s) => s.name === PG_STORE);
  if (!spec || spec.kind !== "postgres") throw new Error("the e2e stack has no Postgres store");
  // The demo's ShedLock table sits beside the observed history: <console schema>_observed_demo.shedlock
  // (scripts/stack.ts); the e2e stack's console schema is the Postgres store's (e2e/support/e2e-stack.ts).
  table = `${spec.schema}_observed_demo.shedlock`;
  pool = new pg.Pool({ connectionString: spec.url, max: 2 });
  pool.on("error", () => undefined);
});

test.afterAll(async () => {
  await pool?.query(`DELETE FROM ${table} WHERE name = $1`, [NAME]).catch(() => undefined);
  await pool?.end();
});

async function takeRow(lockedBy: string): Promise<void> {
  await pool.query(
    `INSERT INTO ${table} (name, lock_until, locked_at, locked_by) VALUES ($1, timezone('utc', now()) + interval '10 minutes', timezone('utc', now()), $2)
     ON CONFLICT (name) DO UPDATE SET lock_until = EXCLUDED.lock_until, locked_at = EXCLUDED.locked_at, locked_by = EXCLUDED.locked_by`,
    [NAME, lockedBy],
  );
}

async function auditOutcomes(request: APIRequestContext): Promise<string[]> {
  const response = await request.get(`/api/audit?${new URLSearchParams({ store: "shedlock", resource: NAME })}`);
  expect(response.status()).toBe(200);
  return ((await response.json()) as { items: Array<{ outcome: string }> }).items.map((e) => e.outcome).reverse();
}

freshOperatorTest("operator force-releases a ShedLock row: refused when another run took it after the dialog opened, released when unchanged, both audited", async ({ page }, testInfo) => {
  test.setTimeout(90_000);
  await takeRow("host-a.example");
  await page.goto("/observed");
  const row = page.getByRole("region", { name: /^shedlock/ }).getByRole("row").filter({ hasText: NAME });
  await expect(row).toContainText("host-a.example", { timeout: OBSERVED_TIMEOUT_MS });

  // The dialog shows the holder it will compare, and says what the release does.
  await row.getByRole("button", { name: `Force release: ${NAME}` }).click();
  const dialog = page.getByRole("dialog", { name: "Force release this ShedLock row" });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText("Sets lock_until to now");
  await expect(dialog.getByLabel("The holder shown, which the server compares")).toContainText("host-a.example");
  await dialog.getByLabel(/^Reason/).fill(REASON);
  await dialog.getByLabel(/Type the lock name to confirm/).fill(NAME);
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: testInfo.outputPath(`observed-release-dialog-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: "light" });

  // Another run takes the row while the dialog is open: nothing is released.
  await takeRow("host-b.example");
  await dialog.getByRole("button", { name: "Force release" }).click();
  const changed = page.getByRole("alert").filter({ hasText: "The holder changed — nothing was released." });
  await expect(changed).toBeVisible();
  await expect(changed.getByRole("link", { name: "See the audit entry" })).toHaveAttribute("href", /\/audit\?store=shedlock/);
  const held = await pool.query<{ locked_by: string; held: boolean }>(`SELECT locked_by, lock_until > timezone('utc', now()) AS held FROM ${table} WHERE name = $1`, [NAME]);
  expect(held.rows[0]).toEqual({ locked_by: "host-b.example", held: true });
  expect(await auditOutcomes(page.request)).toEqual(["requested", "lease_changed"]);

  // The page shows the new holder at the next sample; releasing that one works.
  await expect(row).toContainText("host-b.example", { timeout: OBSERVED_TIMEOUT_MS });
  await row.getByRole("button", { name: `Force release: ${NAME}` }).click();
  await dialog.getByLabel(/^Reason/).fill(REASON);
  await dialog.getByLabel(/Type the lock name to confirm/).fill(NAME);
  await dialog.getByRole("button", { name: "Force release" }).click();
  const released = page.getByRole("status").filter({ hasText: "Force-released." });
  await expect(released).toBeVisible();
  await expect(released.getByRole("link", { name: "See the audit entry" })).toBeVisible();
  const after = await pool.query<{ held: boolean }>(`SELECT lock_until > timezone('utc', now()) AS held FROM ${table} WHERE name = $1`, [NAME]);
  expect(after.rows[0]!.held).toBe(false);
  expect(await auditOutcomes(page.request)).toEqual(["requested", "lease_changed", "requested", "released"]);
  await expect(row).toHaveCount(0, { timeout: OBSERVED_TIMEOUT_MS });
  await page.screenshot({ path: testInfo.outputPath("observed-release-outcome-light.png") });
});

test("the Terminate holder dialog of an advisory lock says it ends the holder's whole session; Cancel changes nothing", async ({ page }, testInfo) => {
  await page.goto("/observed");
  const row = page.getByRole("region", { name: /^pg-advisory/ }).getByRole("row").filter({ hasText: "tenant_1:billing-close" });
  await row.getByRole("button", { name: "Terminate holder: tenant_1:billing-close" }).click({ timeout: OBSERVED_TIMEOUT_MS });
  const dialog = page.getByRole("dialog", { name: "Terminate the holder of this advisory lock" });
  await expect(dialog).toContainText("this ends the holder's whole database session (pg_terminate_backend)");
  await expect(dialog.getByLabel("The holder shown, which the server compares")).toContainText("Backend pid");
  await expect(dialog.getByRole("button", { name: "Terminate holder" })).toBeDisabled();
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: testInfo.outputPath(`observed-terminate-dialog-${scheme}.png`) });
  }
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toBeHidden();
});

test("a viewer's force-release of an observed lock is refused and audited, and the row stays held @viewer", async ({ page }) => {
  const name = `${NAME}-viewer`;
  await pool.query(
    `INSERT INTO ${table} (name, lock_until, locked_at, locked_by) VALUES ($1, timezone('utc', now()) + interval '10 minutes', timezone('utc', now()), 'host-v.example') ON CONFLICT (name) DO NOTHING`,
    [name],
  );
  const lockedAt = (await pool.query<{ at: string }>(`SELECT to_char(locked_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at FROM ${table} WHERE name = $1`, [name])).rows[0]!.at;
  const response = await page.request.post("/api/observed/release", {
    headers: { origin: BASE_URL },
    data: { store: "shedlock", resource: name, shown: { kind: "shedlock", lockedBy: "host-v.example", lockedAt }, reason: REASON },
  });
  expect(response.status()).toBe(403);
  expect(await response.json()).toMatchObject({ outcome: "refused", code: "forbidden" });
  const held = await pool.query<{ held: boolean }>(`SELECT lock_until > timezone('utc', now()) AS held FROM ${table} WHERE name = $1`, [name]);
  expect(held.rows[0]!.held).toBe(true);
  const audit = await page.request.get(`/api/audit?${new URLSearchParams({ store: "shedlock", resource: name })}`);
  expect(((await audit.json()) as { items: Array<{ outcome: string }> }).items.map((e) => e.outcome)).toEqual(["denied_role"]);
  await pool.query(`DELETE FROM ${table} WHERE name = $1`, [name]);
  await page.goto("/observed");
  await expect(page.getByRole("button", { name: /^Force release/ })).toHaveCount(0);
});
