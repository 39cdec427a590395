import type { Random } from "./random";

/**
 * Realistic names: what an on-call engineer sees in a real fleet. Resources are
 * `:`-separated paths so the console's prefix grouping has something to group.
 */
export const TENANT_COUNT = 400;
export const BILLING_PERIOD = "2026-11";
export const HOT_RESOURCES = [
  "cron:nightly-report",
  "migrations:schema-v42",
  "queue:emails:shard-0",
  "queue:emails:shard-1",
  "queue:emails:shard-2",
  "queue:emails:shard-3",
] as const;
export const LONG_HOLD_RESOURCES = [
  "backup:pg-main:nightly",
  "reindex:search:cluster-2",
  "maintenance:vacuum:events",
  "tenant_17:data-retention:2026-11",
  "tenant_42:ledger-rebuild:2026-11",
] as const;

const SERVICES = ["billing", "invoicing", "reports", "mailer", "sync", "ledger", "scheduler"] as const;

/** A tenant-scoped resource, e.g. `tenant_123:billing-close:2026-11` or `tenant_9:invoice-sync`. */
export function pickTenantResource(random: Random): string {
  const tenant = random.skewed(TENANT_COUNT);
  const r = random.next();
  if (r < 0.45) return `tenant_${tenant}:invoice-sync`;
  if (r < 0.75) return `tenant_${tenant}:billing-close:${BILLING_PERIOD}`;
  if (r < 0.9) return `tenant_${tenant}:report-export`;
  return `tenant_${tenant}:webhook-retry`;
}

/** How many tenants' ledgers the stale writers spread over by default. */
export const LEDGER_TENANT_COUNT = 60;

/** A resource that stale writers and their rescuers fight over (and whose downstream row is fenced). */
export function pickLedgerResource(random: Random, tenants: number = LEDGER_TENANT_COUNT): string {
  return `tenant_${random.skewed(tenants)}:ledger-export:${BILLING_PERIOD}`;
}

/** A deployment-like owner name: `worker-7@billing-7c9f`. Stable for one worker's lifetime. */
export function makeOwner(random: Random, service?: string): string {
  const svc = service ?? random.pick(SERVICES);
  const pod = Math.floor(random.next() * 0xffff)
    .toString(16)
    .padStart(4, "0");
  return `worker-${random.int(1, 24)}@${svc}-${pod}`;
}

/** A run id like `run-4411`; new for each unit of work. */
export function makeTask(random: Random): string {
  return `run-${random.int(1000, 9999)}`;
}
