/**
 * The demo's locks that Leasewatch does not own, so the observed stores have
 * something to show: Postgres advisory locks (session and transaction locks,
 * waiters, a three-session wait chain), a ShedLock table fed by scheduled jobs
 * (one of which sometimes dies holding its lock), and redlock workers on Redis
 * (some of which crash and let the key expire). Loopback only, like the rest of
 * the workload; everything stops with stop().
 */
import { Redlock } from "@sesamecare-oss/redlock";
import { Redis } from "ioredis";
import pg from "pg";
import type { TObservedConfig } from "../../lib/observed/config";
import { sleepFor } from "./sleep";

export const DEMO_REDLOCK_PATTERN = "tenant_*:redlock:*";

/** The observed stores the demo configures for its own workload. */
export function demoObservedConfig(pgUrl: string, redisUrl: string, shedlockTable: string): TObservedConfig[] {
  return [
    {
      name: "pg-advisory",
      kind: "pg-advisory",
      url: pgUrl,
      // The demo releases through the same connection; production gives releaseUrl a role of its own.
      releaseUrl: pgUrl,
      names: [
        { name: "tenant_1:billing-close", hashtext: "billing-close" },
        { name: "tenant_2:report-export", key: "424242" },
        { name: "tenant_1:ledger:a", key: "7001" },
        { name: "tenant_1:ledger:b", key: "7002" },
      ],
      showQuery: true,
    },
    { name: "shedlock", kind: "shedlock", url: pgUrl, releaseUrl: pgUrl, table: shedlockTable, lockAtMostForMs: 30_000 },
    { name: "redis-locks", kind: "redis-keys", url: redisUrl, releaseUrl: redisUrl, patterns: [DEMO_REDLOCK_PATTERN] },
  ];
}

const between = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo));

