/**
 * Observed locks: a Postgres advisory lock taken by hand shows on /observed within a
 * few sampling intervals with its pid and application name, and a second session
 * waiting for it shows as its waiter; the demo workload's ShedLock and redlock
 * stores show beside it.
 */
import { randomInt } from "node:crypto";
import { expect, test } from "@playwright/test";
import { readStoreConfigs } from "./support/control";
import { pgSessions } from "./support/pg-sessions";
import { PG_STORE } from "./support/harness";

/** The observer samples every 2 s in the stack; ten seconds is the promise to a person. */
const OBSERVED_TIMEOUT_MS = 10_000;

const sessions = pgSessions();

test.afterAll(() => sessions.closeAll());

test("an advisory lock taken by hand appears with its pid and application name, and its waiter", async ({ page }, testInfo) => {
  const config = (await readStoreConfigs()).find((c) => c.name === PG_STORE);
  if (!config || config.kind !== "postgres") throw new Error(`no ${PG_STORE} in the stack`);
  const key = String(randomInt(100_000_000, 2 ** 40));
  const holder = await sessions.open(config.url, "psql");
  const waiter = await sessions.open(config.url, "psql-waiting");
  await holder.client.query("SELECT pg_advisory_lock($1::bigint)", [key]);
  void waiter.client.query("SELECT pg_advisory_lock($1::bigint)", [key]).catch(() => {});

  await page.goto("/observed");
  await expect(page.getByRole("heading", { level: 1, name: "Observed locks" })).toBeVisible();
  const section = page.getByRole("region", { name: /^pg-advisory/ });
  const row = section.getByRole("row").filter({ hasText: `advisory:${key}` });
  await expect(row).toContainText(`pid ${holder.pid} · psql`, { timeout: OBSERVED_TIMEOUT_MS });
  await expect(row).toContainText("1 waiting", { timeout: OBSERVED_TIMEOUT_MS });

  // The demo's other observed stores are live beside it.
  await expect(page.getByRole("region", { name: /^shedlock/ }).getByText(/sampled|no sample yet/)).toBeVisible();
  await expect(page.getByRole("region", { name: /^redis-locks/ }).getByText(/sampled|no sample yet/)).toBeVisible();

  await holder.client.query("SELECT pg_advisory_unlock($1::bigint)", [key]);
  await expect(row).toContainText(`psql-waiting`, { timeout: OBSERVED_TIMEOUT_MS });
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: testInfo.outputPath(`observed-${scheme}.png`), fullPage: true });
  }
});
