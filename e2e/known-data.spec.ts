/**
 * The console against data the test wrote itself, through the lease library,
 * into the e2e stack's Postgres store (same schema as the console's): the
 * leases page, the lease page and the events page show exactly that lease,
 * and an overview number equals the store's own count for the same window.
 */
import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { leaseHref } from "@/lib/console/shared/links";
import type { Lease, LeaseStore } from "@leasewatch/lease";
import { PG_STORE } from "./support/harness";
import { openStackStore } from "./support/control";

const MINUTE = 60_000;

let store: LeaseStore;

test.beforeAll(async () => void (store = await openStackStore()));
test.afterAll(() => store?.close());

/** A lease on a resource no one else uses, with an owner and task found nowhere else. */
async function acquireKnownLease(): Promise<{ lease: Lease; prefix: string }> {
  const tag = randomBytes(4).toString("hex");
  const prefix = `e2e-known-${tag}:`;
  const result = await store.acquire({ resource: `${prefix}ledger`, owner: `owner-${tag}@e2e`, task: `task-${tag}`, ttlMs: 5 * MINUTE });
  if (!result.acquired) throw new Error(`expected to acquire ${prefix}ledger`);
  return { lease: result.lease, prefix };
}

test("a lease written with a known owner, task and token shows exactly so on the leases, lease and events pages", async ({ page }) => {
  const { lease, prefix } = await acquireKnownLease();
  const token = String(lease.fencingToken);
  try {
    await page.goto(`/locks?prefix=${encodeURIComponent(prefix)}`);
    const rows = page.locator("tbody tr");
    await expect(rows).toHaveCount(1);
    const cells = rows.first().locator("td");
    await expect(cells.nth(0)).toHaveText(lease.resource);
    await expect(cells.nth(1)).toHaveText(/held/i);
    await expect(cells.nth(2)).toHaveText(PG_STORE);
    await expect(cells.nth(3)).toHaveText(lease.owner);
    await expect(cells.nth(4)).toHaveText(lease.task);
    await expect(cells.nth(5)).toHaveText(token);

    await page.goto(leaseHref(PG_STORE, lease.resource));
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(lease.resource);
    const field = (label: string) => page.locator("dl > div").filter({ has: page.locator("dt", { hasText: new RegExp(`^${label}$`) }) }).locator("dd");
    await expect(field("Owner")).toHaveText(lease.owner);
    await expect(field("Task")).toHaveText(lease.task);
    await expect(field("Lease id")).toHaveText(lease.leaseId);
    await expect(field("Fencing token")).toHaveText(token);

    await page.goto(`/events?prefix=${encodeURIComponent(prefix)}`);
    await expect(rows).toHaveCount(1);
    const event = rows.first().locator("td");
    // When, Kind, Resource, Store, Owner, Task, Token
    await expect(event.nth(1)).toHaveText("acquired");
    await expect(event.nth(2)).toHaveText(lease.resource);
    await expect(event.nth(3)).toHaveText(PG_STORE);
    await expect(event.nth(4)).toHaveText(lease.owner);
    await expect(event.nth(5)).toHaveText(lease.task);
    await expect(event.nth(6)).toHaveText(token);

    // Released by its holder: the open events page shows it on its next poll, same token.
    const released = await store.release({ resource: lease.resource, leaseId: lease.leaseId });
    expect(released.released).toBe(true);
    await expect(rows).toHaveCount(2);
    await expect(rows.first().locator("td").nth(1)).toHaveText("released");
    await expect(rows.first().locator("td").nth(6)).toHaveText(token);
  } finally {
    await store.release({ resource: lease.resource, leaseId: lease.leaseId }).catch(() => {});
  }
});

test("the overview's acquisitions equal the store's own count of acquired events in the same window", async ({ page }) => {
  /** Acquired events in whole minutes [from, the end of to's minute), counted by the store itself. */
  const countAcquired = async (from: number, to: number) => {
    let counted = 0;
    let cursor: string | undefined;
    do {
      const events = await store.events({ kinds: ["acquired"], from: new Date(from), to: new Date(Math.ceil(to / MINUTE) * MINUTE), limit: 500, cursor });
      counted += events.items.length;
      cursor = events.nextCursor;
    } while (cursor);
    return counted;
  };
  // From the minute of the store's first acquire (so the first bucket is never empty) up to now:
  // the overview counts whole minute buckets, the current one included.
  const first = (await store.events({ kinds: ["acquired"], order: "asc", limit: 1 })).items[0];
  expect(first, "the workload acquired something").toBeDefined();
  const from = Math.max(Math.floor(first!.at.getTime() / MINUTE) * MINUTE, Date.now() - 60 * MINUTE);
  const to = Date.now();
  // The workload keeps acquiring during the read: the page's count lies between the store's before and after.
  const before = await countAcquired(from, to);
  const search = new URLSearchParams({ store: PG_STORE, window: "custom", from: new Date(from).toISOString(), to: new Date(to).toISOString() });
  await page.goto(`/?${search}`);
  const acquisitions = page.locator("dl > div").filter({ hasText: "Acquisitions / min" }).locator("dd");
  await expect(acquisitions.nth(1)).toHaveText(/in the window/);
  const shown = Number((await acquisitions.nth(1).textContent())!.replace(/[^\d]/g, ""));
  const after = await countAcquired(from, to);
  expect(before).toBeGreaterThan(0);
  expect(shown).toBeGreaterThanOrEqual(before);
  expect(shown).toBeLessThanOrEqual(after);
});