export async function startObservedWorkload(options: { pgUrl: string; redisUrl: string; shedlockTable: string; log?: (line: string) => void }): Promise<{ stop(): Promise<void> }> {
  const table = options.shedlockTable;
  const [tableSchema, tableName] = table.split(".") as [string, string];
  const abort = new AbortController();
  const { signal } = abort;
  const clients: pg.Client[] = [];
  const session = async (applicationName: string) => {
    const client = new pg.Client({ connectionString: options.pgUrl, application_name: applicationName });
    client.on("error", () => {});
    await client.connect();
    clients.push(client);
    return client;
  };
  const loops: Promise<void>[] = [];
  const loop = (fn: () => Promise<void>) =>
    loops.push(
      (async () => {
        while (!signal.aborted) await fn().catch(() => sleepFor(1_000, signal));
      })(),
    );

  // Advisory: a nightly billing close holds its session lock; a retry waits behind it.
  const billing = await session("nightly-billing-close");
  const retry = await session("billing-close-retry");
  loop(async () => {
    await billing.query("SELECT pg_advisory_lock(hashtext('billing-close'))");
    await sleepFor(between(20_000, 40_000), signal);
    await billing.query("SELECT pg_advisory_unlock(hashtext('billing-close'))");
    await sleepFor(between(3_000, 8_000), signal);
  });
  loop(async () => {
    await sleepFor(between(5_000, 15_000), signal);
    await retry.query("SELECT pg_advisory_lock(hashtext('billing-close'))");
    await sleepFor(between(1_000, 3_000), signal);
    await retry.query("SELECT pg_advisory_unlock(hashtext('billing-close'))");
  });
  // A report export takes a transaction lock for the length of its transaction.
  const exporter = await session("report-export");
  loop(async () => {
    await exporter.query("BEGIN");
    await exporter.query("SELECT pg_advisory_xact_lock(424242)");
    await sleepFor(between(5_000, 15_000), signal);
    await exporter.query("COMMIT");
    await sleepFor(between(5_000, 10_000), signal);
  });
  // A wait chain: ledger-c waits for ledger-b, which waits for ledger-a.
  const [a, b, c] = [await session("ledger-a"), await session("ledger-b"), await session("ledger-c")];
  loop(async () => {
    await a.query("SELECT pg_advisory_lock(7001)");
    await b.query("SELECT pg_advisory_lock(7002)");
    const bWaits = b.query("SELECT pg_advisory_lock(7001)");
    const cWaits = c.query("SELECT pg_advisory_lock(7002)");
    // Waits a stop() can cut short (their sessions end): handled now, awaited below.
    bWaits.catch(() => {});
    cWaits.catch(() => {});
    await sleepFor(between(15_000, 30_000), signal);
    await a.query("SELECT pg_advisory_unlock(7001)");
    await bWaits;
    await b.query("SELECT pg_advisory_unlock(7001)");
    await b.query("SELECT pg_advisory_unlock(7002)");
    await cWaits;
    await c.query("SELECT pg_advisory_unlock(7002)");
    await sleepFor(between(5_000, 10_000), signal);
  });

  // ShedLock: three scheduled jobs on two hosts, as ShedLock's JDBC provider writes them (UTC wall times).
  // A session per job: the jobs run at once, and one pg client runs one query at a time.
  const shedJobs = [["invoiceJob", 12_000], ["reportJob", 20_000], ["cleanupJob", 8_000]] as const;
  for (const [index, [job, everyMs]] of shedJobs.entries()) {
    const shed = await session(`shedlock-${job}`);
    if (index === 0) {
      await shed.query(`CREATE SCHEMA IF NOT EXISTS ${tableSchema}`);
      await shed.query(`CREATE TABLE IF NOT EXISTS ${table} (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))`);
    }
    loop(async () => {
      const host = `scheduler-${between(1, 3)}.demo`;
      const taken = await shed.query(
        `INSERT INTO ${table} (name, lock_until, locked_at, locked_by)
         VALUES ($1, timezone('utc', now()) + interval '30 seconds', timezone('utc', now()), $2)
         ON CONFLICT (name) DO UPDATE SET lock_until = EXCLUDED.lock_until, locked_at = EXCLUDED.locked_at, locked_by = EXCLUDED.locked_by
         WHERE ${tableName}.lock_until <= timezone('utc', now())`,
        [job, host],
      );
      if (taken.rowCount === 1) {
        await sleepFor(between(2_000, 7_000), signal);
        // The report job sometimes dies holding its lock: it lapses at lockAtMostFor (30 s).
        const dies = job === "reportJob" && Math.random() < 0.3;
        if (!dies) await shed.query(`UPDATE ${table} SET lock_until = timezone('utc', now()) WHERE name = $1 AND locked_by = $2`, [job, host]);
      }
      await sleepFor(everyMs, signal);
    });
  }

  // redlock workers: payments on tenant_1, exports on tenant_2; one in five crashes and lets its key expire.
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1 });
  redis.on("error", () => {});
  const redlock = new Redlock([redis], { retryCount: 0 });
  for (const resource of ["tenant_1:redlock:payments:eu", "tenant_1:redlock:payments:us", "tenant_2:redlock:exports:daily"]) {
    loop(async () => {
      try {
        const lock = await redlock.acquire([resource], 10_000);
        await sleepFor(between(3_000, 8_000), signal);
        if (Math.random() >= 0.2) await lock.release();
      } catch {
        // Held by another worker: try again later, as a redlock user would.
      }
      await sleepFor(between(2_000, 6_000), signal);
    });
  }

  options.log?.("[workload] observed locks: advisory holders and waiters, ShedLock jobs, redlock workers");
  return {
    async stop() {
      abort.abort();
      // Closing the sessions ends their locks and any lock wait still pending.
      await Promise.all(clients.map((client) => client.end().catch(() => {})));
      await Promise.race([Promise.allSettled(loops), new Promise((r) => setTimeout(r, 2_000))]);
      redis.disconnect();
    },
  };
}
