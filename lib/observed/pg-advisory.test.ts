import { randomInt } from "node:crypto";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { internalLockKey } from "@leasewatch/lease/internal";
import { TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { createStoreFixture } from "@/test/support/stores";
import { readAdvisoryLocks, resolveAdvisoryNames, terminateAdvisoryHolder, waitChain, type AdvisorySnapshot } from "./pg-advisory";

/** Real sessions on the shared server; every key is random so parallel suites never meet. */
const sessions: pg.Client[] = [];

async function session(applicationName: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, application_name: applicationName });
  client.on("error", () => {});
  await client.connect();
  sessions.push(client);
  return client;
}

afterEach(async () => {
  await Promise.all(sessions.splice(0).map((c) => c.end().catch(() => {})));
});

const randomKey = () => String(randomInt(1, 2 ** 47) * (Math.random() < 0.5 ? -1 : 1));

/** Polls until `pid` shows as waiting (a lock request is asynchronous to the test). */
async function readUntil(observer: pg.Client, done: (s: AdvisorySnapshot) => boolean): Promise<AdvisorySnapshot> {
  for (let i = 0; i < 100; i++) {
    const snapshot = await readAdvisoryLocks(observer);
    if (done(snapshot)) return snapshot;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the advisory locks never reached the expected state");
}

describe("readAdvisoryLocks: every advisory lock in the database, read-only", () => {
  it("shows a held bigint key with its holder's pid, application name and user, and a waiter behind it", async () => {
    const key = randomKey();
    const holder = await session("billing-close-job");
    const waiter = await session("billing-close-retry");
    const observer = await session("leasewatch-observer");
    const holderPid = (await holder.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    const waiterPid = (await waiter.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    await holder.query("SELECT pg_advisory_lock($1::bigint)", [key]);
    const waiting = waiter.query("SELECT pg_advisory_lock($1::bigint)", [key]);

    const snapshot = await readUntil(observer, (s) => s.locks.some((l) => l.resource === `advisory:${key}` && l.waiters.length === 1));
    const lock = snapshot.locks.find((l) => l.resource === `advisory:${key}`)!;
    expect(lock.key).toEqual({ form: "bigint", key });
    expect(lock.holders).toEqual([expect.objectContaining({ pid: holderPid, applicationName: "billing-close-job", user: "postgres" })]);
    expect(lock.holders[0]).not.toHaveProperty("query");
    expect(lock.waiters).toEqual([expect.objectContaining({ pid: waiterPid, applicationName: "billing-close-retry", blockedBy: [holderPid] })]);

    await holder.query("SELECT pg_advisory_unlock($1::bigint)", [key]);
    await waiting;
    const after = await readUntil(observer, (s) => s.locks.some((l) => l.resource === `advisory:${key}` && l.waiters.length === 0));
    expect(after.locks.find((l) => l.resource === `advisory:${key}`)!.holders.map((h) => h.pid)).toEqual([waiterPid]);
  });

  it("reads a three-session wait chain in order: C waits for B, which waits for A", async () => {
    const [k1, k2] = [randomKey(), randomKey()];
    const a = await session("chain-a");
    const b = await session("chain-b");
    const c = await session("chain-c");
    const observer = await session("leasewatch-observer");
    const pid = async (s: pg.Client) => (await s.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    const [pa, pb, pc] = [await pid(a), await pid(b), await pid(c)];
    await a.query("SELECT pg_advisory_lock($1::bigint)", [k1]);
    await b.query("SELECT pg_advisory_lock($1::bigint)", [k2]);
    void b.query("SELECT pg_advisory_lock($1::bigint)", [k1]).catch(() => {});
    void c.query("SELECT pg_advisory_lock($1::bigint)", [k2]).catch(() => {});

    const snapshot = await readUntil(observer, (s) => s.locks.filter((l) => [`advisory:${k1}`, `advisory:${k2}`].includes(l.resource) && l.waiters.length === 1).length === 2);
    expect(waitChain(snapshot, pc)).toEqual([pc, pb, pa]);
    expect(waitChain(snapshot, pa)).toEqual([pa]);
  });

  it("reads the two-int form and transaction locks, names keys from the naming map, and shows the query only when asked", async () => {
    const pair: [number, number] = [randomInt(-(2 ** 31), 2 ** 31 - 1), randomInt(-(2 ** 31), 2 ** 31 - 1)];
    const name = `billing-close-${randomInt(1e9)}`;
    const holder = await session("pair-holder");
    const tx = await session("tx-holder");
    const observer = await session("leasewatch-observer");
    await holder.query("SELECT pg_advisory_lock($1::int, $2::int)", pair);
    await tx.query("BEGIN");
    await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [name]);

    const names = await resolveAdvisoryNames(observer, { names: [{ name, hashtext: name }, { name: "reports:nightly", pair }] });
    const snapshot = await readAdvisoryLocks(observer, { names, includeQuery: true });
    const pairLock = snapshot.locks.find((l) => l.resource === "reports:nightly")!;
    expect(pairLock.key).toEqual({ form: "pair", key1: pair[0], key2: pair[1] });
    const txLock = snapshot.locks.find((l) => l.resource === name)!;
    expect(txLock.holders[0]!.xactStart).toBeInstanceOf(Date);
    expect(txLock.holders[0]!.query).toContain("pg_advisory_xact_lock");

    await tx.query("COMMIT");
    const after = await readAdvisoryLocks(observer, { names });
    expect(after.locks.some((l) => l.resource === name)).toBe(false);
    expect(after.locks.some((l) => l.resource === "reports:nightly")).toBe(true);
  });

  it("leaves out Leasewatch's own transaction locks (a store's grant, its jobs) and lists a team's locks beside them", async () => {
    const fixture = await createStoreFixture("postgres", { name: "pg-advisory-own" });
    const { schema } = fixture.spec;
    try {
      const grant = await session("leasewatch-store");
      const job = await session("leasewatch-sweeper");
      const team = await session("billing-close-job");
      const observer = await session("leasewatch-observer");
      // The keys a lease grant and the rollup refresh take on this schema, held open.
      await grant.query("BEGIN");
      await grant.query("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", [schema, "billing:close"]);
      await job.query("BEGIN");
      await job.query("SELECT pg_advisory_xact_lock(hashtext($1))", [internalLockKey("rollup", schema)]);
      // A team's locks: the same two forms, keys of their own.
      const teamKey = randomKey();
      const teamPair: [number, number] = [randomInt(-(2 ** 31), 2 ** 31 - 1), randomInt(-(2 ** 31), 2 ** 31 - 1)];
      await team.query("SELECT pg_advisory_lock($1::bigint)", [teamKey]);
      await team.query("SELECT pg_advisory_lock($1::int, $2::int)", teamPair);

      const { rows } = await observer.query<{ grant: number; job: string }>("SELECT hashtext($1) AS grant, hashtext($2)::bigint::text AS job", [
        schema,
        internalLockKey("rollup", schema),
      ]);
      const snapshot = await readAdvisoryLocks(observer);
      const keys = snapshot.locks.map((l) => l.key);
      expect(keys).toContainEqual({ form: "bigint", key: teamKey });
      expect(keys).toContainEqual({ form: "pair", key1: teamPair[0], key2: teamPair[1] });
      expect(keys.filter((k) => k.form === "pair" && k.key1 === rows[0]!.grant)).toEqual([]);
      expect(keys).not.toContainEqual({ form: "bigint", key: rows[0]!.job });
      await grant.query("COMMIT");
      await job.query("COMMIT");
    } finally {
      await fixture.cleanup();
    }
  });

  it("reads at most `limit` rows and says how many there are", async () => {
    const holder = await session("many-locks");
    const base = randomInt(1, 2 ** 40);
    await holder.query("SELECT pg_advisory_lock(k) FROM generate_series($1::bigint, $1::bigint + 49) AS k", [base]);
    const observer = await session("leasewatch-observer");
    const snapshot = await readAdvisoryLocks(observer, { limit: 10 });
    expect(snapshot.total).toBeGreaterThanOrEqual(50);
    expect(snapshot.truncated).toBe(true);
    expect(snapshot.locks.reduce((n, l) => n + l.holders.length + l.waiters.length, 0)).toBe(10);
  });

  it("force-release ends the holder's session only while that same backend still holds that same key", async () => {
    const [key, other] = [randomKey(), randomKey()];
    const holder = await session("stuck-holder");
    const observer = await session("leasewatch-observer");
    await holder.query("SELECT pg_advisory_lock($1::bigint)", [key]);
    await holder.query("SELECT pg_advisory_lock($1::int, $2::int)", [7, 11]);
    const shown = (await readAdvisoryLocks(observer)).locks.find((l) => l.resource === `advisory:${key}`)!.holders[0]!;
    // A different key, or the same pid from another start (a reused pid): refused, the session lives.
    expect(await terminateAdvisoryHolder(observer, { key: { form: "bigint", key: other }, pid: shown.pid, backendStart: shown.backendStart! })).toBe(false);
    expect(await terminateAdvisoryHolder(observer, { key: { form: "bigint", key }, pid: shown.pid, backendStart: new Date(shown.backendStart!.getTime() - 1_000) })).toBe(false);
    expect(await terminateAdvisoryHolder(observer, { key: { form: "pair", key1: 7, key2: 12 }, pid: shown.pid, backendStart: shown.backendStart! })).toBe(false);
    expect((await holder.query("SELECT 1 AS ok")).rows[0].ok).toBe(1);
    // The same backend, the same key: terminated, and the lock is gone.
    expect(await terminateAdvisoryHolder(observer, { key: { form: "bigint", key }, pid: shown.pid, backendStart: shown.backendStart! })).toBe(true);
    await expect(holder.query("SELECT 1")).rejects.toThrow();
    const after = await readUntil(observer, (s) => !s.locks.some((l) => l.resource === `advisory:${key}`));
    expect(after.locks.some((l) => l.resource === `advisory:${key}`)).toBe(false);
  });
});
