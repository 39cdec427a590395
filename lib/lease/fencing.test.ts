import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { LeaseError } from "./errors";
import { createFencedTable, fencedKey, fencedWrite, readFencedHistory } from "./fencing";
import { freshPgSchema, TEST_DATABASE_URL, type FreshPgSchema } from "./testing/isolation";
import type { LeaseStore } from "./types";

/** Fenced downstream on the shared Postgres, in a schema of its own per test. */
let pool: pg.Pool;
let schema: FreshPgSchema;
let table: string;

beforeAll(() => {
  pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 8 });
  pool.on("error", () => undefined);
});
afterAll(async () => {
  await pool.end();
});
beforeEach(async () => {
  schema = freshPgSchema();
  await pool.query(`CREATE SCHEMA "${schema.schema}"`);
  table = `${schema.schema}.ledger`;
});
afterEach(async () => {
  await schema.drop();
});

const base = { resource: "tenant_1:ledger", by: "ledger-db", key: "tenant_1", storeName: "pg-test" };

describe("fenced writes", () => {
  it("creates the table once (idempotent)", async () => {
    expect(await createFencedTable({ pool, table })).toEqual({ table, created: true });
    expect(await createFencedTable({ pool, table })).toEqual({ table, created: false });
  });

  it("accepts fresh and equal tokens, refuses older ones with the token it has seen", async () => {
    await createFencedTable({ pool, table, history: true });
    expect(await fencedWrite({ ...base, pool, table, history: true, value: { n: 1 }, fencingToken: "10" })).toEqual({ accepted: true, fencingToken: "10" });
    expect(await fencedWrite({ ...base, pool, table, history: true, value: { n: 2 }, fencingToken: "10" })).toEqual({ accepted: true, fencingToken: "10" });
    expect(await fencedWrite({ ...base, pool, table, history: true, value: { n: 3 }, fencingToken: "12" })).toEqual({ accepted: true, fencingToken: "12" });
    expect(await fencedWrite({ ...base, pool, table, history: true, value: { n: 4 }, fencingToken: "11" })).toEqual({ accepted: false, seenToken: "12" });
    // Other keys are independent.
    expect((await fencedWrite({ ...base, pool, table, history: true, key: "tenant_2", value: 1, fencingToken: "1" })).accepted).toBe(true);

    const { rows } = await pool.query(`SELECT value, fencing_token::text AS token FROM ${table} WHERE key = $1`, ["pg-test/tenant_1"]);
    expect(rows).toEqual([{ value: { n: 3 }, token: "12" }]);
    const history = await readFencedHistory({ pool, table, store: "pg-test" });
    expect(history.map((h) => [h.key, h.fencingToken])).toEqual([
      ["tenant_1", "10"],
      ["tenant_1", "10"],
      ["tenant_1", "12"],
      ["tenant_2", "1"],
    ]);
  });

  it("compares tokens as numbers, beyond 2^53", async () => {
    await createFencedTable({ pool, table });
    expect((await fencedWrite({ ...base, pool, table, value: 1, fencingToken: "9007199254740993" })).accepted).toBe(true);
    expect(await fencedWrite({ ...base, pool, table, value: 1, fencingToken: "9007199254740992" })).toEqual({
      accepted: false,
      seenToken: "9007199254740993",
    });
    expect((await fencedWrite({ ...base, pool, table, value: 1, fencingToken: "10000000000000000" })).accepted).toBe(true);
  });

  it("concurrent writers: the accepted tokens never go backwards and the newest wins", async () => {
    await createFencedTable({ pool, table, history: true });
    const tokens = Array.from({ length: 60 }, (_, i) => String(1 + ((i * 37) % 60)));
    const results = await Promise.all(tokens.map((t) => fencedWrite({ ...base, pool, table, history: true, value: { t }, fencingToken: t })));
    const history = await readFencedHistory({ pool, table });
    expect(history.length).toBe(results.filter((r) => r.accepted).length);
    for (let i = 1; i < history.length; i++) {
      expect(BigInt(history[i]!.fencingToken) >= BigInt(history[i - 1]!.fencingToken)).toBe(true);
    }
    expect(history.at(-1)?.fencingToken).toBe("60");
    for (const r of results) if (!r.accepted) expect(BigInt(r.seenToken) > 0n).toBe(true);
  });

  it("a write refused by a row that committed while it waited reports the token that won", async () => {
    await createFencedTable({ pool, table, history: true });
    // Two shapes of the race: the key is new, or it already holds an older token.
    for (const [key, initial] of [["fresh", null], ["existing", "5"]] as const) {
      if (initial) expect((await fencedWrite({ ...base, pool, table, history: true, key, value: 0, fencingToken: initial })).accepted).toBe(true);
      const newer = await pool.connect();
      try {
        await newer.query("BEGIN");
        expect((await fencedWrite({ ...base, pool: newer, table, history: true, key, value: 20, fencingToken: "20" })).accepted).toBe(true);
        // The older write starts (and takes its snapshot) while the newer one is uncommitted, then waits on the row.
        const older = fencedWrite({ ...base, pool, table, history: true, key, value: 10, fencingToken: "10" });
        for (let i = 0; i < 200; i++) {
          const { rows } = await pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`,
            [schema.schema],
          );
          if (rows[0]!.n > 0) break;
          await new Promise((r) => setTimeout(r, 10));
        }
        await newer.query("COMMIT");
        expect(await older).toEqual({ accepted: false, seenToken: "20" });
      } finally {
        newer.release();
      }
    }
    const history = await readFencedHistory({ pool, table });
    expect(history.map((h) => [h.key, h.fencingToken])).toEqual([
      ["pg-test/fresh", "20"],
      ["pg-test/existing", "5"],
      ["pg-test/existing", "20"],
    ]);
  });

  it("bad input throws LeaseError and writes nothing", async () => {
    await createFencedTable({ pool, table });
    const bad: Array<Record<string, unknown>> = [
      { table: 'ledger"; DROP TABLE x; --' },
      { table: "Ledger" },
      { fencingToken: "-1" },
      { fencingToken: "1e5" },
      { fencingToken: "9223372036854775808" },
      { key: "" },
      { resource: "" },
      { value: () => 1 },
      { extra: true },
      // Which store issued the token is not optional: tokens of two stores are not comparable.
      { storeName: undefined },
      { storeName: "Pg/Main" },
      { store: { name: "redis-test", reportFencingRejection: async () => ({}) }, storeName: "pg-test" },
      // What the store or Postgres would refuse later must be refused before anything is sent.
      { by: " ledger-db" },
      { by: "ledger-db " },
      { key: "tenant\u0000x" },
      { value: { note: "a\u0000b" } },
      { value: { "a\u0000": 1 } },
      { value: ["\udc00"] },
    ];
    for (const patch of bad) {
      await expect(fencedWrite({ ...base, pool, table, value: 1, fencingToken: "5", ...patch } as never)).rejects.toBeInstanceOf(LeaseError);
    }
    await expect(createFencedTable({ pool, table: "a.b.c" })).rejects.toBeInstanceOf(LeaseError);
    await expect(readFencedHistory({ pool, table, limit: 5 } as never)).rejects.toThrow(/unknown option.*limit/);
    expect((await pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(0);
  });
});

describe("fenced writes are keyed by store", () => {
  // What the two demo stores hand out for the same resource name: a Postgres sequence value and a Redis microsecond token.
  const PG_TOKEN = "20417";
  const REDIS_TOKEN = "1795666012345678";

  it("a store's tokens are only compared with its own: a low Postgres token is not refused after a Redis one", async () => {
    await createFencedTable({ pool, table, history: true });
    const write = (storeName: string, fencingToken: string, extra: Record<string, unknown> = {}) =>
      fencedWrite({ ...base, pool, table, history: true, storeName, value: { storeName, fencingToken }, fencingToken, ...extra });

    expect(await write("redis-main", REDIS_TOKEN)).toEqual({ accepted: true, fencingToken: REDIS_TOKEN });
    expect(await write("pg-main", PG_TOKEN)).toEqual({ accepted: true, fencingToken: PG_TOKEN });
    // Within one store the fence still works.
    expect(await write("pg-main", "20416")).toEqual({ accepted: false, seenToken: PG_TOKEN });
    expect(await write("redis-main", "1795666012345677")).toEqual({ accepted: false, seenToken: REDIS_TOKEN });

    const { rows } = await pool.query<{ key: string; token: string }>(`SELECT key, fencing_token::text AS token FROM ${table} ORDER BY key`);
    expect(rows).toEqual([
      { key: "pg-main/tenant_1", token: PG_TOKEN },
      { key: "redis-main/tenant_1", token: REDIS_TOKEN },
    ]);
    expect(fencedKey("pg-main", "tenant_1")).toBe("pg-main/tenant_1");

    // Unscoped (one key for both stores, the old behaviour) the Postgres holder loses to a token it never competed with.
    expect(await write("redis-main", REDIS_TOKEN, { key: "shared", scopeToStore: false })).toMatchObject({ accepted: true });
    expect(await write("pg-main", PG_TOKEN, { key: "shared", scopeToStore: false })).toEqual({ accepted: false, seenToken: REDIS_TOKEN });
  });

  it("refuses a write from a store of another kind under a name whose rows another kind wrote, and changes nothing", async () => {
    await createFencedTable({ pool, table, history: true });
    const [pgFixture, redisFixture] = [await createStoreFixture("postgres"), await createStoreFixture("redis")];
    try {
      // Two stores configured with one name: a Redis token (µs) would beat every Postgres one.
      const asNamed = <S extends { name: string }>(store: S) => Object.assign(Object.create(store) as S, { name: "ledger-store" });
      const [pgStore, redisStore] = [asNamed(pgFixture.store), asNamed(redisFixture.store)];
      const pgLease = await pgStore.acquire({ resource: "tenant_1:ledger", owner: "pg", task: "t", ttlMs: 60_000 });
      const redisLease = await redisStore.acquire({ resource: "tenant_1:ledger", owner: "redis", task: "t", ttlMs: 60_000 });
      if (!pgLease.acquired || !redisLease.acquired) throw new Error("expected both acquires to succeed");
      const write = (store: LeaseStore, fencingToken: string) =>
        fencedWrite({ ...base, storeName: undefined, pool, table, history: true, store, value: { fencingToken }, fencingToken });

      expect(await write(pgStore, pgLease.lease.fencingToken)).toMatchObject({ accepted: true });
      const mixed = await write(redisStore, redisLease.lease.fencingToken).then(
        (r) => r,
        (e: unknown) => e,
      );
      expect(mixed).toBeInstanceOf(LeaseError);
      expect((mixed as LeaseError).code).toBe("misconfigured");
      expect((mixed as LeaseError).message).toMatch(/postgres store named "ledger-store".*redis store/);
      const { rows } = await pool.query<{ token: string }>(`SELECT fencing_token::text AS token FROM ${table}`);
      expect(rows).toEqual([{ token: pgLease.lease.fencingToken }]);
      expect((await readFencedHistory({ pool, table })).map((h) => h.fencingToken)).toEqual([pgLease.lease.fencingToken]);
      // The kind that wrote first goes on.
      expect(await write(pgStore, pgLease.lease.fencingToken)).toMatchObject({ accepted: true });
    } finally {
      await pgFixture.cleanup();
      await redisFixture.cleanup();
    }
  });

  it("reads one store's history back under the keys its writers gave", async () => {
    await createFencedTable({ pool, table, history: true });
    // "_" would be a LIKE wildcard: pg_a's history must not pick up pgxa's rows.
    for (const [storeName, token] of [["pg_a", "1"], ["pgxa", "2"], ["pg_a", "3"]] as const) {
      expect((await fencedWrite({ ...base, pool, table, history: true, storeName, value: 1, fencingToken: token })).accepted).toBe(true);
    }
    expect((await readFencedHistory({ pool, table, store: "pg_a" })).map((h) => [h.key, h.fencingToken])).toEqual([
      ["tenant_1", "1"],
      ["tenant_1", "3"],
    ]);
    expect((await readFencedHistory({ pool, table, store: { name: "pgxa" } })).map((h) => [h.key, h.fencingToken])).toEqual([["tenant_1", "2"]]);
    expect((await readFencedHistory({ pool, table })).map((h) => h.key)).toEqual(["pg_a/tenant_1", "pgxa/tenant_1", "pg_a/tenant_1"]);
  });
});

describe.each(["postgres", "redis"] as const)("fencing rejection recorded on the %s store", (kind) => {
  let fixture: StoreFixture;
  beforeEach(async () => {
    fixture = await createStoreFixture(kind);
  });
  afterEach(async () => {
    await fixture.cleanup();
  });

  it("a refused write records fencing_rejected with both tokens", async () => {
    const { store } = fixture;
    await createFencedTable({ pool, table });
    const resource = "tenant_9:ledger";
    const old = await store.acquire({ resource, owner: "w-old", task: "t", ttlMs: 100 });
    if (!old.acquired) throw new Error("first acquire must succeed");
    await new Promise((r) => setTimeout(r, 150));
    const next = await store.acquire({ resource, owner: "w-new", task: "t", ttlMs: 5_000 });
    if (!next.acquired) throw new Error("takeover after expiry must succeed");
    expect(BigInt(next.lease.fencingToken) > BigInt(old.lease.fencingToken)).toBe(true);

    const write = (token: string, owner: string) =>
      fencedWrite({ pool, table, key: resource, value: { owner }, fencingToken: token, resource, store, by: "ledger-db", owner, task: "t" });
    expect((await write(next.lease.fencingToken, "w-new")).accepted).toBe(true);
    const stale = await write(old.lease.fencingToken, "w-old");
    expect(stale).toMatchObject({ accepted: false, seenToken: next.lease.fencingToken });
    if (stale.accepted) return;
    expect(stale.event).toMatchObject({ kind: "fencing_rejected", resource, fencingToken: old.lease.fencingToken });

    const events = await store.events({ resource, kinds: ["fencing_rejected"] });
    expect(events.items).toHaveLength(1);
    expect(events.items[0]).toMatchObject({ kind: "fencing_rejected", fencingToken: old.lease.fencingToken });
  });
});
