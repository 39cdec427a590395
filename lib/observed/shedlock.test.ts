import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPgSchema, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { quoteShedLockTable, readShedLocks, releaseShedLock } from "./shedlock";

const schema = freshPgSchema();
const table = `${schema.schema}.shedlock`;
const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
pool.on("error", () => {});

/** Rows as ShedLock's JDBC provider writes them with `usingDbTime()`: UTC wall times in TIMESTAMP columns. */
async function put(name: string, lockedAtSecondsAgo: number, lockUntilSecondsFromNow: number, lockedBy: string) {
  await pool.query(
    `INSERT INTO ${table} (name, lock_until, locked_at, locked_by)
     VALUES ($1, timezone('utc', now()) + make_interval(secs => $3), timezone('utc', now()) - make_interval(secs => $2), $4)
     ON CONFLICT (name) DO UPDATE SET lock_until = EXCLUDED.lock_until, locked_at = EXCLUDED.locked_at, locked_by = EXCLUDED.locked_by`,
    [name, lockedAtSecondsAgo, lockUntilSecondsFromNow, lockedBy],
  );
}

beforeAll(async () => {
  await pool.query(`CREATE SCHEMA "${schema.schema}"`);
  // The table exactly as ShedLock's documentation creates it.
  await pool.query(`CREATE TABLE ${table} (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))`);
});

afterAll(async () => {
  await schema.drop();
  await pool.end();
});

describe("readShedLocks: a ShedLock table's rows as held, lapsed or free", () => {
  it("tells held from lapsed (lock_until passed at lockAtMostFor) from free (released early)", async () => {
    await put("invoiceJob", 30, 570, "worker-1.example"); // taken 30 s ago for at most 10 min
    await put("reportJob", 700, -100, "worker-2.example"); // taken 700 s ago for 10 min: lapsed 100 s ago
    await put("cleanupJob", 700, -680, "worker-3.example"); // released 20 s after it was taken
    const snapshot = await readShedLocks(pool, { table, lockAtMostForMs: { default: 600_000 } });
    const byName = Object.fromEntries(snapshot.rows.map((r) => [r.name, r]));
    expect(byName.invoiceJob).toMatchObject({ state: "held", lockedBy: "worker-1.example" });
    expect(byName.reportJob).toMatchObject({ state: "lapsed", lockedBy: "worker-2.example" });
    expect(byName.cleanupJob).toMatchObject({ state: "free" });
    // UTC wall times come back as the instants they mean.
    expect(Math.abs(byName.invoiceJob!.lockedAt.getTime() - (snapshot.at.getTime() - 30_000))).toBeLessThan(5_000);
    expect(snapshot.total).toBe(3);
  });

  it("without lockAtMostFor, a passed lock_until reads free (nothing tells it apart)", async () => {
    const snapshot = await readShedLocks(pool, { table });
    expect(snapshot.rows.find((r) => r.name === "reportJob")!.state).toBe("free");
  });

  it("releases a row only while it still shows the holder that was shown", async () => {
    await put("billingJob", 5, 300, "worker-7.example");
    const shown = (await readShedLocks(pool, { table })).rows.find((r) => r.name === "billingJob")!;
    // Another holder took it after the dialog opened: refused, row unchanged.
    await put("billingJob", 1, 300, "worker-8.example");
    expect(await releaseShedLock(pool, { table, name: "billingJob", lockedAt: shown.lockedAt, lockedBy: shown.lockedBy })).toBe(false);
    expect((await readShedLocks(pool, { table })).rows.find((r) => r.name === "billingJob")).toMatchObject({ state: "held", lockedBy: "worker-8.example" });
    const current = (await readShedLocks(pool, { table })).rows.find((r) => r.name === "billingJob")!;
    expect(await releaseShedLock(pool, { table, name: "billingJob", lockedAt: current.lockedAt, lockedBy: current.lockedBy })).toBe(true);
    expect((await readShedLocks(pool, { table })).rows.find((r) => r.name === "billingJob")!.state).toBe("free");
  });

  it("refuses a table name that is not an identifier", () => {
    expect(() => quoteShedLockTable("shedlock; DROP TABLE x")).toThrow(/letters, digits and _ only/);
    expect(quoteShedLockTable("ops.shedlock")).toBe('"ops"."shedlock"');
  });
});
