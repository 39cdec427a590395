/**
 * Runs test files with the wall clock moved to a chosen instant: vitest, a throwaway
 * PostgreSQL and a throwaway Redis all run with test/support/clock-shift.c preloaded and one
 * shared offset, so `now()`, Redis `TIME` and `Date.now()` agree with each other as they do
 * in production, only at another hour. Tests that seed by time (day partitions, hour and day
 * buckets, windows that cross midnight or a month's end) show here whether they depend on
 * the hour they run at.
 *
 *   npm run test:clock -- 2026-11-30T23:58:30Z [test files…]
 *   npm run test:clock -- month-end [test files…]   (this month's last day, 23:58:30 UTC)
 *
 * With no files it runs TIME_SEEDED_TESTS. Needs a C compiler (cc) to build the shim.
 * Monotonic clocks are left alone, so timers run at their usual pace.
 */
import { spawn } from "node:child_process";
import pg from "pg";
import { buildClockShim } from "../test/support/clock-shift";
import { startPostgres, startRedis, stopAllServers } from "./throwaway-servers";

/** Every test file that seeds history by time or reads a time window over it. */
export const TIME_SEEDED_TESTS = [
  "lib/lease/postgres/events-plan.test.ts",
  "lib/lease/postgres/leases-plan.test.ts",
  "lib/lease/postgres/partitions.test.ts",
  "lib/lease/postgres/store.test.ts",
  "lib/lease/redis/retention.test.ts",
  "lib/lease/redis/bounded-reads.test.ts",
  "lib/lease/redis/redis-store.test.ts",
  "lib/lease/held-at.test.ts",
  "lib/lease/slack.test.ts",
  "lib/console/overview/closed-buckets.test.ts",
  "lib/console/events/event-retention.test.ts",
  "lib/console/overview/overview-contention.test.ts",
  "lib/console/overview/overview-days.test.ts",
  "lib/console/overview/overview-prefix.test.ts",
  "lib/console/shared/bounded-reads.test.ts",
  "lib/console/shared/read-models.test.ts",
  "lib/console/shared/walk-read-models.test.ts",
  "lib/console/shared/scoped-read-models.test.ts",
  "lib/console/events/unservable-events.test.ts",
  "lib/console/shared/time-scale.test.ts",
  "lib/console/metrics/metrics-replicas.test.ts",
  "lib/console/shared/params.test.ts",
  "scripts/seed/backfill.test.ts",
  "scripts/seed/history.test.ts",
];

const SHIFTED = "LEASEWATCH_CLOCK_SHIFTED";


/** "month-end": the last day of this month, 23:58:30 UTC, so a run crosses midnight and the month. */
export function resolveInstant(arg: string, now = new Date()): Date {
  if (arg === "month-end") return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0, 23, 58, 30));
  const at = new Date(arg);
  if (Number.isNaN(at.getTime())) throw new Error(`not an instant: ${JSON.stringify(arg)} (use an ISO time such as 2026-11-30T23:58:30Z, or month-end)`);
  return at;
}

async function runShifted(files: string[]): Promise<number> {
  const [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
  try {
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    const { rows } = await client.query<{ now: Date }>("SELECT now()");
    await client.end();
    // The run is only meaningful if the servers took the same offset as the tests.
    console.log(`[test-at] clocks: this process ${new Date().toISOString()}, PostgreSQL ${rows[0]!.now.toISOString()}`);
    const child = spawn("node_modules/.bin/vitest", ["run", ...files], {
      stdio: "inherit",
      env: { ...process.env, DATABASE_URL: postgres.url, REDIS_URL: redis.url },
    });
    return await new Promise<number>((resolve) => child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0))));
  } finally {
    await stopAllServers();
  }
}

async function main(): Promise<void> {
  const [instantArg, ...rest] = process.argv.slice(2);
  if (!instantArg || instantArg === "--help") {
    console.log("usage: node --import tsx scripts/test-at.ts <ISO instant | month-end> [test files…]");
    process.exit(instantArg ? 0 : 2);
  }
  const files = rest.length > 0 ? rest : TIME_SEEDED_TESTS;
  if (process.env[SHIFTED]) {
    process.exit(await runShifted(files));
  }
  const at = resolveInstant(instantArg);
  const offsetSeconds = Math.round((at.getTime() - Date.now()) / 1000);
  console.log(`[test-at] running ${files.length} test files at ${at.toISOString()} (clock offset ${offsetSeconds} s)`);
  // Everything below inherits the shim and the offset: vitest, its workers and the servers.
  const child = spawn(process.execPath, ["--import", "tsx", ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, [SHIFTED]: "1", LD_PRELOAD: buildClockShim(), CLOCK_SHIFT_SECONDS: String(offsetSeconds) },
  });
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

void main();
